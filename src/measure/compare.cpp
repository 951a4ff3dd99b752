// Verdict, reasons, paired speedup and flags from two sets of runs.
#include "measure/compare.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "measure/consistency.h"
#include "report/findings.h"
#include "stats/paired.h"
#include "stats/summary.h"
#include "stats/verdict.h"

namespace hotkernel {
namespace {

// The trusted runner found the run invalid and said why (a patched harness, the parent's clock).
bool found_invalid(const run_record& r) {
    return r.status == "invalid" && r.line.is_object() && r.line.contains("reason") && r.line["reason"].is_string();
}

std::string label(const run_record& r) {
    return fmt::format("{}{} run {}", r.warmup ? "warm-up " : "", r.role, r.index);
}

json side_json(const std::vector<run_record>& runs, const sample_summary& s) {
    std::vector<double> samples;
    for (const auto& r : runs) samples.push_back(r.ms);
    json j = summary_json_ms(s);
    j["samples_ms"] = samples;
    return j;
}

}  // namespace

std::vector<const run_record*> in_launch_order(const compare_input& in) {
    std::vector<const run_record*> all;
    for (const auto* v : {&in.warmup_baseline, &in.warmup_candidate, &in.baseline, &in.candidate})
        for (const auto& r : *v) all.push_back(&r);
    if (std::all_of(all.begin(), all.end(), [](const run_record* r) { return r->sequence != 0; }))
        std::stable_sort(all.begin(), all.end(),
                         [](const run_record* a, const run_record* b) { return a->sequence < b->sequence; });
    return all;
}

json compare_runs(const compare_input& in) {
    std::vector<std::string> invalid, incorrect;
    json flags = json::array();
    json warnings = json::array();

    std::vector<const run_record*> all_b, all_c;
    for (const auto& r : in.warmup_baseline) all_b.push_back(&r);
    for (const auto& r : in.baseline) all_b.push_back(&r);
    for (const auto& r : in.warmup_candidate) all_c.push_back(&r);
    for (const auto& r : in.candidate) all_c.push_back(&r);

    // Correctness claims: the baseline failing its own check voids the comparison; the
    // candidate failing in any run (warm-up included) makes it incorrect.
    // A run the trusted runner found invalid also says ok=false; its reason is given below
    // (contract_invalid), and it is not a wrong output.
    bool b_claims = false, c_claims = false;
    for (const auto* r : all_b) {
        if (r->ok.has_value()) b_claims = true;
        if (r->ok == false && !found_invalid(*r))
            invalid.push_back(label(*r) + " printed ok=false: the baseline fails its own check");
    }
    for (const auto* r : all_c) {
        if (r->ok.has_value()) c_claims = true;
        if (r->ok == false && !found_invalid(*r))
            incorrect.push_back(label(*r) + " printed ok=false: the candidate's output is wrong");
    }
    if (b_claims && !c_claims)
        invalid.push_back("ok: the baseline reports a correctness check, the candidate prints none; both must follow "
                          "the same contract");
    if (!b_claims && c_claims)
        warnings.push_back(findings::baseline_unchecked());
    if (!b_claims && !c_claims)
        warnings.push_back(findings::output_unchecked(2));

    // Agreement between the scripts (first timed lines) and within each script.
    if (!all_b.empty() && !all_c.empty())
        for (const auto& d : compare_lines(all_b.front()->line, all_c.front()->line)) {
            // A candidate timed another way than its baseline because its calls could not be
            // (a CUDA graph that could not capture them, a clock that saw none of their work):
            // that is what it did, said first.
            const json& cl = all_c.front()->line;
            if (d.rfind("timer", 0) == 0 && cl.is_object() && cl.contains("timer_note") && cl["timer_note"].is_string())
                invalid.push_back("the candidate's calls could not be timed as the baseline's were: " +
                                  cl["timer_note"].get<std::string>().substr(0, 300) +
                                  " (work on another stream or thread, or a sync inside the call, does this)");
            invalid.push_back("the scripts disagree on " + d);
        }
    std::vector<json> lb, lc;
    for (const auto* r : all_b) lb.push_back(r->line);
    for (const auto* r : all_c) lc.push_back(r->line);
    for (const auto& u : unstable_fields(lb, "baseline")) invalid.push_back("a script changed between runs: " + u);
    for (const auto& u : unstable_fields(lc, "candidate")) invalid.push_back("a script changed between runs: " + u);
    if (!all_b.empty() && !all_c.empty()) {
        json kb = line_field(all_b.front()->line, "rotate_k"), kc = line_field(all_c.front()->line, "rotate_k");
        if (!kb.is_null() && !kc.is_null() && kb != kc)
            warnings.push_back(findings::rotate_k_differs(dump_line(kb), dump_line(kc)));
    }

    std::vector<double> b_ms, c_ms;
    for (const auto& r : in.baseline) b_ms.push_back(r.ms);
    for (const auto& r : in.candidate) c_ms.push_back(r.ms);
    // The contract's own findings on each run, in launch order: a run it declared invalid (a
    // patched harness, a changed TARGET, threads working after the call, a forged result) voids
    // the comparison, and the flags it raised join ours, once per flag and role.
    std::vector<std::string> contract_invalid;
    for (const run_record* r : in_launch_order(in)) {
        for (const auto& f : r->contract_flags) {
            json g = f;
            g["role"] = r->role;
            bool dup = false;
            for (const auto& h : flags)
                dup = dup || (h.contains("role") && h["role"] == r->role && h.contains("id") && g.contains("id") &&
                              h["id"] == g["id"]);
            if (!dup) flags.push_back(std::move(g));
        }
        if (found_invalid(*r)) {
            std::string why = fmt::format("the trusted runner found the {} run {}: {}", r->role, r->index, r->reason);
            if (std::find(contract_invalid.begin(), contract_invalid.end(), why) == contract_invalid.end())
                contract_invalid.push_back(std::move(why));
        }
    }

    const sample_summary sb = summarize(b_ms), sc = summarize(c_ms);
    const timing_verdict tv = decide_timing(sb.mean, sb.std, sb.n, sc.mean, sc.std, sc.n);
    std::vector<std::string> all_invalid = contract_invalid;
    all_invalid.insert(all_invalid.end(), invalid.begin(), invalid.end());
    const verdict_kind v = final_verdict(tv, all_invalid, incorrect);

    json out;
    out["verdict"] = std::string(to_string(v));
    json reasons = json::array();
    for (const auto& r : invalid) reasons.push_back(r);
    if (invalid.empty())
        for (const auto& r : incorrect) reasons.push_back(r);
    if (!tv.note.empty() && reasons.empty()) reasons.push_back(tv.note);
    // The contract's findings lead: they say why the run is void, the rest what followed from it.
    for (auto it = contract_invalid.rbegin(); it != contract_invalid.rend(); ++it) reasons.insert(reasons.begin(), *it);
    out["reasons"] = reasons;
    out["baseline"] = side_json(in.baseline, sb);
    out["candidate"] = side_json(in.candidate, sc);
    out["diff_ms"] = finite_or_null(tv.diff_ms);
    out["threshold_ms"] = finite_or_null(tv.threshold_ms);
    out["rule"] = "faster/slower when |mean_b - mean_c| > 2*sqrt(std_b^2/n + std_c^2/n), else inconclusive";

    const paired_stats ps = paired_ratio(b_ms, c_ms);
    if (v != verdict_kind::incorrect && v != verdict_kind::invalid) {
        out["speedup"] = finite_or_null(ps.speedup);
        if (ps.ci_valid)
            out["speedup_ci95"] = json{{"low", ps.ci_low}, {"high", ps.ci_high},
                                       {"method", "paired log-ratios, Student t"}, {"t", ps.t_quantile}};
        else
            out["speedup_ci95"] = json{{"low", nullptr}, {"high", nullptr}, {"note", ps.note}};
        json ratios = json::array();
        for (double r : ps.ratios) ratios.push_back(finite_or_null(r));
        out["paired"] = json{{"ratios", ratios},
                             {"geomean_ratio", finite_or_null(ps.geomean_ratio)},
                             {"log_ratio_sd", finite_or_null(ps.log_ratio_sd)}};
        if (std::isfinite(ps.speedup) && ps.speedup > 10)
            flags.push_back(findings::speedup_over_10x(ps.speedup));
    }

    // A run whose reported time (x iters) is longer than the whole process lived is lying.
    for (const auto* side : {&all_c, &all_b})
        for (const auto* r : *side) {
            json iters = line_field(r->line, "iters");
            double k = iters.is_number() && iters.get<double>() > 0 ? iters.get<double>() : 1.0;
            if (r->wall_s > 0 && r->ms * k / 1000.0 > r->wall_s)
                flags.push_back(findings::reported_time_exceeds_wall(label(*r), r->ms, k, r->wall_s));
        }

    if (sb.n >= 2 && sc.n >= 2 && sb.std == 0 && sc.std == 0 && tv.diff_ms != 0)
        warnings.push_back(findings::zero_spread());
    for (const auto& [name, s] : {std::pair{"baseline", sb}, std::pair{"candidate", sc}})
        if (s.n >= 2 && std::isfinite(s.cv()) && s.cv() > 0.05)
            warnings.push_back(findings::high_variance(s.cv() * 100, name));
    if (v == verdict_kind::inconclusive && sb.n >= 2 && std::isfinite(tv.threshold_ms) && sb.mean > 0)
        warnings.push_back(
            findings::inconclusive_within_threshold(tv.diff_ms, -100.0 * tv.diff_ms / sb.mean, tv.threshold_ms));
    out["flags"] = flags;
    out["warnings"] = warnings;
    return out;
}

}  // namespace hotkernel
