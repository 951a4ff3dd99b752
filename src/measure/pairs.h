// The pair loop of verify: baseline and candidate runs in ABBA order (pair 1 baseline first,
// pair 2 candidate first, ...), warm-up pairs first, with stop-early and progress. Each run
// goes through run_once; what the loop decides is only how many pairs to run.
#pragma once
#include "stats/stopping.h"
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "measure/compare.h"
#include "measure/measure.h"

namespace hotkernel {

struct pair_plan {
    std::filesystem::path baseline, candidate;
    std::vector<std::string> args;  ///< passed to both scripts
    std::size_t n = 10;             ///< timed pairs at most
    std::size_t warmup = 0;         ///< warm-up pairs before them (checked, not timed)
    bool stop_early = true;         ///< stop once the verdict cannot change (stats/paired.h should_stop)
    std::string python;
    double timeout_s = 120;         ///< per run [s]
    stopping_rule rule;             ///< when stop_early stops (its min_effect: the process spread)
    bool rerun_clock_voided = true; ///< run a run the parent's clock alone voided again, once (pair_outcome::voided)
};

struct pair_outcome {
    compare_input runs;   ///< every run, with run_record::sequence set in launch order
    std::string stopped;  ///< why the loop ended before n pairs ("" when it did not)
    /// A target with workloads: the timed pairs after which each workload settled (stop-early per
    /// workload, stats/stopping.h), by name. A settled workload stays settled: its verdict is the
    /// seed's rule on those pairs, as a verify of that shape alone would have stopped there; the
    /// loop runs on while another is not settled. Absent: not settled by the last pair.
    std::map<std::string, std::size_t> settled_after;
    /// Runs voided by the parent's clock alone and run again (at most one a verify): a busy host
    /// can stretch an honest run's windows past their allowance, and a cheat's hidden work does
    /// it again in the rerun. The rerun stands in their place (its rerun_of says why).
    std::vector<run_record> voided;
};

/// (pairs done, pairs planned, message) after each pair, and (0, planned, "starting") first.
using pair_progress = std::function<void(double, double, const std::string&)>;

/// Runs the pairs. A run that fails throws from run_once (tool_error naming it). When a stop
/// on a failed warm-up run leaves no timed run, the warm-up pair stands in for the timed runs
/// (moved, not copied: each run is judged once).
pair_outcome run_pairs(const pair_plan& plan, process_runner& runner, const cancel_token& cancel,
                       run_launcher& launcher, const pair_progress& progress);

}  // namespace hotkernel
