// Workloads: a run over several shapes split into one record per shape, the run's status
// restated, the parent's clock applied per workload, the summary verdict and the dims parsed.
#include <gtest/gtest.h>

#include <cmath>

#include "measure/compare.h"
#include "measure/parent_clock.h"
#include "measure/workloads.h"
#include "scaffold/target_spec.h"
#include "stats/aggregate.h"
#include "util/errors.h"

using namespace hotkernel;

namespace {

json workload(const char* name, double ms, const char* status = "ok", std::vector<double> samples = {}) {
    json w{{"name", name}, {"ms", ms}, {"status", status}, {"ok", std::string(status) == "ok"},
           {"shapes", {{"x", {1, 2}}}}, {"calls_per_sample", 2}};
    w["reason"] = std::string(status) == "ok" ? json(nullptr) : json(std::string("check call: wrong at ") + name);
    w["samples_ms"] = samples.empty() ? std::vector<double>{ms} : samples;
    return w;
}

run_record run_of(std::vector<json> ws, const char* status = "ok") {
    run_record r;
    r.role = "candidate";
    r.index = 1;
    r.line = json{{"protocol", 3}, {"status", status}, {"ok", std::string(status) == "ok"}, {"seed", 0}, {"ms", 3.0}};
    r.line["workloads"] = ws;
    r.ms = 3.0;
    r.status = parse_run_status(status);
    return r;
}

}  // namespace

TEST(workloads, a_run_splits_into_one_record_per_shape_with_its_own_figures) {
    run_record r = run_of({workload("M=1", 1.0), workload("M=16", 2.0, "incorrect")}, "incorrect");
    auto parts = split_by_workload(r);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0].line.value("workload", ""), "M=1");
    EXPECT_EQ(parts[0].ms, 1.0);
    EXPECT_EQ(parts[0].status, run_status::ok);
    EXPECT_EQ(parts[0].ok, true);
    EXPECT_EQ(parts[0].line["seed"], 0);  // the run's own fields come along
    EXPECT_FALSE(parts[0].line.contains("workloads"));
    EXPECT_EQ(parts[1].status, run_status::incorrect);  // the run's status is its workloads': not spread to M=1
    EXPECT_EQ(parts[1].ok, false);
    EXPECT_EQ(parts[1].reason, "check call: wrong at M=16");
}

TEST(workloads, a_verdict_on_the_whole_run_holds_for_every_workload) {
    run_record r = run_of({workload("M=1", 1.0), workload("M=16", 2.0)}, "invalid");
    r.line["reason"] = "the candidate's TARGET differs from the baseline's";
    r.reason = r.line["reason"];  // as run_once reads it
    for (const auto& p : split_by_workload(r)) {
        EXPECT_EQ(p.status, run_status::invalid);
        EXPECT_EQ(p.reason, "the candidate's TARGET differs from the baseline's");
    }
}

TEST(workloads, a_run_hotkernel_voided_is_invalid_at_every_workload_whatever_its_line_says) {
    // run_once folds run_answer::voided into the record, not the line: the split reads the record.
    run_record r = run_of({workload("M=1", 1.0), workload("M=16", 2.0)}, "ok");
    r.status = run_status::invalid;
    r.ok = false;
    r.reason = "a script changed between runs of this bench/verify";
    for (const auto& p : split_by_workload(r)) {
        EXPECT_EQ(p.status, run_status::invalid);
        EXPECT_EQ(p.ok, false);
        EXPECT_EQ(p.reason, r.reason);
        EXPECT_EQ(p.line["status"], "invalid");
    }
}

TEST(workloads, a_one_shape_run_is_its_own_only_part) {
    run_record r;
    r.line = json{{"ms", 1.0}, {"status", "ok"}};
    auto parts = split_by_workload(r);
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_FALSE(has_workloads(parts[0].line));
}

TEST(workloads, a_verify_splits_per_workload_in_the_runs_order) {
    compare_input in;
    in.baseline = {run_of({workload("M=1", 1.0), workload("M=16", 2.0)}),
                   run_of({workload("M=1", 1.1), workload("M=16", 2.1)})};
    in.candidate = {run_of({workload("M=1", 0.9), workload("M=16", 2.2)})};
    auto split = split_by_workload(in);
    ASSERT_EQ(split.size(), 2u);
    EXPECT_EQ(split[1].first, "M=16");
    ASSERT_EQ(split[1].second.baseline.size(), 2u);
    EXPECT_EQ(split[1].second.baseline[1].ms, 2.1);
    EXPECT_EQ(split[1].second.candidate[0].ms, 2.2);
}

TEST(workloads, the_run_status_is_restated_as_the_worst_workload_naming_it) {
    json line = run_of({workload("M=1", 1.0), workload("M=16", 2.0)}).line;
    line["workloads"][1]["status"] = "invalid";
    line["workloads"][1]["ok"] = false;
    line["workloads"][1]["reason"] = "the parent's clock saw more";
    restate_run_status(line);
    EXPECT_EQ(line["status"], "invalid");
    EXPECT_EQ(line["ok"], false);
    EXPECT_EQ(line["reason"], "workload M=16: the parent's clock saw more");
}

TEST(workloads, the_parent_clock_bounds_each_workload_on_its_own_windows) {
    parent_clock_log log;
    log.connected = true;
    log.ended = true;
    for (int i = 0; i < 5; ++i) log.empty.push_back({0.05, 0});
    // M=1: two samples of 1 ms (2 calls: 2 ms reported, 2.1 ms seen); M=16: two of 2 ms, but 9 ms seen.
    log.timed = {{2.1, 2}, {2.1, 2}, {9.0, 2}, {9.0, 2}};
    json line = run_of({workload("M=1", 1.0, "ok", {1.0, 1.0}), workload("M=16", 2.0, "ok", {2.0, 2.0})}).line;
    apply_clock_bounds(line, log);
    EXPECT_EQ(line["workloads"][0]["status"], "ok");
    EXPECT_EQ(line["workloads"][0]["parent_clock"]["bound"], "held");
    EXPECT_EQ(line["workloads"][1]["status"], "invalid");
    EXPECT_EQ(line["status"], "invalid");
    EXPECT_NE(line["reason"].get<std::string>().find("workload M=16"), std::string::npos);
}

TEST(workloads, windows_that_do_not_add_up_to_the_samples_void_the_run) {
    parent_clock_log log;
    log.connected = true;
    log.empty.push_back({0.05, 0});
    log.timed = {{2.1, 2}};
    json line = run_of({workload("M=1", 1.0, "ok", {1.0, 1.0})}).line;
    apply_clock_bounds(line, log);
    EXPECT_EQ(line["status"], "invalid");
}

namespace {
workload_outcome outcome(const char* name, verdict_kind v, double b, double c, double w = 1) {
    return {.name = name, .verdict = v, .weight = w, .speedup = b / c, .baseline_ms = {b, b * 1.01, b * 0.99},
            .candidate_ms = {c, c * 1.01, c * 0.99}};
}
}  // namespace

TEST(aggregate, the_summary_never_hides_a_loss) {
    using v = verdict_kind;
    EXPECT_EQ(summarize_workloads({outcome("a", v::faster, 2, 1), outcome("b", v::inconclusive, 1, 1)}).verdict, "faster");
    auto mixed = summarize_workloads({outcome("a", v::faster, 2, 1), outcome("b", v::slower, 1, 2)});
    EXPECT_EQ(mixed.verdict, "mixed");
    EXPECT_EQ(mixed.slower_on, std::vector<std::string>{"b"});
    EXPECT_EQ(summarize_workloads({outcome("a", v::slower, 1, 2), outcome("b", v::inconclusive, 1, 1)}).verdict, "slower");
    EXPECT_EQ(summarize_workloads({outcome("a", v::inconclusive, 1, 1)}).verdict, "inconclusive");
    EXPECT_EQ(summarize_workloads({outcome("a", v::faster, 2, 1), outcome("b", v::incorrect, 1, 1)}).verdict, "incorrect");
    EXPECT_EQ(summarize_workloads({outcome("a", v::incorrect, 2, 1), outcome("b", v::invalid, 1, 1)}).verdict, "invalid");
}

TEST(aggregate, the_geometric_mean_is_weighted_and_its_interval_comes_from_the_pairs) {
    using v = verdict_kind;
    auto s = summarize_workloads({outcome("a", v::faster, 4, 1), outcome("b", v::faster, 1, 1)});
    EXPECT_NEAR(s.geomean_speedup, 2.0, 1e-12);  // sqrt(4 * 1)
    ASSERT_TRUE(s.ci_valid);
    EXPECT_LE(s.ci_low, 2.0);
    EXPECT_GE(s.ci_high, 2.0);
    auto w = summarize_workloads({outcome("a", v::faster, 4, 1, 3), outcome("b", v::faster, 1, 1, 1)});
    EXPECT_NEAR(w.geomean_speedup, std::pow(4.0, 0.75), 1e-12);
}

TEST(dims, values_and_the_cli_comma_split_form_give_the_same_dims) {
    auto a = parse_dims({"M=1,16,256", "K=4096"});
    auto b = parse_dims({"M=1", "16", "256", "K=4096"});
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].values, (std::vector<std::int64_t>{1, 16, 256}));
    EXPECT_EQ(b[0].values, a[0].values);
    auto w = expand_dims(a);
    ASSERT_EQ(w.size(), 3u);
    EXPECT_EQ(w[2], (workload_dims{{"M", 256}, {"K", 4096}}));
    EXPECT_THROW(parse_dims({"16"}), tool_error);
    EXPECT_THROW(parse_dims({"M=1", "M=2"}), tool_error);
    EXPECT_THROW(parse_dims({"max=1"}), tool_error);  // 'x' separates a shape's sizes
    EXPECT_THROW(expand_dims(parse_dims({"A=1,2,3,4,5,6,7,8", "B=1,2,3,4,5,6,7,8", "C=1,2"})), tool_error);
}

TEST(dims, a_workload_list_binds_the_same_dims_each_time) {
    auto w = parse_workload_list("M=1,K=4096; M=16,K=1024");
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ(w[1], (workload_dims{{"M", 16}, {"K", 1024}}));
    EXPECT_THROW(parse_workload_list("M=1,K=2; K=2,M=1"), tool_error);
    EXPECT_THROW(parse_workload_list(" ; "), tool_error);
    EXPECT_EQ(check_dims_shape("M x 4096", {"M", "K"}, "shape"), "Mx4096");
    EXPECT_THROW(check_dims_shape("MxN", {"M", "K"}, "shape"), tool_error);
}

namespace {

/// A verify's runs over two workloads: pair i's baseline at M=1 and M=16 takes b1 and b16 (+ jitter),
/// its candidate c1 and c16.
compare_input two_workload_pairs(double b1, double c1, double b16, double c16, const char* c16_status = "ok") {
    compare_input in;
    for (std::size_t i = 1; i <= 4; ++i) {
        const double j = 0.001 * static_cast<double>(i % 3);
        run_record b = run_of({workload("M=1", b1 + j), workload("M=16", b16 + j)});
        b.role = "baseline";
        b.index = i;
        run_record c = run_of({workload("M=1", c1 + j), workload("M=16", c16 + j, c16_status)},
                              std::string(c16_status) == "ok" ? "ok" : c16_status);
        c.index = i;
        c.ok = std::string(c16_status) == "ok";
        if (std::string(c16_status) != "ok") c.reason = "workload M=16: check call: wrong at M=16";
        in.baseline.push_back(b);
        in.candidate.push_back(c);
    }
    return in;
}

}  // namespace

TEST(judge_pairs, faster_at_one_shape_and_slower_at_another_is_mixed_naming_both) {
    const json out = judge_pairs(two_workload_pairs(1.0, 0.5, 2.0, 3.0));
    EXPECT_EQ(out["verdict"], "mixed");
    ASSERT_EQ(out["workloads"].size(), 2u);
    EXPECT_EQ(out["workloads"][0]["verdict"], "faster");
    EXPECT_EQ(out["workloads"][1]["verdict"], "slower");
    EXPECT_EQ(out["aggregate"]["slower_on"], json::array({"M=16"}));
    EXPECT_NE(out["reasons"][0].get<std::string>().find("faster at M=1, slower at M=16"), std::string::npos)
        << out["reasons"];
    EXPECT_TRUE(out["speedup"].is_number());  // the geometric mean, beside the verdict that names the loss
}

TEST(judge_pairs, wrong_at_one_shape_only_is_incorrect_naming_it_with_no_speedup) {
    const json out = judge_pairs(two_workload_pairs(1.0, 0.5, 2.0, 1.0, "incorrect"));
    EXPECT_EQ(out["verdict"], "incorrect");
    EXPECT_EQ(out["aggregate"]["incorrect_on"], json::array({"M=16"}));
    EXPECT_EQ(out["workloads"][0]["verdict"], "faster");
    EXPECT_FALSE(out.contains("speedup"));
    EXPECT_NE(out["reasons"][0].get<std::string>().find("incorrect at M=16"), std::string::npos) << out["reasons"];
}

TEST(judge_pairs, a_workload_settled_early_is_judged_on_its_pairs_up_to_there) {
    std::map<std::string, std::size_t> settled{{"M=1", 3}};
    const json out = judge_pairs(two_workload_pairs(1.0, 0.5, 2.0, 1.0), settled);
    EXPECT_EQ(out["verdict"], "faster");
    EXPECT_EQ(out["workloads"][0]["settled_after_pairs"], 3);
    EXPECT_EQ(out["workloads"][0]["baseline"]["n"], 3);
    EXPECT_EQ(out["workloads"][1]["baseline"]["n"], 4);
}
