// The tools' one entry point to spreading: verify and bench are wrapped by spreadable(), which
// adds their parameters for it (verify: candidates; bench: scripts; both: gpus, executor,
// partition) and, when a call uses any of them, runs one job per pair or script (per partition,
// on Slurm) through the dispatcher instead of the tool's own handler, which never knows. The
// result is one full result per job, each with where it ran (gpu_uuid, gpu_name; partition,
// job_id, state), a table, and the spread's facts; lean, render and summary follow suit.
#pragma once
#include "registry/tool.h"

namespace hotkernel::scale {

/// `tool` ("verify" or "bench", built by make_tool) with its spread parameters and wrappers.
tool_spec spreadable(tool_spec tool);

/// True when `result` is a spread's (it has `results`, one per job).
bool is_spread_result(const json& result);

/// The batch file: one job a line, JSON {"tool": "verify"|"bench", "args": {…}} (blank and
/// #-lines skipped), run through the plan `batch_args` gives (gpus, executor, partition, as
/// verify takes them) and returned as a spread result; `hotkernel batch FILE`. Throws
/// usage_error naming the line that is not a job.
json run_batch_file(const std::string& path, const json& batch_args, tool_context& ctx);

/// The parameters a batch shares with verify and bench: gpus, executor, partition.
const std::vector<param_spec>& spread_params();

/// The CLI's rendering of a spread result.
std::string render_spread(const json& result);

}  // namespace hotkernel::scale
