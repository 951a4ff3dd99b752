// The pair loop (ABBA, stop-early, progress) on the fake runner, and the contract's findings
// folded into the verdict before it is decided.
#include <gtest/gtest.h>

#include <algorithm>

#include "measure/compare.h"
#include "measure/pairs.h"
#include "measure/parent_clock.h"
#include "process/fake_runner.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {

struct scripts {
    fs::path dir = make_temp_dir("hk-pairs-");
    fs::path b = dir / "b.py", c = dir / "c.py";
    scripts() {
        write_file_atomic(b, "# fake\n");
        write_file_atomic(c, "# fake\n");
    }
    ~scripts() { fs::remove_all(dir); }
};

json plain_line() { return json{{"ok", true}, {"seed", 0}, {"shapes", {{4096}}}, {"dtype", "fp32"}, {"iters", 1}}; }

json fake_script(double b_mean, double c_mean, json c_runs = json::object()) {
    return json{{"seed", 1},
                {"scripts",
                 {{"b.py", {{"ms", {{"mean", b_mean}, {"sd", 0.01}}}, {"line", plain_line()}}},
                  {"c.py", {{"ms", {{"mean", c_mean}, {"sd", 0.01}}}, {"line", plain_line()}, {"runs", c_runs}}}}}};
}

run_record rec(const std::string& role, std::size_t index, double ms, std::size_t seq) {
    run_record r;
    r.role = role;
    r.index = index;
    r.ms = ms;
    r.ok = true;
    r.wall_s = 1.0;
    r.sequence = seq;
    r.line = json{{"ms", ms}, {"ok", true}, {"seed", 0}};
    r.status = run_status::ok;
    return r;
}

}  // namespace

TEST(run_pairs, runs_abba_with_warm_ups_first_and_reports_each_run) {
    scripts s;
    fake_runner f(fake_script(1.0, 1.0));
    fresh_process_launcher l;
    std::vector<std::pair<double, std::string>> progress;
    pair_outcome out = run_pairs({.baseline = s.b, .candidate = s.c, .n = 3, .warmup = 1, .stop_early = false,
                                  .python = "python3", .timeout_s = 5},
                                 f, cancel_token{}, l, [&](double done, double total, const std::string& msg) {
                                     EXPECT_EQ(total, 4);  // pairs: one warm-up, three timed
                                     progress.emplace_back(done, msg);
                                 });
    EXPECT_EQ(out.stopped, "");
    ASSERT_EQ(out.runs.baseline.size(), 3u);
    ASSERT_EQ(out.runs.warmup_candidate.size(), 1u);
    std::vector<std::string> order;
    for (const run_record* r : in_launch_order(out.runs)) order.push_back((r->warmup ? "w" : "") + r->role.substr(0, 1));
    EXPECT_EQ(order, (std::vector<std::string>{"wb", "wc", "c", "b", "b", "c", "c", "b"}));
    ASSERT_EQ(progress.size(), 5u);  // "starting", then once a pair
    EXPECT_EQ(progress.front().second, "starting");
    EXPECT_EQ(progress[1].second, "warm-up pair 1 of 1");
    EXPECT_EQ(progress.back().first, 4);
    EXPECT_EQ(progress.back().second.rfind("pair 3 of 3: speedup so far ", 0), 0u) << progress.back().second;
}

TEST(run_pairs, a_failed_check_stops_after_its_pair_and_says_which_run) {
    scripts s;
    fake_runner f(fake_script(1.0, 1.0, json{{"2", {{"line", {{"ok", false}}}}}}));
    fresh_process_launcher l;
    pair_outcome out = run_pairs({.baseline = s.b, .candidate = s.c, .n = 10, .warmup = 0, .stop_early = true,
                                  .python = "python3", .timeout_s = 5},
                                 f, cancel_token{}, l, [](double, double, const std::string&) {});
    EXPECT_EQ(out.stopped, "stopped after candidate run 2 printed ok=false: the verdict cannot change");
    EXPECT_EQ(out.runs.baseline.size(), 2u);
    EXPECT_EQ(out.runs.candidate.size(), 2u);
    EXPECT_EQ(compare_runs(out.runs)["verdict"], "incorrect");
}

TEST(run_pairs, a_clear_difference_stops_early) {
    scripts s;
    fake_runner f(fake_script(1.0, 1.2));
    fresh_process_launcher l;
    pair_outcome out = run_pairs({.baseline = s.b, .candidate = s.c, .n = 20, .warmup = 0, .stop_early = true,
                                  .python = "python3", .timeout_s = 5},
                                 f, cancel_token{}, l, [](double, double, const std::string&) {});
    EXPECT_LT(out.runs.baseline.size(), 20u);
    EXPECT_NE(out.stopped.find("stopped after"), std::string::npos) << out.stopped;
    EXPECT_EQ(compare_runs(out.runs)["verdict"], "slower");
}

// The candidate's run 2 voided by the parent's clock alone, as a busy host can do to an honest run.
json clock_voided(bool alone = true) {
    json pc{{"bound", "broken"}};
    if (alone) pc["only_cause"] = true;
    return json{{"line",
                 {{"ok", false}, {"status", "invalid"}, {"parent_clock", pc},
                  {"reason", "the run reports samples of 0.8 ms (32 calls) but the parent saw each take 2.6 ms"}}}};
}

TEST(run_pairs, a_run_voided_by_the_parent_clock_alone_is_run_again_once) {
    scripts s;
    fake_runner f(fake_script(1.0, 1.0, json{{"2", json::array({clock_voided(), json::object()})}}));
    fresh_process_launcher l;
    std::vector<std::string> said;
    pair_outcome out = run_pairs({.baseline = s.b, .candidate = s.c, .n = 3, .warmup = 0, .stop_early = false,
                                  .python = "python3", .timeout_s = 5},
                                 f, cancel_token{}, l,
                                 [&](double, double, const std::string& msg) { said.push_back(msg); });
    ASSERT_EQ(out.voided.size(), 1u);
    EXPECT_EQ(out.voided[0].role, "candidate");
    EXPECT_EQ(out.voided[0].index, 2u);
    ASSERT_EQ(out.runs.candidate.size(), 3u);
    const run_record& rerun = out.runs.candidate[1];
    EXPECT_TRUE(rerun.ok.value_or(false));
    EXPECT_NE(rerun.status, run_status::invalid);
    EXPECT_NE(rerun.rerun_of.find("the parent saw each take"), std::string::npos);
    EXPECT_EQ(rerun.to_json()["rerun_of"], rerun.rerun_of);
    EXPECT_GT(rerun.sequence, out.voided[0].sequence);
    EXPECT_NE(compare_runs(out.runs)["verdict"], "invalid");
    EXPECT_TRUE(std::any_of(said.begin(), said.end(),
                            [](const std::string& m) { return m.find("running it again once") != std::string::npos; }));
}

TEST(run_pairs, a_second_void_by_the_parent_clock_is_invalid) {
    scripts s;  // run 2 voided twice, and run 3 once: one rerun a verify
    fake_runner f(fake_script(1.0, 1.0, json{{"2", json::array({clock_voided(), clock_voided()})},
                                             {"3", clock_voided()}}));
    fresh_process_launcher l;
    pair_outcome out = run_pairs({.baseline = s.b, .candidate = s.c, .n = 3, .warmup = 0, .stop_early = false,
                                  .python = "python3", .timeout_s = 5},
                                 f, cancel_token{}, l, [](double, double, const std::string&) {});
    EXPECT_EQ(out.voided.size(), 1u);
    ASSERT_EQ(out.runs.candidate.size(), 3u);
    EXPECT_EQ(out.runs.candidate[1].status, run_status::invalid);
    EXPECT_EQ(out.runs.candidate[2].status, run_status::invalid);
    EXPECT_EQ(compare_runs(out.runs)["verdict"], "invalid");
}

TEST(run_pairs, a_run_hotkernel_voided_whose_line_has_no_reason_is_not_run_again) {
    scripts s;  // the line's reason null or absent, the run voided by hotkernel's own finding: no rerun, no throw
    run_record r;
    r.status = run_status::invalid;
    r.reason = "the run changed hotkernel's own scheduling";
    r.line = json{{"status", "ok"}, {"reason", nullptr}, {"parent_clock", {{"only_cause", true}}}};
    EXPECT_FALSE(parent_clock_only_cause(r.line));
    r.line["status"] = nullptr;
    EXPECT_FALSE(parent_clock_only_cause(r.line));
    fake_runner f(fake_script(1.0, 1.0, json{{"2", {{"line", {{"status", "ok"}, {"reason", nullptr}}}}}}));
    fresh_process_launcher l;
    pair_outcome out = run_pairs({.baseline = s.b, .candidate = s.c, .n = 2, .warmup = 0, .stop_early = false,
                                  .python = "python3", .timeout_s = 5},
                                 f, cancel_token{}, l, [](double, double, const std::string&) {});
    EXPECT_TRUE(out.voided.empty());
}

TEST(run_pairs, a_void_with_another_cause_is_not_run_again) {
    scripts s;
    fake_runner f(fake_script(1.0, 1.0, json{{"2", clock_voided(false)}}));
    fresh_process_launcher l;
    pair_outcome out = run_pairs({.baseline = s.b, .candidate = s.c, .n = 2, .warmup = 0, .stop_early = false,
                                  .python = "python3", .timeout_s = 5},
                                 f, cancel_token{}, l, [](double, double, const std::string&) {});
    EXPECT_TRUE(out.voided.empty());
    EXPECT_EQ(compare_runs(out.runs)["verdict"], "invalid");
}

TEST(compare_runs, a_run_the_contract_declared_invalid_voids_the_verdict_before_it_is_decided) {
    compare_input in;
    for (std::size_t i = 1; i <= 3; ++i) {
        in.baseline.push_back(rec("baseline", i, 2.0 + 0.01 * i, 2 * i - 1));
        in.candidate.push_back(rec("candidate", i, 1.0 + 0.01 * i, 2 * i));
    }
    run_record& bad = in.candidate[1];
    bad.ok = false;
    bad.status = run_status::invalid;
    bad.reason = "the harness was patched";
    bad.line["ok"] = false;
    bad.line["status"] = "invalid";
    bad.line["reason"] = bad.reason;
    // The harness's flags carry an id (python/hotkernel_harness.py, `_flag`).
    bad.contract_flags = json::array({json{{"id", "work_outside_timed_region"}, {"message", "m"}}});
    in.candidate[2].contract_flags = bad.contract_flags;  // raised twice: reported once per role
    const json out = compare_runs(in);
    EXPECT_EQ(out["verdict"], "invalid");
    // Its ok=false is the invalid run's, not a wrong output: said once, with the runner's reason.
    ASSERT_EQ(out["reasons"].size(), 1u);
    EXPECT_EQ(out["reasons"][0], "the candidate run 2 is invalid: the harness was patched");
    EXPECT_FALSE(out.contains("speedup"));
    EXPECT_FALSE(out.contains("speedup_ci95"));
    int seen = 0;
    for (const auto& f : out["flags"])
        if (f["id"] == "work_outside_timed_region") {
            ++seen;
            EXPECT_EQ(f["role"], "candidate");
        }
    EXPECT_EQ(seen, 1);
}

TEST(compare_runs, runs_that_report_different_numbers_of_samples_are_invalid) {
    compare_input in;
    for (std::size_t i = 1; i <= 3; ++i) {
        in.baseline.push_back(rec("baseline", i, 2.0 + 0.01 * i, 2 * i - 1));
        in.candidate.push_back(rec("candidate", i, 1.0 + 0.01 * i, 2 * i));
    }
    for (auto* side : {&in.baseline, &in.candidate})
        for (auto& r : *side) r.line["samples_ms"] = json::array({1.0, 1.0, 1.0});
    EXPECT_NE(compare_runs(in)["verdict"], "invalid");
    in.candidate[1].line["samples_ms"] = json::array({1.0});  // a result written after one sample
    const json out = compare_runs(in);
    EXPECT_EQ(out["verdict"], "invalid");
    EXPECT_NE(out["reasons"][0].get<std::string>().find("different numbers of timed samples"), std::string::npos)
        << out["reasons"];
}
