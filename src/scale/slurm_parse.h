// Slurm's text answers, parsed (pure), and the batch script of a job array rendered. Formats, as
// Slurm 22.05 prints them (captures in tests/fixtures/slurm/, from scripts/slurm-up):
//   sbatch --parsable            "12" or "12;cluster"
//   squeue -h -t all -j IDS -o '%i|%T|%r'   "12_3|RUNNING|None", a pending or cancelled rest of an
//                                array as one row "12_[2-5%2]|PENDING|Resources", a plain job "13|…"
//   sacct -X -P -n -j IDS -o JobID,State,ExitCode   "12_3|FAILED|3:0", "13|CANCELLED by 0|0:0",
//                                "12_[0-5]|CANCELLED by 0|0:0"
// Text formats only: 22.05's --json ignores -j and reports wrong exit codes (reference/scale.md §3.8).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process/runner.h"

namespace hotkernel::scale {

/// One row of squeue or sacct: the array (or plain job) id, the tasks it covers (empty for a
/// plain job), the state's first word, and the reason (squeue) or exit code (sacct).
struct slurm_row {
    std::string job;          ///< "12"
    std::vector<int> tasks;   ///< {3}, {2,3,4,5}; empty: not an array task
    std::string state;        ///< "RUNNING", "CANCELLED" (the "by 0" dropped)
    std::string detail;       ///< squeue's reason ("Resources") or sacct's ExitCode ("3:0")
    std::string node;         ///< a fourth column, when asked for (%N, NodeList)
};

/// Rows of `squeue … -o '%i|%T|%r[|%N]'` or `sacct … -o JobID,State,ExitCode[,NodeList]` (-P -n); lines that are
/// not such a row (a warning) are skipped. sacct's step rows ("12.batch") are skipped too.
std::vector<slurm_row> parse_slurm_rows(std::string_view text);

/// "[2-5,7%2]" or "2-5,7" → {2,3,4,5,7}; nullopt when it does not parse. Ranges above 1e6 refused.
std::optional<std::vector<int>> parse_task_range(std::string_view text);

/// The job id in `sbatch --parsable`'s answer; "" when it holds none.
std::string sbatch_job_id(std::string_view out);

/// True for a state a job does not leave: COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL,
/// OUT_OF_MEMORY, PREEMPTED, BOOT_FAIL, DEADLINE, REVOKED, SPECIAL_EXIT.
bool is_final_state(std::string_view state);

/// What a final state means for the job, in words for its result ("the job ran past its time
/// limit (TIMEOUT)", …); "" for COMPLETED.
std::string describe_state(std::string_view state, std::string_view exit_code = "");

/// Slurm's --time value for a limit in seconds: whole minutes, rounded up, at least 1.
std::string slurm_minutes(double seconds);

/// The batch script of one job array: task i runs specs[i] (its cwd, environment changes and
/// argv, shell-quoted) with exec; an unknown task id exits 99 saying so.
std::string array_script(const std::vector<process_spec>& specs, const std::string& what);

}  // namespace hotkernel::scale
