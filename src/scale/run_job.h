// The child end of a spread: `hotkernel run-job FILE` (FILE "-": stdin) runs one tool call that
// the dispatcher wrote as JSON, on whatever card or node it landed, and prints its full result as
// one JSON line on stdout (a failure as {"job_error": …, "kind": "usage"|"tool"|"internal"}).
//
// The job: {"tool": "verify", "args": {…}, "python": "…" (optional), "words": "cli"|"mcp",
//           "result": "/shared/…/result-3.json" (optional: also written there, atomically)}
// The result gets `placement`: where it ran (gpu_uuid from HOTKERNEL_GPU_LEASE, cpus; on Slurm
// partition, job_id, node), so a recorded result says which card it came from.
#pragma once
#include <string>

#include "process/runner.h"
#include "util/json.h"

namespace hotkernel::scale {

/// Where this process runs, from the environment its executor gave it ({} when nowhere special).
json placement_from_env();

/// Runs the job; returns the process's exit code (0 with a result, 1 a tool error, 2 a usage
/// error, 3 a bug). `cancel` is set by SIGTERM/SIGINT (the CLI's handler) and by the death of
/// the parent (PR_SET_PDEATHSIG), so its children never outlive it.
int run_job_main(const std::string& file, const std::string& python, const cancel_token& cancel);

}  // namespace hotkernel::scale
