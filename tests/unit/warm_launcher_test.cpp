// The warm launcher: runs forked from a fork server give what a fresh process gives, and the
// fallbacks are taken and named (the runner's own behaviour: fork_server_runner_test.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "measure/warm_launcher.h"
#include "process/runner.h"
#include "util/files.h"
#include "util/words.h"

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

/// A runner that can run but cannot start sessions (like a replaying test runner).
struct sessionless_runner final : process_runner {
    using process_runner::run;
    process_result run(const process_spec& spec, const cancel_token& cancel) override { return m_real.run(spec, cancel); }
    posix_runner m_real;
};

}  // namespace

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
    // A launcher that asks for stdin and a result channel, as the trusted launcher does.
    struct channel_launcher final : run_launcher {
        std::string name() const override { return "trusted-test"; }
        std::vector<std::string> command(const run_request& r) const override { return {r.python, r.script.string()}; }
        run_answer launch(const run_request& r, process_runner& pr, const cancel_token& c) override {
            process_spec s{.argv = command(r), .timeout_s = r.timeout_s, .stdin_data = "secret-input", .result_channel = true};
            return run_answer{.process = pr.run(s, c), .line = {}, .source = line_source::channel, .voided = {}};
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
    EXPECT_NE(render_words(warm->reason(), front_end::cli).find("--no-warm"), std::string::npos);
    EXPECT_NE(render_words(warm->reason(), front_end::mcp).find("warm: false"), std::string::npos);
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

TEST(warm_launcher, a_server_killed_during_a_run_is_replaced_and_that_run_is_not_trusted) {
    // A private server (kept ones off), killed by the first run forked from it.
    const char* old = std::getenv("HOTKERNEL_KEEP_WARM_S");
    const std::string saved = old ? old : "";
    ::setenv("HOTKERNEL_KEEP_WARM_S", "0", 1);
    auto dir = make_temp_dir("hk-warm-test");
    auto script = write_script(dir, "killer.py", R"(import json, os, signal, sys
marker = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "killed")
with open("/proc/%d/cmdline" % os.getppid(), "rb") as f:
    forked = b"hotkernel_forkserver.py" in f.read()
if forked and not os.path.exists(marker):
    open(marker, "w").close()
    os.kill(os.getppid(), signal.SIGKILL)
print("a script may print more than its result line")
print(json.dumps({"ms": 1.0, "ok": True, "status": "ok", "forked": forked}))
)");
    posix_runner runner;
    auto warm = make_warm_launcher(std::make_unique<fresh_process_launcher>(), true);
    run_answer first = warm->launch(request(script), runner, {});
    EXPECT_TRUE(first.process.ok()) << first.process.stderr_text;
    const json& line = first.line.line;
    EXPECT_EQ(line["forked"], false);  // repeated as a fresh process
    EXPECT_EQ(line["status"], "ok");   // what the script said, as it said it...
    ASSERT_EQ(first.voided.size(), 1u);  // ... voided by hotkernel, whatever else the script printed
    EXPECT_NE(first.voided[0].find("the fork server was killed by signal 9"), std::string::npos) << first.voided[0];
    ASSERT_EQ(warm->warnings().size(), 1u);
    EXPECT_EQ(warm->warnings()[0].id, finding_id::fork_server_restarted);
    EXPECT_NE(warm->warnings()[0].message.find("candidate run 2 of 3"), std::string::npos);
    // The next run forks from a new server, started from scratch.
    run_answer second = warm->launch(request(script), runner, {});
    const json& again = second.line.line;
    EXPECT_EQ(again["forked"], true);
    EXPECT_EQ(again["status"], "ok");
    EXPECT_TRUE(second.voided.empty());
    EXPECT_EQ(warm->name(), "warm-fork");
    EXPECT_EQ(warm->warnings().size(), 1u);
    fs::remove_all(dir);
    if (old) ::setenv("HOTKERNEL_KEEP_WARM_S", saved.c_str(), 1);
    else ::unsetenv("HOTKERNEL_KEEP_WARM_S");
}
