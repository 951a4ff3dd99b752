// Per-pair ratios and a Student-t interval on their logs.
#include "stats/paired.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>

namespace hotkernel {

paired_stats paired_ratio(const std::vector<double>& baseline_ms, const std::vector<double>& candidate_ms,
                          double confidence) {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    paired_stats p;
    p.n_pairs = std::min(baseline_ms.size(), candidate_ms.size());
    p.speedup = p.geomean_ratio = p.log_ratio_sd = nan;
    if (p.n_pairs == 0) {
        p.note = "no pairs";
        return p;
    }
    double sum_b = 0, sum_c = 0;
    bool logs_ok = true;
    std::vector<double> logs;
    for (std::size_t i = 0; i < p.n_pairs; ++i) {
        const double b = baseline_ms[i], c = candidate_ms[i];
        sum_b += b;
        sum_c += c;
        p.ratios.push_back(c != 0 ? b / c : nan);
        if (!(b > 0) || !(c > 0) || !std::isfinite(b) || !std::isfinite(c)) logs_ok = false;
        else logs.push_back(std::log(b / c));
    }
    if (sum_c > 0 && std::isfinite(sum_b) && std::isfinite(sum_c)) p.speedup = sum_b / sum_c;
    if (!logs_ok) {
        p.note = "a time is zero, negative or not finite: log-ratios are undefined";
        return p;
    }
    const double n = static_cast<double>(logs.size());
    double mean = 0;
    for (double l : logs) mean += l;
    mean /= n;
    p.geomean_ratio = std::exp(mean);
    if (logs.size() < 2) {
        p.note = "fewer than 2 pairs: no confidence interval";
        return p;
    }
    double ss = 0;
    for (double l : logs) ss += (l - mean) * (l - mean);
    p.log_ratio_sd = std::sqrt(ss / (n - 1));
    boost::math::students_t dist(n - 1);
    p.t_quantile = boost::math::quantile(dist, 0.5 + confidence / 2);
    const double half = p.t_quantile * p.log_ratio_sd / std::sqrt(n);
    p.ci_low = std::exp(mean - half);
    p.ci_high = std::exp(mean + half);
    p.ci_valid = true;
    return p;
}

}  // namespace hotkernel
