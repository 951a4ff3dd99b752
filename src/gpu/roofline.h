// Roofline maths, pure: arithmetic intensity, ridge point, bound and the time floor of a
// kernel from its flops and bytes moved and the card's peak compute and bandwidth.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hotkernel {

struct roofline_input {
    double flops = 0;              ///< floating-point (or int) operations of one call
    double bytes = 0;              ///< DRAM bytes one call moves (read + written)
    double peak_tflops = 0;        ///< peak compute for the dtype [1e12 op/s]
    double peak_mem_gbs = 0;       ///< peak DRAM bandwidth [1e9 B/s]
    std::optional<double> measured_mem_gbs;  ///< bandwidth a streaming copy reaches [1e9 B/s]
};

struct roofline_result {
    double arithmetic_intensity = 0;  ///< flops / bytes [flop/B]
    double ridge_point = 0;           ///< peak flops / peak bandwidth [flop/B]
    std::string bound;                ///< "memory" when intensity < ridge point, else "compute"
    double attainable_tflops = 0;     ///< min(peak, intensity x bandwidth) [TFLOPS]
    double attainable_ms = 0;         ///< max(flops / peak, bytes / bandwidth) [ms]
    /// max(flops / peak, bytes / measured bandwidth) [ms]; set when measured_mem_gbs is.
    std::optional<double> attainable_ms_measured;
};

/// Throws std::invalid_argument when flops < 0, bytes <= 0, or a peak/bandwidth <= 0
/// (callers validate first and turn user mistakes into tool_errors).
roofline_result compute_roofline(const roofline_input& in);

/// A streaming copy's bandwidth at `bytes` a call [GB/s], from what calibrate measured at several
/// sizes (`points`: bytes a call, GB/s): interpolated in log(bytes), the nearest end's beyond
/// them, and never above `ceiling` (the large copy's mem_gbs, which the floor is at large sizes).
/// A small copy does not reach the large one's bandwidth (its kernel's ramp and tail are a larger
/// share of it): a kernel of that size is held to what a copy of its size does. Points that are
/// not finite and positive are left out; none left: `ceiling`. Pure.
double bandwidth_at(std::vector<std::pair<double, double>> points, double bytes, double ceiling);

}  // namespace hotkernel
