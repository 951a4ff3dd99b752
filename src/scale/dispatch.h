// The dispatcher: a list of jobs (one tool call each: one verify pair or one bench script) run
// through the executor a spread_plan names, as `hotkernel run-job` children; every executor is a
// process_runner (pool_runner.h, slurm_runner.h, command_runner.h), so the dispatcher only
// submits, polls, cancels and collects. Progress goes out per job (started, waiting, finished),
// cancellation (ctx.cancel) reaches every job, and each job comes back as its child's full
// result or an error that says why there is none.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "registry/tool.h"
#include "scale/gpu_set.h"
#include "util/json.h"

namespace hotkernel::scale {

enum class executor_kind { pool, slurm, command };

struct spread_plan {
    executor_kind kind = executor_kind::pool;
    std::string command;                  ///< command: the template, with {cmd}
    std::vector<std::string> partitions;  ///< slurm: one job per (job, partition); {""}: the default one
    std::optional<gpus_request> gpus;     ///< pool: the cards asked for; nullopt: every visible card
};

struct spread_job {
    std::string tool;       ///< "verify" or "bench"
    json args;              ///< the child's arguments (its own tool's, nothing of the spread)
    std::string label;      ///< the candidate or script, as given
    std::string partition;  ///< slurm
};

struct job_outcome {
    json result;          ///< the child's full result; null when it gave none
    std::string error;    ///< why there is no result (the child's own error, or how the job ended)
    bool usage_error = false;
    std::map<std::string, std::string> placement;  ///< from the executor (process_result::placement)
};

struct spread_run {
    std::vector<job_outcome> outcomes;  ///< in job order
    json about;                         ///< executor, gpus or partitions, jobs, wall_s
    json warnings = json::array();
};

/// Runs every job; throws tool_error only before any job starts (no GPU where `gpus` asks for
/// some, a folder that cannot be written). Jobs that fail are outcomes that say so.
spread_run run_spread(const spread_plan& plan, const std::vector<spread_job>& jobs, tool_context& ctx);

/// The longest a job may take [s], from its arguments (n, warmup, timeout_s), for its child's
/// timeout and Slurm's --time.
double job_bound_s(const spread_job& job);

}  // namespace hotkernel::scale
