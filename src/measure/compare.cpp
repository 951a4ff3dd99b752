// Verdict, reasons, paired speedup and flags from two sets of runs.
#include "measure/compare.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "measure/consistency.h"
#include "measure/workloads.h"
#include "registry/lean.h"
#include "stats/aggregate.h"
#include "util/strings.h"
#include "report/findings.h"
#include "stats/paired.h"
#include "stats/summary.h"
#include "stats/verdict.h"

namespace hotkernel {
namespace {

// The run is invalid and its record says why (the harness saw a patch; the parent's clock broke; hotkernel voided it).
bool found_invalid(const run_record& r) {
    return r.status == run_status::invalid && !r.reason.empty();
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

void add_run_flags(json& flags, const run_record& r) {
    for (const auto& f : r.contract_flags) {
        json g = f;
        g["role"] = r.role;
        bool dup = false;
        for (const auto& h : flags)
            dup = dup || (h.contains("role") && h["role"] == r.role && h.contains("id") && g.contains("id") &&
                          h["id"] == g["id"]);
        if (!dup) flags.push_back(std::move(g));
    }
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
    // A run the harness found invalid also says ok=false; its reason is given below
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

    // Agreement between the scripts (first timed lines) and within each script. A line the parent
    // made in place of the harness's (by_parent: trusted_launcher.h) says nothing of the script:
    // passed over.
    const auto made_by_parent = [](const run_record* r) {
        return r->line.is_object() && r->line.value("by_parent", false);
    };
    const auto said_by_script = [&](const std::vector<const run_record*>& runs) -> const run_record* {
        for (const auto* r : runs)
            if (!made_by_parent(r)) return r;
        return nullptr;
    };
    const run_record* first_b = said_by_script(all_b);
    const run_record* first_c = said_by_script(all_c);
    if (first_b && first_c)
        for (const auto& d : compare_lines(first_b->line, first_c->line)) {
            // A candidate timed another way than its baseline because its calls could not be
            // (a CUDA graph that could not capture them, a clock that saw none of their work):
            // that is what it did, said first.
            const json& cl = first_c->line;
            if (d.rfind("timer", 0) == 0 && cl.is_object() && cl.contains("timer_note") && cl["timer_note"].is_string())
                invalid.push_back("the candidate's calls could not be timed as the baseline's were: " +
                                  cl["timer_note"].get<std::string>().substr(0, 300) +
                                  " (work on another stream or thread, or a sync inside the call, does this)");
            invalid.push_back("the scripts disagree on " + d);
        }
    std::vector<json> lb, lc;
    for (const auto* r : all_b)
        if (!made_by_parent(r)) lb.push_back(r->line);
    for (const auto* r : all_c)
        if (!made_by_parent(r)) lc.push_back(r->line);
    // Every measured run of a target takes the target's number of samples; one that reports fewer
    // (a harness cut short, a result written early) was not the harness's whole measurement.
    {
        std::map<std::size_t, std::vector<std::string>> by_count;
        for (const auto* side : {&all_b, &all_c})
            for (const run_record* r : *side)
                if (r->status == run_status::ok && r->line.contains("samples_ms") && r->line["samples_ms"].is_array())
                    by_count[r->line["samples_ms"].size()].push_back(label(*r));
        if (by_count.size() > 1) {
            std::string all;
            for (const auto& [n, runs] : by_count)
                all += fmt::format("{}{} sample(s): {}", all.empty() ? "" : "; ", n, join(runs));
            invalid.push_back("the runs report different numbers of timed samples (" + shorten(all, 300) +
                              "): every run of a target takes the same number, so one was cut short");
        }
    }
    for (const auto& u : unstable_fields(lb, "baseline")) invalid.push_back("a script changed between runs: " + u);
    for (const auto& u : unstable_fields(lc, "candidate")) invalid.push_back("a script changed between runs: " + u);
    if (first_b && first_c) {
        json kb = line_field(first_b->line, "rotate_k"), kc = line_field(first_c->line, "rotate_k");
        // A run's sets are one a call, as many as its calls per sample, which the CPU sizes by
        // time (55 in one run, 56 in the next): the same cache state where both sides have the
        // sets their caches need (cache_k) and their counts are within 10%, or both twice that
        // (a set's reuse then passes 3x the cache, on the CPU's factor of 1.5).
        auto sets_over = [](const json& line, const json& k) {  // rotate_k over cache_k, or 0
            const json c = line_field(line, "cache_k");
            return k.is_number() && c.is_number() && c.get<double>() > 1 ? k.get<double>() / c.get<double>() : 0.0;
        };
        const double ob = sets_over(first_b->line, kb), oc = sets_over(first_c->line, kc);
        const bool same_state = ob >= 1 && oc >= 1 &&
                                ((ob >= 2 && oc >= 2) || std::max(ob, oc) <= 1.1 * std::min(ob, oc));
        if (!kb.is_null() && !kc.is_null() && kb != kc && !same_state)
            warnings.push_back(findings::rotate_k_differs(dump_line(kb), dump_line(kc)));
        else if (kb == json(1) && kc == json(1))
            warnings.push_back(findings::inputs_not_rotated());
    }

    std::vector<double> b_ms, c_ms;
    for (const auto& r : in.baseline) b_ms.push_back(r.ms);
    for (const auto& r : in.candidate) c_ms.push_back(r.ms);
    // The contract's own findings on each run, in launch order: a run it declared invalid (a
    // patched harness, a changed TARGET, threads working after the call, a forged result) voids
    // the comparison, and the flags it raised join ours, once per flag and role.
    std::vector<std::string> contract_invalid;
    for (const run_record* r : in_launch_order(in)) {
        add_run_flags(flags, *r);
        if (found_invalid(*r)) {
            std::string why = fmt::format("the {} run {} is invalid: {}", r->role, r->index, r->reason);
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

void merge_workload_flag(json& flags, json f, const std::string& workload) {
    for (auto& h : flags)
        if (h.value("id", "") == f.value("id", "") && h.value("role", "") == f.value("role", "")) {
            if (!h.contains("workloads")) h["workloads"] = json::array();
            h["workloads"].push_back(workload);
            return;
        }
    f.erase("workload");
    f["workloads"] = json::array({workload});
    flags.push_back(std::move(f));
}

namespace {

/// A workload's timed runs up to the pair it settled after (pair_outcome::settled_after).
compare_input first_pairs(const compare_input& part, std::size_t pairs) {
    compare_input c = part;
    if (c.baseline.size() > pairs) c.baseline.resize(pairs);
    if (c.candidate.size() > pairs) c.candidate.resize(pairs);
    return c;
}

/// Each workload judged as a target of its own (the seed's rule, its speedup and interval) on the pairs up to where it settled, as a verify of that shape alone would have
/// stopped; then summed up (stats/aggregate.h): the geometric mean of those speedups, its
/// interval over every pair (each holds every workload). The result's `workloads` and `aggregate`.
void judge_workloads(const compare_input& in, const std::map<std::string, std::size_t>& settled_after, json& result,
                     json& flags) {
    json list = json::array();
    std::vector<workload_outcome> outcomes;
    bool any_early = false;
    for (const auto& [name, whole] : split_by_workload(in)) {
        if (whole.baseline.empty() || whole.candidate.empty()) continue;
        const auto at = settled_after.find(name);
        const json all_pairs = compare_runs(whole);
        // Only the timing stops early: a run found incorrect or invalid after the settle point
        // decides the verdict as it would have in any run.
        const bool decided_by_checks = all_pairs["verdict"] == "incorrect" || all_pairs["verdict"] == "invalid";
        const bool early = at != settled_after.end() && at->second < whole.baseline.size() && !decided_by_checks;
        const compare_input part = early ? first_pairs(whole, at->second) : whole;
        any_early = any_early || early;
        const json cmp = early ? compare_runs(part) : all_pairs;
        const json& bl = part.baseline.front().line;
        json w{{"name", name}, {"verdict", cmp["verdict"]}};
        if (early) w["settled_after_pairs"] = at->second;  // its verdict and figures: those pairs'
        for (const char* k : {"dims", "weight"})
            if (bl.contains(k)) w[k] = bl[k];
        if (cmp["verdict"] != "faster" && cmp["verdict"] != "slower" && cmp["verdict"] != "inconclusive") {
            json reasons = cmp["reasons"];
            // What the check found, from the first run it failed in (compare_runs names the run).
            for (const auto* side : {&part.candidate, &part.baseline})
                for (const auto& r : *side)
                    if (r.ok == false && !r.reason.empty() && reasons.size() < 4) {
                        reasons.push_back(fmt::format("{} run {}: {}", r.role, r.index, r.reason.substr(0, 300)));
                        break;
                    }
            w["reasons"] = reasons;
        }
        for (const char* k : {"speedup", "speedup_ci95"})
            if (cmp.contains(k)) w[k] = cmp[k];
        for (const char* side : {"baseline", "candidate"})
            w[side] = pick(cmp[side], {"n", "mean_ms", "std_ms", "min_ms", "median_ms"});
        w["diff_ms"] = cmp["diff_ms"];
        w["threshold_ms"] = cmp["threshold_ms"];
        if (bl.contains("shapes")) w["shapes"] = bl["shapes"];
        if (bl.contains("roofline_inputs")) w["roofline_inputs"] = bl["roofline_inputs"];
        for (const auto& f : all_pairs["flags"]) merge_workload_flag(flags, f, name);  // what any of its runs raised
        list.push_back(std::move(w));
        // The geometric mean is of the speedups listed; its interval is over every pair (each holds
        // every workload).
        workload_outcome o{.name = name, .verdict = verdict_kind::inconclusive,
                           .weight = bl.contains("weight") && bl["weight"].is_number() ? bl["weight"].get<double>() : 1.0,
                           .speedup = cmp.value("speedup", json()).is_number() ? cmp["speedup"].get<double>() : NAN,
                           .baseline_ms = {}, .candidate_ms = {}};
        for (auto v : {verdict_kind::faster, verdict_kind::slower, verdict_kind::inconclusive, verdict_kind::incorrect,
                       verdict_kind::invalid})
            if (cmp["verdict"] == to_string(v)) o.verdict = v;
        for (const auto& r : whole.baseline) o.baseline_ms.push_back(r.ms);
        for (const auto& r : whole.candidate) o.candidate_ms.push_back(r.ms);
        outcomes.push_back(std::move(o));
    }
    const workloads_summary s = summarize_workloads(outcomes);
    json agg{{"verdict", s.verdict},
             {"faster_on", s.faster_on},
             {"slower_on", s.slower_on},
             {"inconclusive_on", s.inconclusive_on},
             {"geomean_speedup", std::isfinite(s.geomean_speedup) ? json(s.geomean_speedup) : json(nullptr)},
             {"rule", "faster: faster on at least one workload and slower on none; slower: slower on at least one "
                      "and faster on none; mixed: both; inconclusive: none decisive; incorrect/invalid: any workload"}};
    if (!s.incorrect_on.empty()) agg["incorrect_on"] = s.incorrect_on;
    if (!s.invalid_on.empty()) agg["invalid_on"] = s.invalid_on;
    agg["geomean_ci95"] = s.ci_valid ? json{{"low", s.ci_low}, {"high", s.ci_high},
                                            {"method", "per pair, the weighted mean log-ratio over the workloads; Student t"}}
                                     : json{{"low", nullptr}, {"high", nullptr}, {"note", s.note}};
    if (s.ci_valid && any_early)
        agg["geomean_ci95"]["pairs"] = "every pair; a workload settled early has its speedup from its own pairs";
    result["workloads"] = list;
    result["aggregate"] = agg;
}


}  // namespace

json judge_pairs(const compare_input& in, const std::map<std::string, std::size_t>& settled_after) {
    json out = compare_runs(in);
    const bool with_workloads = !in.baseline.empty() && has_workloads(in.baseline.front().line);
    if (!with_workloads) return out;
    judge_workloads(in, settled_after, out, out["flags"]);
    // The summary is the verdict; the sides' figures stay the runs' totals.
    const json& agg = out["aggregate"];
    const std::string v = agg["verdict"];
    out["verdict"] = v;
    if (v == "faster" || v == "slower" || v == "mixed" || v == "inconclusive") {
        out["speedup"] = agg["geomean_speedup"];
        out["speedup_ci95"] = agg["geomean_ci95"];
        if (v != "inconclusive") {
            std::vector<std::string> where;
            for (const auto& w : out["workloads"])
                if (w["verdict"] != "inconclusive")
                    where.push_back(fmt::format("{} at {}", w["verdict"].get<std::string>(), w["name"].get<std::string>()));
            out["reasons"] = json::array({fmt::format("{} over {} workloads: {}", v, out["workloads"].size(), join(where))});
        } else {
            out["reasons"] = json::array({"no workload is decisive under the seed's rule"});
        }
    } else {
        out.erase("speedup");
        out.erase("speedup_ci95");
        out.erase("paired");
        if (v == "incorrect" || v == "invalid") {
            json reasons = json::array();
            for (const auto& w : out["workloads"])
                if (w["verdict"] == v && w.contains("reasons"))
                    for (const auto& r : w["reasons"])
                        if (reasons.size() < 6)
                            reasons.push_back(fmt::format("{} at {}: {}", v, w["name"].get<std::string>(), r.get<std::string>()));
            if (!reasons.empty()) out["reasons"] = reasons;
        }
    }
    return out;
}

}  // namespace hotkernel
