// Workloads: a target measured at several shapes in one run. The run's result line then holds
// `workloads`, one entry per shape (its own ms, samples_ms, status, shapes, roofline_inputs, ...),
// and the run-level fields once (python/hotkernel_contract.py's combine_workloads). Everything
// downstream (bench's statistics, verify's verdict, the roofline) works on one shape at a time:
// split_by_workload turns a run into one run_record per shape, each as if that shape had been
// the whole target, so the one-shape code judges each of them unchanged. Pure.
#pragma once
#include <string>
#include <vector>

#include "measure/compare.h"
#include "measure/measure.h"
#include "util/json.h"

namespace hotkernel {

/// True when the line is a run over several workloads (it has a `workloads` array).
bool has_workloads(const json& line);

/// The workloads' names in run order ("M=1", "M=16"); empty for a one-shape line.
std::vector<std::string> workload_names(const json& line);

/// One run_record per workload: the run's fields with that workload's over them (ms, ok, status,
/// reason, flags, samples_ms, shapes, ...); `workload` names it. A one-shape run: itself, alone.
/// A workload missing from the line (the run stopped at an error before it) is absent.
std::vector<run_record> split_by_workload(const run_record& run);

/// A verify's runs split the same way: one compare_input per workload, in the baseline's first
/// timed run's order, each run of it that workload's record (a run without it is left out).
std::vector<std::pair<std::string, compare_input>> split_by_workload(const compare_input& in);

/// Restates a workloads line's status, ok and reason as the worst of its workloads' (error >
/// invalid > incorrect > ok), naming that workload: after hotkernel changed one of them (the
/// parent's clock). A run-level status worse than every workload's (a TARGET that differs) stays.
void restate_run_status(json& line);

}  // namespace hotkernel
