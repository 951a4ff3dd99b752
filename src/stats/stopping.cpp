#include "stats/stopping.h"

#include <cmath>

#include <fmt/format.h>

#include "stats/summary.h"
#include "stats/verdict.h"

namespace hotkernel {

stop_decision should_stop(const std::vector<double>& b, const std::vector<double>& c, const stopping_rule& rule) {
    stop_decision d;
    const std::size_t n = std::min(b.size(), c.size());
    if (n < 2 || b.size() != c.size()) return d;
    const sample_summary sb = summarize(b), sc = summarize(c);
    const timing_verdict t = decide_timing(sb.mean, sb.std, n, sc.mean, sc.std, n);
    if (!std::isfinite(t.threshold_ms)) return d;
    const double diff = std::fabs(t.diff_ms);
    const bool big_enough = !(rule.min_effect > 0) || (sb.mean > 0 && diff >= rule.min_effect * sb.mean);
    if (rule.fast_pairs > 0 && n == rule.fast_pairs && n < rule.min_decisive) {
        const bool measured = rule.fast_min_effect > 0;
        const double factor = measured ? rule.fast_factor : rule.fast_factor_unmeasured;
        const bool large = !measured || (sb.mean > 0 && diff >= rule.fast_min_effect * sb.mean);
        if (diff > factor * t.threshold_ms && large) {
            d.kind = stop_kind::decisive;
            d.why = fmt::format("stopped after {} pairs (one ABBA cycle): |diff| {:.4g} ms is over {:g}x the seed's "
                                "threshold ({:.4g} ms){}",
                                n, diff, factor, t.threshold_ms,
                                measured ? fmt::format(" and {:.3g}% of the baseline, at least 3x the spread between "
                                                       "processes",
                                                       100 * diff / sb.mean)
                                         : "");
        }
        return d;
    }
    if (n >= rule.min_decisive && diff > rule.decisive_factor * t.threshold_ms && big_enough) {
        d.kind = stop_kind::decisive;
        d.why = fmt::format("stopped after {} pairs: |diff| {:.4g} ms is over {:g}x the seed's threshold ({:.4g} ms)",
                            n, diff, rule.decisive_factor, t.threshold_ms);
    } else if (n >= rule.min_futile && diff < rule.futile_factor * t.threshold_ms) {
        d.kind = stop_kind::settled_inconclusive;
        d.why = fmt::format("stopped after {} pairs: |diff| {:.4g} ms is under {}the seed's threshold ({:.4g} ms): "
                            "inconclusive, and unlikely to become decisive",
                            n, diff, rule.futile_factor == 1.0 ? "" : fmt::format("{:g}x ", rule.futile_factor),
                            t.threshold_ms);
    }
    return d;
}

}  // namespace hotkernel
