// The fork-server runner: a hanging forked run is killed at its timeout with what it left
// behind, cancellation stops one and keeps the server, and a pool hands one call's server to the next.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "process/fork_protocol.h"
#include "process/fork_server_runner.h"
#include "python/interpreter.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {

// pyenv's python3 has no torch, so the server starts in well under a second here.
std::string test_python() { return find_executable("python3").string(); }

fs::path write_script(const fs::path& dir, const std::string& name, const std::string& text) {
    fs::path p = dir / name;
    std::ofstream(p) << text;
    return p;
}

fork_server_runner::options runner_options(fork_server_pool* pool = nullptr) {
    return {.server_script = [] { return embedded_python_dir() / "hotkernel_forkserver.py"; }, .pool = pool};
}

process_spec python_spec(const fs::path& script, double timeout_s = 30) {
    return process_spec{.argv = {test_python(), script.string()}, .timeout_s = timeout_s};
}

const char* pid_script = "import os\nprint(os.getppid())\n";

}  // namespace

TEST(base64, round_trips_every_byte) {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (std::size_t n : {0u, 1u, 2u, 3u, 4u, 5u, 256u}) {
        std::string s = all.substr(0, n);
        EXPECT_EQ(base64_decode(base64_encode(s)), s) << n;
    }
    EXPECT_EQ(base64_encode("hot"), "aG90");
    EXPECT_EQ(base64_encode("ho"), "aG8=");
    EXPECT_EQ(base64_decode("aG8="), "ho");
}

TEST(fork_server_runner, a_hanging_forked_run_is_killed_at_its_timeout) {
    auto dir = make_temp_dir("hk-warm-test");
    auto marker = dir / "survivor";
    auto script = write_script(dir, "hang.py", "import subprocess, time\nprint('started', flush=True)\n"
                                               "subprocess.Popen(['sh', '-c', 'sleep 3; touch " + marker.string() +
                                               "'])\ntime.sleep(60)\n");
    posix_runner real;
    fork_server_runner runner(real, runner_options());
    auto t0 = std::chrono::steady_clock::now();
    auto res = runner.run(python_spec(script, 1.0));
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(res.timed_out) << res.describe();
    EXPECT_TRUE(runner.stats().last_warm) << runner.stats().disabled_reason;
    EXPECT_LT(took, 8.0);
    EXPECT_NE(res.stdout_text.find("started"), std::string::npos);
    // The server survives and serves the next run.
    auto ok_script = write_script(dir, "pid.py", pid_script);
    auto next = runner.run(python_spec(ok_script));
    EXPECT_TRUE(next.ok()) << next.describe() << next.stderr_text;
    EXPECT_EQ(runner.stats().warm_runs, 2u);
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    EXPECT_FALSE(fs::exists(marker)) << "a grandchild of a timed-out forked run survived";
    fs::remove_all(dir);
}

TEST(fork_server_runner, cancellation_stops_a_forked_run) {
    auto dir = make_temp_dir("hk-warm-test");
    auto script = write_script(dir, "hang.py", "import time\ntime.sleep(60)\n");
    posix_runner real;
    fork_server_runner runner(real, runner_options());
    cancel_token tok;
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        tok.cancel();
    });
    auto res = runner.run(python_spec(script), tok);
    t.join();
    EXPECT_TRUE(res.cancelled);
    fs::remove_all(dir);
}

TEST(fork_server_runner, a_cancelled_run_ends_alone_and_the_server_stays_warm) {
    auto dir = make_temp_dir("hk-warm-test");
    auto marker = dir / "survivor";
    // The run prints its server's pid, starts a grandchild in its group, and hangs.
    auto script = write_script(dir, "hang.py", "import os, subprocess, time\nprint(os.getppid(), flush=True)\n"
                                               "subprocess.Popen(['sh', '-c', 'sleep 3; touch " + marker.string() +
                                               "'])\ntime.sleep(60)\n");
    auto pid = write_script(dir, "pid.py", pid_script);
    posix_runner real;
    fork_server_pool pool(600);
    std::string server;
    {
        fork_server_runner runner(real, runner_options(&pool));
        auto first = runner.run(python_spec(pid));
        ASSERT_TRUE(first.ok()) << first.describe() << first.stderr_text;
        server = first.stdout_text;
        cancel_token tok;
        std::thread t([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(1000));
            tok.cancel();
        });
        const auto t0 = std::chrono::steady_clock::now();
        auto res = runner.run(python_spec(script), tok);
        t.join();
        EXPECT_TRUE(res.cancelled) << res.describe();
        EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(6));
        EXPECT_EQ(res.stdout_text, server) << "the cancelled run was not forked from the warm server";
        // The same runner forks its next run from the same server.
        auto next = runner.run(python_spec(pid));
        ASSERT_TRUE(next.ok()) << next.describe() << next.stderr_text;
        EXPECT_EQ(next.stdout_text, server);
        EXPECT_TRUE(runner.stats().last_warm);
    }
    // And the next call (a new runner on the pool, as the next tools/call gets) too.
    fork_server_runner runner(real, runner_options(&pool));
    auto later = runner.run(python_spec(pid));
    ASSERT_TRUE(later.ok()) << later.describe() << later.stderr_text;
    EXPECT_TRUE(runner.stats().server_reused);
    EXPECT_EQ(later.stdout_text, server) << "cancellation ended the pooled server";
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    EXPECT_FALSE(fs::exists(marker)) << "a grandchild of the cancelled run survived";
    fs::remove_all(dir);
}

TEST(fork_server_runner, a_pool_hands_one_runners_server_to_the_next) {
    auto dir = make_temp_dir("hk-warm-test");
    auto script = write_script(dir, "pid.py", pid_script);
    posix_runner real;
    fork_server_pool pool(600);
    std::string first_server;
    {
        fork_server_runner runner(real, runner_options(&pool));
        auto res = runner.run(python_spec(script));
        ASSERT_TRUE(res.ok()) << res.describe() << res.stderr_text;
        EXPECT_TRUE(runner.stats().last_warm) << runner.stats().disabled_reason;
        EXPECT_FALSE(runner.stats().server_reused);
        EXPECT_FALSE(runner.stats().server_kept);  // with a pool, no socket server
        first_server = res.stdout_text;            // the forked child's parent: the server
    }
    fork_server_runner runner(real, runner_options(&pool));
    auto res = runner.run(python_spec(script));
    ASSERT_TRUE(res.ok()) << res.describe() << res.stderr_text;
    EXPECT_TRUE(runner.stats().server_reused);
    EXPECT_EQ(res.stdout_text, first_server) << "the second runner did not fork from the pooled server";
    fs::remove_all(dir);
}
