// The seed's verdict rule at its boundary, on hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "report/findings.h"
#include "stats/summary.h"
#include "stats/verdict.h"

using namespace hotkernel;

// std_b = std_c = 2, n = 8: threshold = 2*sqrt(4/8 + 4/8) = 2 exactly.
TEST(verdict, exactly_at_the_threshold_is_inconclusive) {
    auto t = decide_timing(10, 2, 8, 8, 2, 8);
    EXPECT_DOUBLE_EQ(t.threshold_ms, 2.0);
    EXPECT_DOUBLE_EQ(t.diff_ms, 2.0);
    EXPECT_EQ(t.kind, verdict_kind::inconclusive);
    EXPECT_EQ(decide_timing(10, 2, 8, 12, 2, 8).kind, verdict_kind::inconclusive);
}

TEST(verdict, just_past_the_threshold_is_decisive) {
    EXPECT_EQ(decide_timing(10, 2, 8, 7.999, 2, 8).kind, verdict_kind::faster);
    EXPECT_EQ(decide_timing(10, 2, 8, 12.001, 2, 8).kind, verdict_kind::slower);
    EXPECT_EQ(decide_timing(10, 2, 8, 8.001, 2, 8).kind, verdict_kind::inconclusive);
}

TEST(verdict, unequal_spreads_hand_computed) {
    // std_b = 3, std_c = 4, n = 4: 2*sqrt(9/4 + 16/4) = 2*2.5 = 5.
    auto t = decide_timing(20, 3, 4, 15, 4, 4);
    EXPECT_DOUBLE_EQ(t.threshold_ms, 5.0);
    EXPECT_EQ(t.kind, verdict_kind::inconclusive);
    EXPECT_EQ(decide_timing(20, 3, 4, 14.9, 4, 4).kind, verdict_kind::faster);
}

TEST(verdict, from_samples_hand_computed) {
    // b = 1,2,3,4 and c = 2,3,4,5: std = sqrt(5/3) each, threshold = 2*sqrt(2*(5/3)/4) = 1.8257...
    auto b = summarize({1, 2, 3, 4}), c = summarize({2, 3, 4, 5});
    auto t = decide_timing(b.mean, b.std, b.n, c.mean, c.std, c.n);
    EXPECT_NEAR(t.threshold_ms, 2 * std::sqrt(5.0 / 6.0), 1e-12);
    EXPECT_DOUBLE_EQ(t.diff_ms, -1.0);
    EXPECT_EQ(t.kind, verdict_kind::inconclusive);
    auto c2 = summarize({4, 5, 6, 7});  // diff -3 > 1.83: slower
    EXPECT_EQ(decide_timing(b.mean, b.std, b.n, c2.mean, c2.std, c2.n).kind, verdict_kind::slower);
}

TEST(verdict, zero_variance_calls_any_difference) {
    EXPECT_EQ(decide_timing(1.0, 0, 5, 0.999, 0, 5).kind, verdict_kind::faster);
    EXPECT_EQ(decide_timing(1.0, 0, 5, 1.0, 0, 5).kind, verdict_kind::inconclusive);
}

TEST(verdict, fewer_than_two_runs_or_nan_is_inconclusive) {
    auto t = decide_timing(10, 0, 1, 1, 0, 1);
    EXPECT_EQ(t.kind, verdict_kind::inconclusive);
    EXPECT_FALSE(t.note.empty());
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(decide_timing(nan, 1, 5, 1, 1, 5).kind, verdict_kind::inconclusive);
    EXPECT_EQ(decide_timing(10, nan, 5, 1, 1, 5).kind, verdict_kind::inconclusive);
}

TEST(verdict, precedence_invalid_then_incorrect_then_timing) {
    auto faster = decide_timing(10, 0.1, 10, 5, 0.1, 10);
    ASSERT_EQ(faster.kind, verdict_kind::faster);
    EXPECT_EQ(final_verdict(faster, {}, {}), verdict_kind::faster);
    EXPECT_EQ(final_verdict(faster, {}, {"candidate run 2 printed ok=false"}), verdict_kind::incorrect);
    EXPECT_EQ(final_verdict(faster, {"seed differs"}, {"candidate run 2 printed ok=false"}), verdict_kind::invalid);
    EXPECT_EQ(to_string(verdict_kind::inconclusive), "inconclusive");
}

// The rule's false-alarm rate on A/A data: about 6% with n = 10 (t with ~18 df beyond 2).
TEST(verdict, a_a_is_inconclusive_at_least_90_percent_of_the_time) {
    std::mt19937_64 rng(12345);
    std::normal_distribution<double> d(1.0, 0.02);
    int inconclusive = 0;
    const int trials = 2000;
    for (int t = 0; t < trials; ++t) {
        std::vector<double> b, c;
        for (int i = 0; i < 10; ++i) b.push_back(d(rng)), c.push_back(d(rng));
        auto sb = summarize(b), sc = summarize(c);
        if (decide_timing(sb.mean, sb.std, sb.n, sc.mean, sc.std, sc.n).kind == verdict_kind::inconclusive)
            ++inconclusive;
    }
    EXPECT_GE(inconclusive, trials * 90 / 100);
    EXPECT_LE(inconclusive, trials * 99 / 100);  // the rule does fire sometimes: it is a test, not a no-op
}

// ---- compare_runs: the verdict with its reasons, on hand-made runs (no processes) ----
#include "measure/compare.h"

namespace {
run_record rec(const std::string& role, std::size_t i, double ms, json extra = json::object(), bool warm = false) {
    run_record r;
    r.role = role;
    r.index = i;
    r.warmup = warm;
    r.ms = ms;
    r.wall_s = 1.0;
    json line{{"ms", ms}, {"ok", true}, {"seed", 0}, {"shapes", {{4096}}}, {"dtype", "bf16"}, {"iters", 10}};
    for (auto& [k, v] : extra.items()) line[k] = v;
    r.line = line;
    if (line["ok"].is_boolean()) r.ok = line["ok"].get<bool>();
    return r;
}

compare_input pairs(std::vector<double> b, std::vector<double> c) {
    compare_input in;
    for (std::size_t i = 0; i < b.size(); ++i) in.baseline.push_back(rec("baseline", i + 1, b[i]));
    for (std::size_t i = 0; i < c.size(); ++i) in.candidate.push_back(rec("candidate", i + 1, c[i]));
    return in;
}

bool has_reason(const json& out, const std::string& needle) {
    for (const auto& r : out["reasons"])
        if (r.get<std::string>().find(needle) != std::string::npos) return true;
    return false;
}
}  // namespace

TEST(compare_runs, clean_faster_reports_speedup_and_interval) {
    auto out = compare_runs(pairs({2.0, 2.02, 1.98, 2.01}, {1.0, 1.01, 0.99, 1.0}));
    EXPECT_EQ(out["verdict"], "faster");
    EXPECT_TRUE(out["reasons"].empty());
    EXPECT_NEAR(out["speedup"].get<double>(), 2.0, 0.02);
    EXPECT_LT(out["speedup_ci95"]["low"].get<double>(), out["speedup_ci95"]["high"].get<double>());
    EXPECT_TRUE(out["flags"].empty());
}

TEST(compare_runs, seed_or_shape_mismatch_is_invalid_with_the_field_named) {
    auto in = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    for (auto& r : in.candidate) r.line["seed"] = 1;
    auto out = compare_runs(in);
    EXPECT_EQ(out["verdict"], "invalid");
    EXPECT_TRUE(has_reason(out, "seed: baseline 0, candidate 1"));
    EXPECT_FALSE(out.contains("speedup"));

    auto in2 = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    for (auto& r : in2.candidate) r.line["shapes"] = json::array({json::array({2048})});
    EXPECT_TRUE(has_reason(compare_runs(in2), "shapes"));

    auto in3 = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    for (auto& r : in3.candidate) r.line["timer"] = "events";
    for (auto& r : in3.baseline) r.line["timer"] = "cuda_graph";
    EXPECT_TRUE(has_reason(compare_runs(in3), "timer"));
}

TEST(compare_runs, a_candidate_timed_another_way_says_why_first) {
    // Its calls could not be captured in a graph (work on a side stream): that, not the timer
    // disagreement that follows, is the first reason.
    auto in = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    for (auto& r : in.baseline) r.line["timer"] = "cupti";
    for (auto& r : in.candidate) {
        r.line["timer"] = "cuda_events";
        r.line["timer_note"] = "CUDA-graph capture failed (RuntimeError: operation not permitted when stream is capturing)";
    }
    auto out = compare_runs(in);
    EXPECT_EQ(out["verdict"], "invalid");
    const std::string first = out["reasons"][0].get<std::string>();
    EXPECT_EQ(first.rfind("the candidate's calls could not be timed as the baseline's were: CUDA-graph capture failed", 0), 0u)
        << first;
    EXPECT_TRUE(has_reason(out, "the scripts disagree on timer"));
}

TEST(compare_runs, baseline_failing_its_check_is_invalid) {
    auto in = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    in.baseline[1].ok = false;
    auto out = compare_runs(in);
    EXPECT_EQ(out["verdict"], "invalid");
    EXPECT_TRUE(has_reason(out, "baseline run 2 printed ok=false"));
}

TEST(compare_runs, candidate_failing_in_warmup_is_incorrect_without_speedup) {
    auto in = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    in.warmup_candidate.push_back(rec("candidate", 1, 0.5, json{{"ok", false}}, true));
    in.warmup_baseline.push_back(rec("baseline", 1, 2.0, json::object(), true));
    auto out = compare_runs(in);
    EXPECT_EQ(out["verdict"], "incorrect");
    EXPECT_TRUE(has_reason(out, "warm-up candidate run 1 printed ok=false"));
    EXPECT_FALSE(out.contains("speedup"));
    EXPECT_FALSE(out.contains("speedup_ci95"));
}

TEST(compare_runs, implausible_results_are_flagged) {
    auto fast = compare_runs(pairs({20, 20.1, 19.9}, {1, 1.01, 0.99}));
    EXPECT_EQ(fast["verdict"], "faster");
    ASSERT_FALSE(fast["flags"].empty());
    EXPECT_EQ(finding_id_of(fast["flags"][0]), "speedup_over_10x");

    auto in = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    in.candidate[0].ms = 500;  // 500 ms x 10 iters = 5 s in a process that lived 1 s
    auto wall = compare_runs(in);
    bool seen = false;
    for (const auto& f : wall["flags"]) seen |= finding_id_of(f) == "reported_time_exceeds_wall";
    EXPECT_TRUE(seen) << wall["flags"].dump();
}

TEST(compare_runs, a_check_on_one_side_only_is_invalid) {
    auto in = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    for (auto& r : in.candidate) r.ok.reset();
    EXPECT_EQ(compare_runs(in)["verdict"], "invalid");
}

TEST(compare_runs, a_line_the_parent_made_is_not_compared_with_the_scripts) {
    // A run killed inside a copy gets a line of the parent's (by_parent): its reason, and no
    // disagreement on shapes or dtype that only its missing fields would make.
    auto in = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    json made{{"ms", 0.0}, {"ok", false}, {"status", "invalid"}, {"by_parent", true},
              {"reason", "the run was killed by signal 11 (SIGSEGV) while the harness copied an output"}};
    in.candidate[0].line = made;
    in.candidate[0].ok = false;
    in.candidate[0].status = run_status::invalid;
    in.candidate[0].reason = made["reason"];
    auto out = compare_runs(in);
    EXPECT_EQ(out["verdict"], "invalid");
    EXPECT_TRUE(has_reason(out, "killed by signal 11"));
    EXPECT_FALSE(has_reason(out, "disagree")) << out["reasons"].dump();
    EXPECT_FALSE(has_reason(out, "changed between runs")) << out["reasons"].dump();
}

TEST(compare_runs, sets_of_a_call_each_differ_in_number_only_where_one_side_reads_warmer_inputs) {
    // A CPU sizes its samples by time: 55 calls (and sets) in one run, 56 in another, both past the
    // 24 sets the cache needs. Not a difference of cache state; 16 sets against 56 is.
    auto warned = [](const json& out) {
        for (const auto& w : out["warnings"])
            if (w.value("id", "") == "rotate_k_differs") return true;
        return false;
    };
    auto in = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    for (auto* side : {&in.baseline, &in.candidate})
        for (auto& r : *side) r.line["cache_k"] = 24;
    for (auto& r : in.baseline) r.line["rotate_k"] = 55;
    for (auto& r : in.candidate) r.line["rotate_k"] = 56;
    EXPECT_FALSE(warned(compare_runs(in)));
    for (auto& r : in.candidate) r.line["rotate_k"] = 16;
    EXPECT_TRUE(warned(compare_runs(in)));
    for (auto& r : in.baseline) r.line["rotate_k"] = 26;  // both past cache_k, within 10%
    for (auto& r : in.candidate) r.line["rotate_k"] = 25;
    EXPECT_FALSE(warned(compare_runs(in)));
    for (auto& r : in.candidate) r.line["rotate_k"] = 47;  // 26 against 47: the fewer read warmer
    EXPECT_TRUE(warned(compare_runs(in)));
    for (auto& r : in.baseline) r.line["rotate_k"] = 55;
    for (auto* side : {&in.baseline, &in.candidate})  // lines without cache_k: any difference
        for (auto& r : *side) r.line.erase("cache_k");
    for (auto& r : in.candidate) r.line["rotate_k"] = 56;
    EXPECT_TRUE(warned(compare_runs(in)));
}

TEST(compare_runs, a_target_that_rotates_nothing_is_told_what_that_lets_through) {
    // rotate_k 1: every call of a sample reads the same tensors, so an output cache reads as speed.
    auto in = pairs({2, 2.1, 2.05}, {1, 1.1, 1.05});
    for (auto* side : {&in.baseline, &in.candidate})
        for (auto& r : *side) r.line["rotate_k"] = 1;
    auto out = compare_runs(in);
    bool told = false;
    for (const auto& w : out["warnings"]) told = told || w.value("id", "") == "inputs_not_rotated";
    EXPECT_TRUE(told) << out["warnings"].dump();
    for (auto* side : {&in.baseline, &in.candidate})
        for (auto& r : *side) r.line["rotate_k"] = 8;
    const json rotated = compare_runs(in);
    for (const auto& w : rotated["warnings"]) EXPECT_NE(w.value("id", ""), "inputs_not_rotated");
}
