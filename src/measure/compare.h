// The analysis half of verify: from the baseline's and candidate's runs (in pair order) to
// the verdict, its reasons, the paired speedup with its interval, and the implausibility flags
// that need no GPU. Pure: no processes, no clock; verify.cpp adds the launching and the
// measurement record, so this part is unit-testable on hand-made runs.
#pragma once
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

}  // namespace hotkernel
