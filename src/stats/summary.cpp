// Descriptive statistics: mean, sample std, min/max, median and quartiles.
#include "stats/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/chi_squared.hpp>

namespace hotkernel {

namespace {
constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();
}

double sample_summary::cv() const {
    if (n < 2 || mean == 0 || !std::isfinite(mean)) return k_nan;
    return std / mean;
}

double sorted_quantile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return k_nan;
    if (sorted.size() == 1) return sorted[0];
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

sample_summary summarize(const std::vector<double>& samples) {
    sample_summary s;
    s.n = samples.size();
    std::vector<double> finite;
    finite.reserve(samples.size());
    for (double v : samples) {
        if (std::isfinite(v)) finite.push_back(v);
    }
    s.finite = finite.size() == samples.size();
    std::sort(finite.begin(), finite.end());
    s.min = finite.empty() ? k_nan : finite.front();
    s.max = finite.empty() ? k_nan : finite.back();
    if (s.n == 0 || !s.finite) {
        s.mean = s.std = s.median = s.q1 = s.q3 = k_nan;
        return s;
    }
    // Two-pass mean/variance: exact enough for a few thousand samples, no cancellation issue.
    double sum = 0;
    for (double v : finite) sum += v;
    s.mean = sum / static_cast<double>(s.n);
    if (s.n >= 2) {
        double ss = 0;
        for (double v : finite) ss += (v - s.mean) * (v - s.mean);
        s.std = std::sqrt(ss / static_cast<double>(s.n - 1));
    } else {
        s.std = 0;
    }
    s.median = sorted_quantile(finite, 0.5);
    s.q1 = sorted_quantile(finite, 0.25);
    s.q3 = sorted_quantile(finite, 0.75);
    return s;
}

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json summary_json_ms(const sample_summary& s) {
    return json{{"n", s.n},
                {"mean_ms", finite_or_null(s.mean)},
                {"std_ms", finite_or_null(s.std)},
                {"min_ms", finite_or_null(s.min)},
                {"max_ms", finite_or_null(s.max)},
                {"median_ms", finite_or_null(s.median)},
                {"cv_pct", finite_or_null(s.cv() * 100)}};
}

double spread_upper_bound(double sd, std::size_t count, double confidence) {
    if (count < 2 || !std::isfinite(sd) || sd < 0) return std::numeric_limits<double>::quiet_NaN();
    const double df = static_cast<double>(count - 1);
    const double c = std::clamp(confidence, 0.5, 0.999);
    const double low = boost::math::quantile(boost::math::chi_squared(df), 1.0 - c);
    return sd * std::sqrt(df / low);
}

}  // namespace hotkernel
