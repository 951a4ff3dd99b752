// torch_profile: run a script under torch.profiler in the user's interpreter (the embedded
// runner python/hotkernel_torch_profile.py) and return its heaviest GPU kernels and aten ops.
#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "python/interpreter.h"
#include "registry/tool.h"
#include "scale/lease.h"
#include "tools/workload_param.h"
#include "report/findings.h"
#include "render/render.h"
#include "util/strings.h"

namespace hotkernel {
namespace fs = std::filesystem;
namespace {

/// What the harness wrote on its channel: one {"stage", "t"} line per stage begun, then the result.
struct runner_lines {
    json result;        ///< the last line that is not a stage (null when none)
    std::string stage;  ///< the last stage begun, cut short
    double stage_t = 0; ///< seconds into the run it began
    std::string bad;    ///< a line that is not JSON, cut short
};

runner_lines read_runner_lines(const std::string& channel) {
    runner_lines r;
    for (const auto& line : split_lines(channel)) {
        if (trim(line).empty()) continue;
        json j = json::parse(line, nullptr, false);
        if (!j.is_object()) {
            r.bad = tail_text(line, 300);
            continue;
        }
        if (j.contains("stage") && j.size() <= 2) {
            r.stage = j["stage"].is_string() ? j["stage"].get<std::string>().substr(0, 200) : std::string();
            r.stage_t = j.contains("t") && j["t"].is_number() ? j["t"].get<double>() : 0.0;
        } else {
            r.result = std::move(j);
        }
    }
    return r;
}

/// " while importing torch (from 1.2 s on)": what the harness was doing when it stopped.
std::string while_stage(const runner_lines& lines, const std::string& python) {
    if (lines.stage.empty()) return fmt::format(" while {} was starting (before it imported anything)", python);
    return fmt::format(" while {} (from {:.1f} s on)", lines.stage, lines.stage_t);
}

struct torch_profile_args {
    std::string script;
    long long n = 0;
    std::vector<std::string> args;
    double timeout_s = 0;
    std::optional<std::string> workload;
};

json handle(const torch_profile_args& args, tool_context& ctx) {
    const std::string& script = args.script;
    std::error_code ec;
    if (!fs::is_regular_file(script, ec))
        throw tool_error(fmt::format("script '{}' was not found (or is not a file); pass the path of a Python script "
                                     "that runs the code to profile",
                                     script));
    const long long n = args.n;
    const double timeout_s = args.timeout_s;
    const std::string python = resolve_python(ctx);
    const fs::path runner = embedded_python_dir() / "hotkernel_torch_profile.py";

    process_spec spec;
    spec.argv = {python, runner.string(), std::to_string(n), fs::absolute(script).string()};
    spec.argv.insert(spec.argv.end(), args.args.begin(), args.args.end());
    spec.result_channel = true;
    spec.timeout_s = timeout_s;
    spec.env_set["PYTHONUNBUFFERED"] = "1";
    if (args.workload) spec.env_set[std::string(workload_env)] = *args.workload;
    // The card's pool lease (src/scale/lease.h), as bench holds it: no pool job runs beside it.
    const auto lease = scale::lease_visible_card(
        *ctx.runner, ctx.cancel, fmt::format("torch_profile {} (pid {})", script, ::getpid()),
        std::max(600.0, 2 * timeout_s),
        [&](const std::string& holder) { ctx.progress(0, 0, "waiting for GPU " + shorten(trim(holder), 200)); });
    ctx.progress(0, 0, "running " + script + " under torch.profiler");
    ctx.log("torch_profile: " + python + " " + script);
    const process_result res = ctx.runner->run(spec, ctx.cancel);

    if (res.cancelled) throw tool_error("torch_profile was cancelled while " + script + " ran");
    if (res.spawn_failed) throw tool_error(fmt::format("could not start '{}': {}", python, res.spawn_error));
    const runner_lines lines = read_runner_lines(res.channel_text);
    if (res.timed_out)
        throw tool_error(fmt::format("'{}' under torch.profiler {}{}; raise {} or make the script do less work. "
                                     "stderr tail:\n{}",
                                     script, res.describe(timeout_s), while_stage(lines, python), words::param("timeout_s"),
                                     tail_text(res.stderr_text, 1500)));
    if (lines.result.is_null()) {
        if (!lines.bad.empty())
            throw tool_error(fmt::format("the profiling runner returned text that is not JSON: {}", lines.bad));
        throw tool_error(fmt::format("the profiling runner {} without a result{}. stderr tail:\n{}",
                                     res.describe(timeout_s), while_stage(lines, python),
                                     tail_text(res.stderr_text, 2000)));
    }
    const json& r = lines.result;
    if (r.contains("error")) {
        std::string msg = r["error"].get<std::string>();
        if (r.contains("traceback")) msg += "\n" + tail_text(r["traceback"].get<std::string>(), 1500);
        else if (!res.stderr_text.empty()) msg += "\nstderr tail:\n" + tail_text(res.stderr_text, 1500);
        if (msg.find("torch could not be imported") != std::string::npos)
            msg += "\nPoint hotkernel at an interpreter that has torch: " + words::python_setting();
        throw tool_error(msg);
    }

    json out;
    out["script"] = fs::absolute(script).string();
    for (auto it = r.begin(); it != r.end(); ++it) out[it.key()] = it.value();
    json warnings = json::array();
    if (!r.value("cuda_available", false))
        warnings.push_back(findings::no_gpu_kernels_recorded());
    else if (r.value("kernel_count", 0) == 0)
        warnings.push_back(findings::no_kernel_ran());
    if (!res.ok()) warnings.push_back(findings::runner_exit_after_result(res.describe(timeout_s), "script_output_tail"));
    out["warnings"] = warnings;
    // The script's own prints went to stderr (stdout is redirected there by the harness).
    out["script_output_tail"] = tail_text(res.stderr_text, 1500);
    return out;
}

}  // namespace

tool_spec torch_profile_tool() {
    tool_spec t;
    t.name = "torch_profile";
    t.title = "torch.profiler";
    t.description =
        "Run a script under torch.profiler: returns its top GPU kernels and aten ops. Call it first to see "
        "where the time goes.";
    t.details =
        "Run a Python script under torch.profiler in the user's interpreter and return kernels (real GPU "
        "kernels by device time: calls, total/avg us, pct of total kernel time) and ops (aten ops with input "
        "shapes and inclusive CPU/device time), the top n of each. Works without Nsight installed; use this "
        "first. Profiler bookkeeping rows (Activity Buffer Request) are left out; memcpy/memset are listed "
        "apart. On a machine without a GPU it returns the CPU ops and says there are no kernels. Works on "
        "torch 1.13 and 2.x.";
    t.summary = "A script under torch.profiler: GPU kernels and aten ops";
    std::vector<bound_param<torch_profile_args>> params = {
        param(&torch_profile_args::script, {.name = "script",
                                            .summary = "Script to run (as __main__)",
                                            .details = "path of the Python script to run (as __main__).",
                                            .required = true,
                                            .positional = true}),
        param(&torch_profile_args::n, {.name = "n",
                                       .summary = "Rows of kernels and of ops",
                                       .details = "rows to return for kernels and for ops.",
                                       .default_value = 20,
                                       .minimum = 1,
                                       .maximum = 1000}),
        param(&torch_profile_args::args,
              {.name = "args", .summary = "Arguments for the script",
                               .details = "arguments passed to the script (its sys.argv[1:])."}),
        param(&torch_profile_args::timeout_s, {.name = "timeout_s",
                                               .summary = "Limit in seconds",
                                               .details = "wall-clock limit for the script under the profiler, in "
                                                          "seconds.",
                                               .default_value = 600,
                                               .minimum = 1,
                                               .maximum = 86400}),
        param(&torch_profile_args::workload, workload_param()),
    };
    json row_props = {{"name", {{"type", "string"}}}, {"calls", {{"type", "integer"}}}, {"total_us", {{"type", "number"}}}};
    t.output_schema = {
        {"type", "object"},
        {"properties",
         {{"script", {{"type", "string"}}},
          {"torch_version", {{"type", "string"}}},
          {"cuda_available", {{"type", "boolean"}}},
          {"device", {{"type", "string"}}},
          {"kernel_count", {{"type", "integer"}}},
          {"total_kernel_time_us", {{"type", "number"}}},
          {"kernels", {{"type", "array"}, {"items", {{"type", "object"}, {"properties", row_props}}}}},
          {"memory_ops", {{"type", "array"}, {"items", {{"type", "object"}}}}},
          {"ops", {{"type", "array"}, {"items", {{"type", "object"}}}}},
          {"ignored_rows", {{"type", "array"}, {"items", {{"type", "object"}}}}},
          {"profile_mode", {{"type", "object"}}},
          {"ranges", {{"type", "array"}, {"items", {{"type", "object"}}}}},
          {"kernel_time_per_call_us", {{"type", "number"}}},
          {"note", {{"type", "string"}}},
          {"warnings", findings_schema(finding_kind::warning)}}},
        {"required", {"script", "kernels", "ops", "warnings"}}};
    t.annotations = {.read_only = false, .destructive = true, .idempotent = false, .open_world = false};  // runs the user's script
    t.render = [](const json& result) {
        // Input shapes are nested arrays, which the table renderer leaves out: show them as text.
        json shown = result;
        if (shown.contains("ops"))
            for (auto& op : shown["ops"])
                if (op.contains("input_shapes")) op["input_shapes"] = dump_line(op["input_shapes"]);
        return render_text(shown);
    };
    return make_tool<torch_profile_args>(std::move(t), std::move(params), handle);
}

}  // namespace hotkernel
