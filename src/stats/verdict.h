// The seed's verdict rule, exactly. Pure.
//
//   faster / slower  when |mean_b - mean_c| > 2 * sqrt(std_b^2/n_b + std_c^2/n_c)
//   inconclusive     otherwise (equality at the threshold is inconclusive: the rule is strict)
//   incorrect        the candidate printed ok=false in any run (no speedup reported then)
//   invalid          the scripts disagree on shape/dtype/iters/seed/timer/protocol, or the
//                    baseline failed its own check
// With equal n on both sides (verify always runs n pairs) this is the seed's formula.
// Precedence: invalid > incorrect > the timing rule (a comparison of mismatched scripts says
// nothing about the candidate's correctness either).
//
// Edge cases: n < 2 on either side → inconclusive (no spread can be estimated, so no difference
// can be called); any NaN/Inf mean or std → inconclusive; zero variance on both sides → the
// threshold is 0, so any difference at all is decisive (the rule as written; verify warns).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hotkernel {

enum class verdict_kind { faster, slower, inconclusive, incorrect, invalid };

std::string_view to_string(verdict_kind v);

struct timing_verdict {
    verdict_kind kind = verdict_kind::inconclusive;
    double diff_ms = 0;       ///< mean_b - mean_c (positive: the candidate is faster)
    double threshold_ms = 0;  ///< 2 * sqrt(std_b^2/n_b + std_c^2/n_c); NaN when undefined
    std::string note;         ///< why the rule could not be applied, when it could not
};

/// The timing part of the rule (faster / slower / inconclusive).
timing_verdict decide_timing(double mean_b, double std_b, std::size_t n_b, double mean_c, double std_c,
                             std::size_t n_c);

/// Applies the precedence: any invalid reason → invalid; else any incorrect reason →
/// incorrect; else the timing verdict.
verdict_kind final_verdict(const timing_verdict& timing, const std::vector<std::string>& invalid_reasons,
                           const std::vector<std::string>& incorrect_reasons);

}  // namespace hotkernel
