// The scripted runner: what bench/verify see from it must be what real runs would give them.
#include <gtest/gtest.h>

#include "measure/measure.h"
#include "measure/trusted_launcher.h"
#include "process/fake_runner.h"
#include "util/errors.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {

process_spec plain(const std::string& file, const std::string& role, int index, bool warmup = false) {
    process_spec s;
    s.argv = {"python3", "/some/dir/" + file};
    s.env_set = {{"HOTKERNEL_ROLE", role}, {"HOTKERNEL_RUN_INDEX", std::to_string(index)},
                 {"HOTKERNEL_WARMUP", warmup ? "1" : "0"}};
    s.timeout_s = 5;
    return s;
}

json two_scripts() {
    return json{{"seed", 3},
                {"programs", {{"nvidia-smi", {{"spawn_failed", true}}}}},
                {"scripts",
                 {{"b.py", {{"ms", {{"mean", 1.0}, {"sd", 0.1}}}, {"line", {{"ok", true}, {"seed", 0}}},
                            {"stdout_before", "warming up ...\n"},
                            {"runs", {{"3", {{"exit_code", 1}, {"stderr", "ZeroDivisionError: boom"}}},
                                      {"warmup 1", {{"line", {{"ok", false}}}}}}}}},
                  {"h.py", {{"hang", true}}}}}};
}

}  // namespace

TEST(fake_runner, draws_each_run_from_its_role_and_index_the_same_way_every_time) {
    fake_runner a(two_scripts()), b(two_scripts());
    const process_result r1 = a.run(plain("b.py", "baseline", 1));
    const process_result r2 = a.run(plain("b.py", "baseline", 2));
    EXPECT_EQ(r1.stdout_text, b.run(plain("b.py", "baseline", 1)).stdout_text);  // order-independent
    EXPECT_NE(r1.stdout_text, r2.stdout_text);
    EXPECT_TRUE(r1.ok());
    const run_line l = parse_run_line(r1.stdout_text);
    ASSERT_TRUE(l.valid()) << r1.stdout_text;
    EXPECT_EQ(l.ok, true);
    EXPECT_GT(l.ms, 0.5);
    EXPECT_LT(l.ms, 1.5);
    EXPECT_EQ(r1.stdout_text.rfind("warming up ...\n", 0), 0u);
}

TEST(fake_runner, per_run_overrides_give_exit_codes_stderr_and_failed_checks) {
    fake_runner f(two_scripts());
    const process_result crash = f.run(plain("b.py", "candidate", 3));
    EXPECT_EQ(crash.exit_code, 1);
    EXPECT_EQ(crash.stderr_text, "ZeroDivisionError: boom");
    EXPECT_EQ(crash.describe(), "exited with status 1");
    const run_line warm = parse_run_line(f.run(plain("b.py", "candidate", 1, true)).stdout_text);
    EXPECT_EQ(warm.ok, false);
    EXPECT_EQ(parse_run_line(f.run(plain("b.py", "candidate", 1)).stdout_text).ok, true);
}

TEST(fake_runner, fails_to_start_what_it_has_no_entry_for_and_what_it_is_told_to) {
    fake_runner f(two_scripts());
    process_spec smi;
    smi.argv = {"nvidia-smi", "--query-gpu=name"};
    EXPECT_TRUE(f.run(smi).spawn_failed);
    EXPECT_TRUE(f.run(plain("other.py", "bench", 1)).spawn_failed);
    EXPECT_EQ(f.calls().size(), 2u);
}

TEST(fake_runner, a_hang_times_out_at_the_spec_s_limit_or_is_cancelled) {
    fake_runner f(two_scripts());
    process_spec s = plain("h.py", "bench", 1);
    s.timeout_s = 0.05;
    const process_result t = f.run(s);
    EXPECT_TRUE(t.timed_out);
    EXPECT_FALSE(t.cancelled);
    cancel_token c;
    c.cancel();
    s.timeout_s = 60;
    EXPECT_TRUE(f.run(s, c).cancelled);
}

TEST(fake_runner, answers_a_trusted_run_over_the_channel_with_the_nonce_as_the_harness_does) {
    const fs::path dir = make_temp_dir("hk-fake-");
    const fs::path script = dir / "k_candidate.py";
    write_file_atomic(script, "TARGET = {}\nimport hotkernel_contract\n");
    fake_runner f(json{{"scripts",
                        {{"k_candidate.py",
                          {{"ms", 2.0},
                           {"line", {{"ok", true}, {"status", "ok"}, {"timer", "cuda_graph"}}},
                           {"runs", {{"2", {{"line", {{"ok", false}, {"status", "invalid"}, {"reason", "patched"}}}}}}}}}}}});
    trusted_launcher t;
    run_request req{.script = script, .role = "candidate", .index = 1, .total = 2, .python = "python3", .timeout_s = 5};
    const run_record first = run_once(req, f, cancel_token{}, t);
    EXPECT_DOUBLE_EQ(first.ms, 2.0);
    EXPECT_EQ(first.line.value("timer", ""), "cuda_graph");
    EXPECT_FALSE(first.line.contains("nonce"));  // accepted: the one message, with this run's nonce
    req.index = 2;
    const run_record second = run_once(req, f, cancel_token{}, t);
    EXPECT_EQ(second.ok, false);
    EXPECT_EQ(second.line.value("status", ""), "invalid");
    EXPECT_EQ(second.exit_code, 0);  // the harness's rule: an invalid result is still a result
    fs::remove_all(dir);
}

TEST(fake_runner, a_harness_result_stands_when_its_process_fails_after_it_and_a_result_never_sent_is_an_error) {
    const fs::path dir = make_temp_dir("hk-fake-");
    const fs::path script = dir / "k_candidate.py";
    write_file_atomic(script, "TARGET = {}\nimport hotkernel_contract\n");
    fake_runner f(json{{"scripts",
                        {{"k_candidate.py",
                          {{"ms", 2.0},
                           {"line", {{"ok", true}, {"status", "ok"}, {"flags", json::array({json{
                               {"id", "work_outside_timed_region"}, {"message", "a call takes 9 ms"}}})}}},
                           {"runs", {{"1", {{"exit_code", 3}}},
                                     {"2", {{"exit_code", 1}, {"channel", false}, {"stderr", "Traceback: boom"}}}}}}}}}});
    trusted_launcher t;
    run_request req{.script = script, .role = "candidate", .index = 1, .total = 2, .python = "python3", .timeout_s = 5};
    const run_record first = run_once(req, f, cancel_token{}, t);
    EXPECT_DOUBLE_EQ(first.ms, 2.0);
    EXPECT_EQ(first.source, line_source::channel);
    EXPECT_EQ(first.ended_after_result, "exited with status 3");
    json result = json::object(), warnings = json::array();
    report_run_findings({&first}, NAN, result, warnings);
    ASSERT_FALSE(warnings.empty());
    EXPECT_EQ(warnings[0]["id"], "runner_exit_after_result");
    // The runner's flag comes with what the catalogue says to do.
    ASSERT_EQ(first.contract_flags.size(), 1u);
    EXPECT_EQ(first.contract_flags[0]["id"], "work_outside_timed_region");
    EXPECT_NE(first.contract_flags[0]["message"].get<std::string>().find("a call takes 9 ms; keep all work on the"),
              std::string::npos) << first.contract_flags[0];
    req.index = 2;
    try {
        (void)run_once(req, f, cancel_token{}, t);
        FAIL() << "no error";
    } catch (const tool_error& e) {
        EXPECT_NE(std::string(e.what()).find("exited with status 1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("Traceback: boom"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
}

TEST(fake_runner, a_script_that_is_not_json_is_a_clear_error) {
    const fs::path dir = make_temp_dir("hk-fake-");
    write_file_atomic(dir / "s.json", "{not json");
    try {
        (void)fake_runner::from_file(dir / "s.json");
        FAIL() << "no error";
    } catch (const tool_error& e) {
        EXPECT_NE(std::string(e.what()).find("is not valid JSON"), std::string::npos);
    }
    fs::remove_all(dir);
}
