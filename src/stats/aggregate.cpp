// The summary verdict and geometric-mean speedup over workloads (see aggregate.h).
#include "stats/aggregate.h"

#include <cmath>
#include <limits>

#include "stats/paired.h"

namespace hotkernel {

workloads_summary summarize_workloads(const std::vector<workload_outcome>& ws) {
    workloads_summary s;
    for (const auto& w : ws) {
        switch (w.verdict) {
            case verdict_kind::faster: s.faster_on.push_back(w.name); break;
            case verdict_kind::slower: s.slower_on.push_back(w.name); break;
            case verdict_kind::inconclusive: s.inconclusive_on.push_back(w.name); break;
            case verdict_kind::incorrect: s.incorrect_on.push_back(w.name); break;
            case verdict_kind::invalid: s.invalid_on.push_back(w.name); break;
        }
    }
    if (!s.invalid_on.empty()) s.verdict = "invalid";
    else if (!s.incorrect_on.empty()) s.verdict = "incorrect";
    else if (!s.faster_on.empty() && !s.slower_on.empty()) s.verdict = "mixed";
    else if (!s.faster_on.empty()) s.verdict = "faster";
    else if (!s.slower_on.empty()) s.verdict = "slower";
    else s.verdict = "inconclusive";

    const double nan = std::numeric_limits<double>::quiet_NaN();
    double wsum = 0, lsum = 0;
    for (const auto& w : ws) {
        wsum += w.weight;
        lsum += w.weight * std::log(w.speedup);
    }
    s.geomean_speedup = ws.empty() || !(wsum > 0) || !std::isfinite(lsum) ? nan : std::exp(lsum / wsum);

    // Per pair, the weighted mean log-ratio over the workloads; its interval as paired_ratio's.
    std::size_t n = ws.empty() ? 0 : ws.front().baseline_ms.size();
    for (const auto& w : ws) n = std::min({n, w.baseline_ms.size(), w.candidate_ms.size()});
    std::vector<double> g, one;
    for (std::size_t p = 0; p < n && wsum > 0; ++p) {
        double l = 0;
        for (const auto& w : ws) l += w.weight * std::log(w.baseline_ms[p] / w.candidate_ms[p]);
        g.push_back(std::exp(l / wsum));
        one.push_back(1.0);
    }
    const paired_stats ps = paired_ratio(g, one);
    s.ci_valid = ps.ci_valid && std::isfinite(s.geomean_speedup);
    s.ci_low = ps.ci_low;
    s.ci_high = ps.ci_high;
    s.note = s.ci_valid ? "" : (ps.note.empty() ? "a workload has no speedup" : ps.note);
    return s;
}

}  // namespace hotkernel
