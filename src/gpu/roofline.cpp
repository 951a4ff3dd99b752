// Roofline maths (see roofline.h). SI units throughout: TFLOPS = 1e12/s, GB/s = 1e9 B/s.
#include "gpu/roofline.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hotkernel {

roofline_result compute_roofline(const roofline_input& in) {
    auto finite_positive = [](double v) { return std::isfinite(v) && v > 0; };
    if (!std::isfinite(in.flops) || in.flops < 0) throw std::invalid_argument("flops must be >= 0");
    if (!finite_positive(in.bytes)) throw std::invalid_argument("bytes must be > 0");
    if (!finite_positive(in.peak_tflops)) throw std::invalid_argument("peak_tflops must be > 0");
    if (!finite_positive(in.peak_mem_gbs)) throw std::invalid_argument("peak_mem_gbs must be > 0");
    if (in.measured_mem_gbs && !finite_positive(*in.measured_mem_gbs))
        throw std::invalid_argument("measured_mem_gbs must be > 0");

    const double peak_flops = in.peak_tflops * 1e12;
    const double peak_bw = in.peak_mem_gbs * 1e9;
    roofline_result r;
    r.arithmetic_intensity = in.flops / in.bytes;
    r.ridge_point = peak_flops / peak_bw;
    r.bound = r.arithmetic_intensity < r.ridge_point ? "memory" : "compute";
    r.attainable_tflops = std::min(peak_flops, r.arithmetic_intensity * peak_bw) / 1e12;
    const double compute_s = in.flops / peak_flops;
    r.attainable_ms = std::max(compute_s, in.bytes / peak_bw) * 1e3;
    if (in.measured_mem_gbs)
        r.attainable_ms_measured = std::max(compute_s, in.bytes / (*in.measured_mem_gbs * 1e9)) * 1e3;
    return r;
}

double bandwidth_at(std::vector<std::pair<double, double>> points, double bytes, double ceiling) {
    auto bad = [](const std::pair<double, double>& p) {
        return !(std::isfinite(p.first) && p.first > 0 && std::isfinite(p.second) && p.second > 0);
    };
    std::erase_if(points, bad);
    if (points.empty() || !(std::isfinite(bytes) && bytes > 0)) return ceiling;
    std::sort(points.begin(), points.end());
    double gbs = points.front().second;
    if (bytes >= points.back().first) {
        gbs = points.back().second;
    } else if (bytes > points.front().first) {
        const auto hi = std::upper_bound(points.begin(), points.end(), bytes,
                                         [](double b, const std::pair<double, double>& p) { return b < p.first; });
        const auto lo = hi - 1;
        const double t = std::log(bytes / lo->first) / std::log(hi->first / lo->first);
        gbs = lo->second + t * (hi->second - lo->second);
    }
    return std::min(gbs, ceiling);
}

}  // namespace hotkernel
