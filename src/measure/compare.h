// The analysis half of verify: from the baseline's and candidate's runs (in pair order) to
// the verdict, its reasons, the paired speedup with its interval, and the implausibility flags
// that need no GPU; per workload and summed up for a target with several. Pure: no processes, no clock; verify.cpp adds the launching and the
// measurement record, so this part is unit-testable on hand-made runs.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "measure/measure.h"
#include "util/json.h"

namespace hotkernel {

struct compare_input {
    std::vector<run_record> baseline;          ///< timed runs, pair order
    std::vector<run_record> candidate;         ///< timed runs, pair order
    std::vector<run_record> warmup_baseline;   ///< checked for ok and agreement, not timed
    std::vector<run_record> warmup_candidate;
};

/// Every run, warm-ups included, in the order it was launched (run_record::sequence; when a
/// run has none, the order warm-up baseline, warm-up candidate, baseline, candidate).
std::vector<const run_record*> in_launch_order(const compare_input& in);

/// Returns {verdict, reasons, baseline{...}, candidate{...}, diff_ms, threshold_ms,
/// speedup, speedup_ci95{...}, paired{...}, flags[], warnings[]}. A run whose contract says
/// status "invalid" makes the verdict invalid (its reason first among the reasons) and the
/// flags the contract raised join flags[] with their role; speedup and its interval are
/// omitted when the verdict is incorrect or invalid. Decided once, here.
json compare_runs(const compare_input& in);

/// The verdict of a verify, decided once, here. A one-shape target: compare_runs. A target with
/// workloads (workloads.h): each workload judged by compare_runs on its own runs, up to the pair
/// it settled after (settled_after; a later run failing its check still counts), then summed up
/// (stats/aggregate.h): `workloads` (each: name, verdict, reasons, speedup and its interval, the
/// sides, diff, threshold, dims, weight, shapes, roofline_inputs) and `aggregate`, and the summary
/// is the result's `verdict`, `reasons`, `speedup` and `speedup_ci95` (the sides' figures stay
/// the runs' totals). Every workload's flags join `flags` naming their workloads.
json judge_pairs(const compare_input& in, const std::map<std::string, std::size_t>& settled_after = {});

/// The flags the contract raised on run `r` join `flags` with its role, once per id and role.
void add_run_flags(json& flags, const run_record& r);

/// A flag raised for one workload joins `flags` once per id and role, naming the workloads it
/// was raised for (`workloads`).
void merge_workload_flag(json& flags, json f, const std::string& workload);

}  // namespace hotkernel
