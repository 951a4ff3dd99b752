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
