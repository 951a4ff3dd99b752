// The summary of a verify over several workloads (shapes), from each workload's own verdict
// under the seed's rule. Pure.
//
//   invalid       any workload invalid
//   incorrect     any workload incorrect (naming them)
//   faster        faster on at least one workload and slower on none
//   slower        slower on at least one and faster on none
//   mixed         faster on some and slower on others (listing where): a loss is never averaged away
//   inconclusive  no workload decisive
//
// The geometric-mean speedup is exp(Σ w·log s / Σ w) over the workloads' speedups (mean_b /
// mean_c, the seed's number), w their weights. Its 95% interval comes from the pairs: pair p gives
// g_p = Σ w·log(b_pw / c_pw) / Σ w (every workload is timed in every run, so each pair holds all
// of them), and the interval is exp(mean g ± t·sd(g)/√n), as paired.h does for one shape.
#pragma once
#include <string>
#include <vector>

#include "stats/verdict.h"

namespace hotkernel {

struct workload_outcome {
    std::string name;
    verdict_kind verdict = verdict_kind::inconclusive;
    double weight = 1;
    double speedup = 0;                ///< mean_b / mean_c (NaN when there is none)
    std::vector<double> baseline_ms;   ///< per timed run, pair order
    std::vector<double> candidate_ms;
};

struct workloads_summary {
    std::string verdict;  ///< faster, slower, mixed, inconclusive, incorrect, invalid
    std::vector<std::string> faster_on, slower_on, inconclusive_on, incorrect_on, invalid_on;
    double geomean_speedup = 0;  ///< NaN when a workload has no speedup
    bool ci_valid = false;
    double ci_low = 0, ci_high = 0;
    std::string note;  ///< why there is no interval, when there is none
};

workloads_summary summarize_workloads(const std::vector<workload_outcome>& ws);

}  // namespace hotkernel
