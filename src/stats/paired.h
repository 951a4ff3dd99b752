// Paired statistics of interleaved baseline/candidate runs. Pure.
//
// Each pair i gives ratio_i = baseline_i / candidate_i (> 1: the candidate was faster in that
// pair). The reported speedup is mean_b / mean_c (the seed's number). Beside it, the 95%
// confidence interval comes from the per-pair log-ratios: exp(mean(l) ± t_{0.975,n-1}·sd(l)/√n),
// Student's t from Boost.Math. Pairing cancels slow drift (clocks, temperature) that hits both
// scripts of a pair alike.
//
// Edge cases: fewer than 2 pairs → no interval (ci_valid false); a non-positive or non-finite
// time in a pair → no interval (a log-ratio is undefined); all log-ratios equal → the interval
// collapses to that ratio; baseline and candidate of different lengths → only the common
// prefix is paired.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace hotkernel {

struct paired_stats {
    std::size_t n_pairs = 0;
    std::vector<double> ratios;   ///< baseline_i / candidate_i
    double speedup = 0;           ///< mean_b / mean_c; NaN when mean_c is 0 or undefined
    double geomean_ratio = 0;     ///< exp(mean log-ratio); NaN when undefined
    double log_ratio_sd = 0;      ///< sample sd of the log-ratios (n-1)
    bool ci_valid = false;
    double ci_low = 0;            ///< 95% CI of the paired ratio (geometric mean)
    double ci_high = 0;
    double t_quantile = 0;        ///< t_{0.975, n-1} used
    std::string note;             ///< why there is no interval, when there is none
};

paired_stats paired_ratio(const std::vector<double>& baseline_ms, const std::vector<double>& candidate_ms,
                          double confidence = 0.95);

}  // namespace hotkernel
