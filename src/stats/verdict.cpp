// The seed's verdict rule.
#include "stats/verdict.h"

#include <cmath>
#include <limits>

namespace hotkernel {

std::string_view to_string(verdict_kind v) {
    switch (v) {
        case verdict_kind::faster: return "faster";
        case verdict_kind::slower: return "slower";
        case verdict_kind::inconclusive: return "inconclusive";
        case verdict_kind::incorrect: return "incorrect";
        case verdict_kind::invalid: return "invalid";
    }
    return "invalid";
}

timing_verdict decide_timing(double mean_b, double std_b, std::size_t n_b, double mean_c, double std_c,
                             std::size_t n_c) {
    timing_verdict t;
    t.diff_ms = mean_b - mean_c;
    if (n_b < 2 || n_c < 2) {
        t.threshold_ms = std::numeric_limits<double>::quiet_NaN();
        t.note = "fewer than 2 runs on a side: no spread to compare against";
        return t;
    }
    if (!std::isfinite(mean_b) || !std::isfinite(mean_c) || !std::isfinite(std_b) || !std::isfinite(std_c)) {
        t.threshold_ms = std::numeric_limits<double>::quiet_NaN();
        t.note = "a mean or standard deviation is not finite";
        return t;
    }
    t.threshold_ms = 2.0 * std::sqrt(std_b * std_b / static_cast<double>(n_b) + std_c * std_c / static_cast<double>(n_c));
    if (std::fabs(t.diff_ms) > t.threshold_ms) t.kind = t.diff_ms > 0 ? verdict_kind::faster : verdict_kind::slower;
    return t;
}

verdict_kind final_verdict(const timing_verdict& timing, const std::vector<std::string>& invalid_reasons,
                           const std::vector<std::string>& incorrect_reasons) {
    if (!invalid_reasons.empty()) return verdict_kind::invalid;
    if (!incorrect_reasons.empty()) return verdict_kind::incorrect;
    return timing.kind;
}

}  // namespace hotkernel
