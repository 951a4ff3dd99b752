// The process runner: timeouts kill the whole group, output is bounded, the private
// result channel is separate from stdout, and failures are described, never thrown.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "process/runner.h"

using namespace hotkernel;

TEST(posix_runner, captures_stdout_stderr_and_exit_code) {
    posix_runner r;
    auto res = r.run({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
    EXPECT_EQ(res.exit_code, 3);
    EXPECT_EQ(res.stdout_text, "out\n");
    EXPECT_EQ(res.stderr_text, "err\n");
    EXPECT_FALSE(res.ok());
    EXPECT_EQ(res.describe(), "exited with status 3");
}

TEST(posix_runner, missing_program_is_a_spawn_failure_not_an_exception) {
    posix_runner r;
    auto res = r.run({.argv = {"definitely-not-a-program-hk"}});
    EXPECT_TRUE(res.spawn_failed);
    EXPECT_NE(res.describe().find("not found"), std::string::npos);
}

TEST(posix_runner, timeout_kills_the_whole_process_group) {
    posix_runner r;
    auto marker = std::filesystem::temp_directory_path() / ("hk-grandchild-" + std::to_string(::getpid()));
    std::filesystem::remove(marker);
    // The grandchild would write the marker after 3 s if it survived the group kill.
    process_spec spec{.argv = {"sh", "-c", "(sleep 3; touch " + marker.string() + ") & sleep 30"}};
    spec.timeout_s = 0.5;
    spec.kill_grace_s = 0.2;
    auto t0 = std::chrono::steady_clock::now();
    auto res = r.run(spec);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(res.timed_out);
    EXPECT_LT(took, 5.0);
    EXPECT_NE(res.describe(0.5).find("timed out"), std::string::npos);
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    EXPECT_FALSE(std::filesystem::exists(marker)) << "a grandchild outlived the timeout";
}

TEST(posix_runner, a_child_that_ignores_sigterm_is_killed_after_the_grace) {
    posix_runner r;
    process_spec spec{.argv = {"sh", "-c", "trap '' TERM; sleep 20"}};
    spec.timeout_s = 0.3;
    spec.kill_grace_s = 0.3;
    auto res = r.run(spec);
    EXPECT_TRUE(res.timed_out);
    EXPECT_LT(res.wall_s, 5.0);
}

TEST(posix_runner, output_is_bounded_to_the_tail) {
    posix_runner r;
    process_spec spec{.argv = {"sh", "-c", "head -c 5000000 /dev/zero | tr '\\0' x; echo; echo LAST"}};
    spec.max_capture_bytes = 1000;
    auto res = r.run(spec);
    EXPECT_TRUE(res.ok());
    EXPECT_TRUE(res.stdout_truncated);
    EXPECT_LE(res.stdout_text.size(), 1000u);
    EXPECT_NE(res.stdout_text.find("LAST"), std::string::npos);
}

TEST(posix_runner, result_channel_is_private_and_separate_from_stdout) {
    posix_runner r;
    process_spec spec{.argv = {"bash", "-c", "echo visible; echo secret >&$HOTKERNEL_RESULT_FD"}};
    spec.result_channel = true;
    auto res = r.run(spec);
    EXPECT_TRUE(res.ok()) << res.describe() << res.stderr_text;
    EXPECT_EQ(res.stdout_text, "visible\n");
    EXPECT_EQ(res.channel_text, "secret\n");
}

TEST(posix_runner, cancellation_stops_the_child) {
    posix_runner r;
    cancel_token tok;
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        tok.cancel();
    });
    auto res = r.run({.argv = {"sleep", "20"}, .kill_grace_s = 0.2}, tok);
    t.join();
    EXPECT_TRUE(res.cancelled);
    EXPECT_LT(res.wall_s, 5.0);
}

TEST(posix_runner, stdin_data_reaches_the_child_and_env_is_set) {
    posix_runner r;
    process_spec spec{.argv = {"sh", "-c", "cat; echo $HK_TEST_VAR"}};
    spec.stdin_data = "hello\n";
    spec.env_set["HK_TEST_VAR"] = "42";
    auto res = r.run(spec);
    EXPECT_EQ(res.stdout_text, "hello\n42\n");
}

TEST(process_runner, submit_poll_result) {
    posix_runner r;
    auto id = r.submit({.argv = {"sh", "-c", "sleep 0.2; echo done"}});
    auto res = r.result(id);
    EXPECT_EQ(res.stdout_text, "done\n");
}

// ---- interactive sessions (the warm fork server's transport) ----------------------------

TEST(posix_session, lines_go_in_and_come_back_from_stdout_and_the_channel) {
    posix_runner r;
    process_spec spec{.argv = {"bash", "-c", "while read l; do echo \"out:$l\"; echo \"chan:$l\" >&$HOTKERNEL_RESULT_FD; done"}};
    spec.result_channel = true;
    std::string err;
    auto s = r.start(spec, &err);
    ASSERT_TRUE(s) << err;
    EXPECT_TRUE(s->alive());
    ASSERT_TRUE(s->write_line("one"));
    // Channel lines come first when both are ready; each is read once, without its newline.
    std::vector<std::pair<std::string, bool>> got;
    for (int i = 0; i < 2; ++i) {
        auto l = s->read_line(5.0);
        ASSERT_TRUE(l.has_value());
        got.emplace_back(l->text, l->from_channel);
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got[0], std::make_pair(std::string("chan:one"), true));
    EXPECT_EQ(got[1], std::make_pair(std::string("out:one"), false));
    ASSERT_TRUE(s->write_line("two"));
    auto a = s->read_line(5.0);
    ASSERT_TRUE(a.has_value());
    EXPECT_NE(a->text.find("two"), std::string::npos);
}

TEST(posix_session, read_line_times_out_without_blocking) {
    posix_runner r;
    std::string err;
    auto s = r.start({.argv = {"sleep", "30"}}, &err);
    ASSERT_TRUE(s) << err;
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(s->read_line(0.3).has_value());
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(took, 0.25);
    EXPECT_LT(took, 2.0);
    EXPECT_TRUE(s->alive());
}

TEST(posix_session, read_line_honours_cancellation) {
    posix_runner r;
    std::string err;
    auto s = r.start({.argv = {"sleep", "30"}}, &err);
    ASSERT_TRUE(s) << err;
    cancel_token tok;
    tok.cancel();
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(s->read_line(10.0, tok).has_value());
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

TEST(posix_session, exit_is_seen_and_described_and_stderr_is_kept) {
    posix_runner r;
    std::string err;
    auto s = r.start({.argv = {"sh", "-c", "echo last-words >&2; printf 'no newline'; exit 4"}}, &err);
    ASSERT_TRUE(s) << err;
    auto l = s->read_line(5.0);
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ(l->text, "no newline");  // a final partial line is still delivered
    EXPECT_FALSE(s->read_line(2.0).has_value());
    for (int i = 0; i < 100 && s->alive(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(s->alive());
    EXPECT_EQ(s->describe_exit(), "exited with status 4");
    EXPECT_NE(s->stderr_tail().find("last-words"), std::string::npos);
    EXPECT_FALSE(s->write_line("anyone?"));
}

TEST(posix_session, missing_program_fails_to_start_with_a_reason) {
    posix_runner r;
    std::string err;
    auto s = r.start({.argv = {"definitely-not-a-program-hk"}}, &err);
    EXPECT_FALSE(s);
    EXPECT_NE(err.find("not found"), std::string::npos);
}

TEST(posix_session, destroying_the_session_kills_its_whole_group) {
    posix_runner r;
    auto marker = std::filesystem::temp_directory_path() / ("hk-session-grandchild-" + std::to_string(::getpid()));
    std::filesystem::remove(marker);
    std::string err;
    {
        // The child ignores SIGTERM and has a grandchild that would write the marker later.
        process_spec spec{.argv = {"sh", "-c", "trap '' TERM; (sleep 2; touch " + marker.string() + ") & sleep 30"}};
        spec.kill_grace_s = 0.2;
        auto s = r.start(spec, &err);
        ASSERT_TRUE(s) << err;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        auto t0 = std::chrono::steady_clock::now();
        s.reset();
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    EXPECT_FALSE(std::filesystem::exists(marker)) << "a grandchild outlived its session";
}

TEST(posix_session, terminate_is_idempotent_and_describes_the_signal) {
    posix_runner r;
    std::string err;
    auto s = r.start({.argv = {"sleep", "30"}, .kill_grace_s = 0.5}, &err);
    ASSERT_TRUE(s) << err;
    s->terminate();
    s->terminate();
    EXPECT_FALSE(s->alive());
    EXPECT_EQ(s->describe_exit(), "was killed by signal 15 (SIGTERM)");
}

TEST(posix_session, a_whole_life_limit_ends_the_session) {
    posix_runner r;
    std::string err;
    process_spec spec{.argv = {"sleep", "30"}, .timeout_s = 0.3, .kill_grace_s = 0.2};
    auto s = r.start(spec, &err);
    ASSERT_TRUE(s) << err;
    EXPECT_FALSE(s->read_line(3.0).has_value());
    EXPECT_FALSE(s->alive());
}

TEST(process_runner, a_runner_without_sessions_says_so) {
    struct replay_runner final : process_runner {
        using process_runner::run;
        process_result run(const process_spec&, const cancel_token&) override { return {}; }
    } r;
    std::string err;
    EXPECT_FALSE(r.start({.argv = {"true"}}, &err));
    EXPECT_NE(err.find("cannot keep"), std::string::npos);
}
