// The kernel tables that profile() and top_kernels() both return, built from the parsed
// ncu / nsys CSVs, so the two tools give the same rows for the same file.
#pragma once
#include <string>

#include "parsers/ncu_csv.h"
#include "parsers/nsys_csv.h"
#include "util/json.h"

namespace hotkernel {

/// {launches_in_file, kernels: [top n launches by duration: id, name, duration_ns, achieved
/// occupancy, DRAM / memory / SM throughput %, registers_per_thread, grid, block, bound, hint]}.
json ncu_kernel_table(const ncu_report& report, std::size_t n);

/// {generation, time_unit_in_file, total_kernel_time_ns, kernel_count, kernels: [top n by
/// total time: name, time_pct, total_ns, calls, avg/med/min/max/std ns]}.
json nsys_kernel_table(const nsys_kern_sum& summary, std::size_t n);

/// The error text for an ncu run or file that profiled nothing, listing what did run.
std::string ncu_nothing_profiled_message(const ncu_report& report, const std::string& regex_note);

}  // namespace hotkernel
