// Descriptive statistics of a sample of times. Pure.
//
// Edge cases (documented, tested):
//  - n == 0: every statistic is NaN.
//  - n == 1: std is 0 (no spread can be estimated; callers that need a spread check n >= 2).
//  - any NaN/Inf sample: mean, std, median and quartiles are NaN, `finite` is false; min/max
//    are taken over the finite samples only (NaN when there are none).
//  - std is the sample standard deviation (divisor n-1), the one the verdict rule uses.
//  - median and quartiles interpolate linearly between order statistics (numpy's default).
#pragma once
#include <cstddef>
#include <vector>

#include "util/json.h"

namespace hotkernel {

struct sample_summary {
    std::size_t n = 0;
    double mean = 0;
    double std = 0;  ///< sample standard deviation (n-1)
    double min = 0;
    double max = 0;
    double median = 0;
    double q1 = 0;  ///< 25th percentile
    double q3 = 0;  ///< 75th percentile
    bool finite = true;

    /// Coefficient of variation std/mean (NaN when mean is 0 or n < 2).
    [[nodiscard]] double cv() const;
};

sample_summary summarize(const std::vector<double>& samples);

/// Linear-interpolated quantile of already-sorted finite values, q in [0,1].
double sorted_quantile(const std::vector<double>& sorted, double q);

/// {"n", "mean_ms", "std_ms", "min_ms", "max_ms", "median_ms", "cv_pct"}; non-finite → null.
/// bench's result and each side of verify's comparison are this.
json summary_json_ms(const sample_summary& s);

/// An upper confidence bound on a standard deviation (or a coefficient of variation) estimated
/// from `count` values: sd * sqrt((count-1) / chi2_{1-confidence}(count-1)). A spread from a few
/// processes is often well under the true one (from 6, under 57% of it one time in ten), and a
/// floor set from it then lets through the differences it exists to stop; the bound is above the
/// true spread with probability `confidence` on normal noise. NaN when count < 2 or sd is not
/// finite; confidence is clamped into (0.5, 0.999).
double spread_upper_bound(double sd, std::size_t count, double confidence = 0.95);

/// A double as JSON, null when not finite (JSON has no NaN).
json finite_or_null(double v);

}  // namespace hotkernel
