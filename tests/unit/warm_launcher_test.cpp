// The warm launcher: runs forked from a fork server give what a fresh process gives, the
// fallbacks are taken and named, a hanging forked run is killed at its timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "measure/warm_launcher.h"
#include "process/fork_protocol.h"
#include "process/runner.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {

// pyenv's python3 has no torch, so the server starts in well under a second here.
std::string test_python() {
    auto p = find_executable("python3");
    return p.string();
}

fs::path write_script(const fs::path& dir, const std::string& name, const std::string& text) {
    fs::path p = dir / name;
    std::ofstream(p) << text;
    return p;
}

const char* echo_script = R"(import json, os, sys
print("note on stderr", file=sys.stderr)
print(json.dumps({"ms": 2.5, "ok": True, "argv": sys.argv[1:], "role": os.environ.get("HOTKERNEL_ROLE"),
                  "index": os.environ.get("HOTKERNEL_RUN_INDEX"), "name": __name__, "path0": sys.path[0],
                  "cwd": os.getcwd(), "stdin": sys.stdin.read(), "ppid_differs": os.getppid() != 1}))
)";

run_request request(const fs::path& script, double timeout_s = 30) {
    run_request r;
    r.script = script;
    r.args = {"--size", "4 k"};
    r.role = "candidate";
    r.index = 2;
    r.total = 3;
    r.python = test_python();
    r.timeout_s = timeout_s;
    return r;
}

/// A runner that can run but cannot keep sessions (like a replaying test runner).
struct sessionless_runner final : process_runner {
    using process_runner::run;
    process_result run(const process_spec& spec, const cancel_token& cancel) override { return m_real.run(spec, cancel); }
    posix_runner m_real;
};

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

TEST(warm_launcher, a_forked_run_matches_a_fresh_one) {
    auto dir = make_temp_dir("hk-warm-test");
    auto script = write_script(dir, "echo.py", echo_script);
    posix_runner runner;
    fresh_process_launcher fresh;
    auto warm = make_warm_launcher(std::make_unique<fresh_process_launcher>(), true);
    EXPECT_EQ(warm->name(), "warm-fork");
    auto req = request(script);
    auto a = fresh.launch(req, runner, {}).process;
    auto b = warm->launch(req, runner, {}).process;
    auto c = warm->launch(req, runner, {}).process;
    ASSERT_TRUE(a.ok()) << a.describe() << a.stderr_text;
    ASSERT_TRUE(b.ok()) << b.describe() << b.stderr_text;
    ASSERT_TRUE(c.ok()) << c.describe() << c.stderr_text;
    EXPECT_EQ(a.stdout_text, b.stdout_text);
    EXPECT_EQ(b.stdout_text, c.stdout_text);
    EXPECT_EQ(a.stderr_text, b.stderr_text);
    EXPECT_NE(b.stdout_text.find("\"name\": \"__main__\""), std::string::npos) << b.stdout_text;
    EXPECT_NE(b.stdout_text.find("\"role\": \"candidate\""), std::string::npos);
    EXPECT_EQ(warm->name(), "warm-fork");
    EXPECT_NE(warm->reason().find("forked"), std::string::npos) << warm->reason();
    auto d = warm->describe();
    EXPECT_EQ(d["warm_runs"], 2);
    EXPECT_EQ(d["fresh_runs"], 0);
    EXPECT_EQ(warm->command(req), fresh.command(req));  // the record names the same command
    fs::remove_all(dir);
}

TEST(warm_launcher, exit_codes_and_stdin_and_the_result_channel_come_through) {
    auto dir = make_temp_dir("hk-warm-test");
    auto script = write_script(dir, "chan.py", R"(import os, sys
data = sys.stdin.read()
os.write(int(os.environ["HOTKERNEL_RESULT_FD"]), ("chan:" + data).encode())
print("out")
sys.exit(7)
)");
    posix_runner runner;
    auto warm = make_warm_launcher(std::make_unique<fresh_process_launcher>(), true);
    // A launcher that asks for stdin and a result channel, as the trusted runner does.
    struct channel_launcher final : run_launcher {
        std::string name() const override { return "trusted-test"; }
        std::vector<std::string> command(const run_request& r) const override { return {r.python, r.script.string()}; }
        run_answer launch(const run_request& r, process_runner& pr, const cancel_token& c) override {
            process_spec s{.argv = command(r), .timeout_s = r.timeout_s, .stdin_data = "secret-input", .result_channel = true};
            return run_answer{.process = pr.run(s, c), .line_text = {}, .source = line_source::channel};
        }
    };
    auto composed = make_warm_launcher(std::make_unique<channel_launcher>(), true);
    auto res = composed->launch(request(script), runner, {}).process;
    EXPECT_EQ(res.exit_code, 7);
    EXPECT_EQ(res.stdout_text, "out\n");
    EXPECT_EQ(res.channel_text, "chan:secret-input");
    EXPECT_EQ(composed->name(), "trusted-test+warm-fork");
    fs::remove_all(dir);
}

TEST(warm_launcher, no_warm_means_fresh_and_says_so) {
    auto dir = make_temp_dir("hk-warm-test");
    auto script = write_script(dir, "echo.py", echo_script);
    posix_runner runner;
    auto warm = make_warm_launcher(std::make_unique<fresh_process_launcher>(), false);
    auto res = warm->launch(request(script), runner, {}).process;
    EXPECT_TRUE(res.ok()) << res.stderr_text;
    EXPECT_EQ(warm->name(), "fresh-process");
    EXPECT_NE(warm->reason().find("--no-warm"), std::string::npos);
    EXPECT_EQ(warm->describe()["fresh_runs"], 1);
    fs::remove_all(dir);
}

TEST(warm_launcher, a_runner_without_sessions_falls_back_and_names_why) {
    auto dir = make_temp_dir("hk-warm-test");
    auto script = write_script(dir, "echo.py", echo_script);
    sessionless_runner runner;
    auto warm = make_warm_launcher(std::make_unique<fresh_process_launcher>(), true);
    auto res = warm->launch(request(script), runner, {}).process;
    EXPECT_TRUE(res.ok()) << res.stderr_text;
    EXPECT_EQ(warm->name(), "fresh-process");
    EXPECT_NE(warm->reason().find("cannot keep"), std::string::npos) << warm->reason();
    fs::remove_all(dir);
}

TEST(warm_launcher, a_missing_interpreter_falls_back_to_the_fresh_error) {
    auto dir = make_temp_dir("hk-warm-test");
    auto script = write_script(dir, "echo.py", echo_script);
    posix_runner runner;
    auto warm = make_warm_launcher(std::make_unique<fresh_process_launcher>(), true);
    auto req = request(script);
    req.python = "/nonexistent/python3";
    auto res = warm->launch(req, runner, {}).process;
    EXPECT_TRUE(res.spawn_failed);  // the fresh path reports it as it always does
    EXPECT_NE(warm->reason().find("could not be started"), std::string::npos) << warm->reason();
    fs::remove_all(dir);
}

TEST(warm_launcher, startup_only_variables_make_that_run_fresh) {
    auto dir = make_temp_dir("hk-warm-test");
    auto script = write_script(dir, "echo.py", echo_script);
    posix_runner runner;
    auto warm = make_warm_launcher(std::make_unique<fresh_process_launcher>(), true);
    auto req = request(script);
    req.env["PYTHONHASHSEED"] = "0";
    auto res = warm->launch(req, runner, {}).process;
    EXPECT_TRUE(res.ok()) << res.stderr_text;
    EXPECT_EQ(warm->name(), "fresh-process");
    EXPECT_NE(warm->reason().find("PYTHONHASHSEED"), std::string::npos) << warm->reason();
    fs::remove_all(dir);
}

TEST(warm_launcher, a_hanging_forked_run_is_killed_at_its_timeout) {
    auto dir = make_temp_dir("hk-warm-test");
    auto marker = dir / "survivor";
    auto script = write_script(dir, "hang.py", "import subprocess, time\nprint('started', flush=True)\n"
                                               "subprocess.Popen(['sh', '-c', 'sleep 3; touch " + marker.string() +
                                               "'])\ntime.sleep(60)\n");
    posix_runner runner;
    auto warm = make_warm_launcher(std::make_unique<fresh_process_launcher>(), true);
    auto req = request(script, 1.0);
    auto t0 = std::chrono::steady_clock::now();
    auto res = warm->launch(req, runner, {}).process;
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(res.timed_out) << res.describe();
    EXPECT_EQ(warm->name(), "warm-fork");
    EXPECT_LT(took, 8.0);
    EXPECT_NE(res.stdout_text.find("started"), std::string::npos);
    // The server survives and serves the next run.
    auto ok_script = write_script(dir, "echo.py", echo_script);
    auto next = warm->launch(request(ok_script), runner, {}).process;
    EXPECT_TRUE(next.ok()) << next.describe() << next.stderr_text;
    EXPECT_EQ(warm->describe()["warm_runs"], 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    EXPECT_FALSE(fs::exists(marker)) << "a grandchild of a timed-out forked run survived";
    fs::remove_all(dir);
}

TEST(warm_launcher, cancellation_stops_a_forked_run) {
    auto dir = make_temp_dir("hk-warm-test");
    auto script = write_script(dir, "hang.py", "import time\ntime.sleep(60)\n");
    posix_runner runner;
    auto warm = make_warm_launcher(std::make_unique<fresh_process_launcher>(), true);
    cancel_token tok;
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        tok.cancel();
    });
    auto res = warm->launch(request(script), runner, tok).process;
    t.join();
    EXPECT_TRUE(res.cancelled);
    fs::remove_all(dir);
}

TEST(warm_launcher, the_server_imports_torch_only_for_scripts_that_name_it) {
    auto dir = make_temp_dir("hk-warm-test");
    auto plain = write_script(dir, "plain.py", echo_script);
    // Names torch only in a comment: pyenv's python3 has no torch, so the server tries and says so.
    auto heavy = write_script(dir, "heavy.py", std::string("# uses torch\n") + echo_script);
    posix_runner runner;
    auto warm = make_warm_launcher(std::make_unique<fresh_process_launcher>(), true);
    ASSERT_TRUE(warm->launch(request(plain), runner, {}).process.ok());
    EXPECT_NE(warm->reason().find("names neither"), std::string::npos) << warm->reason();
    // The light server is replaced by one that imports torch once a script needs it.
    ASSERT_TRUE(warm->launch(request(heavy), runner, {}).process.ok());
    EXPECT_NE(warm->reason().find("there is none in this interpreter"), std::string::npos) << warm->reason();
    EXPECT_EQ(warm->name(), "warm-fork");
    fs::remove_all(dir);
}
