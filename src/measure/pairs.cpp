// The ABBA pair loop (see pairs.h).
#include "measure/pairs.h"

#include <cmath>

#include <fmt/format.h>

#include "stats/paired.h"
#include "stats/stopping.h"
#include "measure/parent_clock.h"
#include "measure/workloads.h"
#include "util/strings.h"

namespace hotkernel {
namespace {

/// A run the parent's clock voided and nothing else: ok by its own checks, every other part of
/// it clean (no process left behind, no ending after its result, no finding of hotkernel's).
bool voided_by_clock_alone(const run_record& r) {
    if (r.status != run_status::invalid || !r.strays.empty() || !r.shm_removed.empty() ||
        !r.ended_after_result.empty() || !r.line.is_object())
        return false;
    const auto said = r.line.find("reason");  // the line's own reason: hotkernel voided it for nothing else
    return said != r.line.end() && said->is_string() && said->get<std::string>() == r.reason &&
           parent_clock_only_cause(r.line);
}

std::vector<double> side_ms(const std::vector<run_record>& v) {
    std::vector<double> ms;
    for (const auto& x : v) ms.push_back(x.ms);
    return ms;
}

/// Why the pairs so far settle the verdict ("" while they do not): a one-shape target by its
/// times; a target with workloads once every workload has settled, each by its own times and
/// once for good (`settled_after` keeps when; a workload settled stays settled).
std::string settled(const compare_input& in, const stopping_rule& rule, std::map<std::string, std::size_t>& settled_after) {
    if (in.baseline.empty() || !has_workloads(in.baseline.front().line)) {
        const stop_decision d = should_stop(side_ms(in.baseline), side_ms(in.candidate), rule);
        return d.kind == stop_kind::go_on ? "" : d.why;
    }
    const auto parts = split_by_workload(in);
    bool all = true;
    for (const auto& [name, part] : parts) {
        if (settled_after.contains(name)) continue;
        const stop_decision d = should_stop(side_ms(part.baseline), side_ms(part.candidate), rule);
        if (d.kind == stop_kind::go_on) all = false;
        else settled_after[name] = in.baseline.size();
    }
    if (!all) return "";
    std::vector<std::string> when;
    for (const auto& [name, part] : parts) when.push_back(fmt::format("{} after {}", name, settled_after[name]));
    return fmt::format("stopped after {} pairs: every workload is settled, each by its own pairs ({})",
                       in.baseline.size(), join(when));
}

}  // namespace

pair_outcome run_pairs(const pair_plan& plan, process_runner& runner, const cancel_token& cancel,
                       run_launcher& launcher, const pair_progress& progress) {
    pair_outcome out;
    compare_input& in = out.runs;
    std::string& stopped = out.stopped;
    const std::size_t warmup = plan.warmup, n = plan.n;
    const std::size_t pairs = warmup + n;
    std::size_t sequence = 0;
    // Progress is reported per pair (a pair is the unit the verdict grows by): half the
    // notifications of a report per run, and each says what the pairs so far decide.
    progress(0, static_cast<double>(pairs), "starting");
    for (std::size_t p = 0; p < pairs && stopped.empty(); ++p) {
        const bool warm = p < warmup;
        const std::size_t index = warm ? p + 1 : p - warmup + 1;
        const std::size_t total = warm ? warmup : n;
        // ABBA: B C, C B, B C, ... so a linear drift hits both sides alike.
        const bool baseline_first = p % 2 == 0;
        for (int k = 0; k < 2; ++k) {
            const bool is_b = (k == 0) == baseline_first;
            run_request req{.script = is_b ? plan.baseline : plan.candidate, .args = plan.args,
                            .role = is_b ? "baseline" : "candidate", .index = index, .total = total, .warmup = warm,
                            .python = plan.python, .timeout_s = plan.timeout_s, .env = {}};
            run_record r = run_once(req, runner, cancel, launcher);
            r.sequence = ++sequence;
            if (plan.rerun_clock_voided && out.voided.empty() && voided_by_clock_alone(r)) {
                progress(static_cast<double>(p), static_cast<double>(pairs),
                         fmt::format("{} run {} voided by the parent's clock alone: running it again once", req.role,
                                     index));
                std::string why = r.reason;
                out.voided.push_back(std::move(r));
                r = run_once(req, runner, cancel, launcher);
                r.sequence = ++sequence;
                r.rerun_of = std::move(why);
            }
            auto& dest = warm ? (is_b ? in.warmup_baseline : in.warmup_candidate) : (is_b ? in.baseline : in.candidate);
            const bool failed = r.ok.has_value() && !*r.ok;
            dest.push_back(std::move(r));
            // ok=false in any run decides the verdict (incorrect, or invalid for the baseline);
            // more runs cannot change it. Finish the pair so both sides have a run to report.
            if (failed && plan.stop_early && stopped.empty())
                stopped = fmt::format("stopped after {} {} printed ok=false: the verdict cannot change", req.role,
                                      warm ? "warm-up run " + std::to_string(index) : "run " + std::to_string(index));
        }
        std::string msg = fmt::format("{}pair {} of {}", warm ? "warm-up " : "", index, total);
        if (!in.baseline.empty() && !in.candidate.empty()) {
            const paired_stats ps = paired_ratio(side_ms(in.baseline), side_ms(in.candidate));
            if (std::isfinite(ps.speedup)) msg += fmt::format(": speedup so far {:.3f}x", ps.speedup);
        }
        progress(static_cast<double>(p + 1), static_cast<double>(pairs), msg);
        if (!warm && plan.stop_early && stopped.empty() && p + 1 < pairs)
            stopped = settled(in, plan.rule, out.settled_after);
    }
    // A stop on a failed warm-up run leaves no timed run: the comparison needs at least one a
    // side, so the warm-up pair stands in (moved, not copied: each run is judged once).
    if (in.baseline.empty() || in.candidate.empty()) {
        in.baseline = std::move(in.warmup_baseline);
        in.candidate = std::move(in.warmup_candidate);
        in.warmup_baseline.clear();
        in.warmup_candidate.clear();
    }
    return out;
}

}  // namespace hotkernel
