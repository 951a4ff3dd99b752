// Nsight Systems kernel-summary CSV (`nsys stats --report cuda_gpu_kern_sum --format csv`, and
// the older `gpukernsum` in both of its column sets). Pure: text in, rows out, times in ns.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/findings.h"

namespace hotkernel {

struct nsys_kernel_row {
    std::string name;
    double time_pct = 0;             ///< share of total GPU kernel time, as the report gives it
    double total_ns = 0;
    long long instances = 0;
    std::optional<double> avg_ns, med_ns, min_ns, max_ns, stddev_ns;
    int merged_rows = 1;             ///< >1 when grid/block rows of one kernel were added up
};

struct nsys_kern_sum {
    /// "cuda_gpu_kern_sum" (current), "gpukernsum-gridblock" (middle, rows per grid/block),
    /// "gpukernsum-legacy" (Time(%), Average, Minimum, Maximum), "" when no header was found.
    std::string generation;
    std::string time_unit = "ns";    ///< unit of the time columns in the file (ns, us, ms, s)
    std::vector<nsys_kernel_row> kernels;   ///< heaviest first
    bool no_kernel_data = false;     ///< "... does not contain CUDA kernel data."
    bool found_header = false;
    std::vector<finding> warnings;
};

nsys_kern_sum parse_nsys_kern_sum(std::string_view text);

}  // namespace hotkernel
