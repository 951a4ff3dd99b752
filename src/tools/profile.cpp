// profile: run a command under Nsight Compute (ncu) or Nsight Systems (nsys), keep the report,
// and return a parsed kernel summary. Exit codes are never trusted alone: both tools exit 0
// when nothing was profiled or no report was written, so the files and the text are checked.
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include <cstdlib>

#include <fmt/format.h>

#include "nvidia/kernel_tables.h"
#include "nvidia/nvidia_tools.h"
#include "nvidia/profiled_target.h"
#include "parsers/ncu_csv.h"
#include "parsers/nsys_csv.h"
#include "python/interpreter.h"
#include "registry/tool.h"
#include "scale/lease.h"
#include "tools/workload_param.h"
#include "report/findings.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/strings.h"

namespace hotkernel {
namespace fs = std::filesystem;
namespace {

std::string utc_stamp() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    return buf;
}

struct profile_args {
    std::string tool;
    std::string command;
    std::optional<std::string> ncu_kernel_regex;
    std::optional<long long> launch_count;
    long long launch_skip = 0;
    std::optional<std::string> output;
    long long n = 0;
    double timeout_s = 0;
    std::string clock_control;
    std::optional<std::string> workload;
};

/// The report prefix: `output` without a known extension, or a fresh name in the cache.
fs::path report_prefix(const profile_args& args, const std::string& tool) {
    std::string out = args.output.value_or("");
    if (out.empty()) return cache_dir() / "profiles" / fmt::format("{}-{}-{}", tool, utc_stamp(), random_hex(3));
    for (const char* ext : {".ncu-rep", ".nsys-rep", ".qdrep", ".csv"}) {
        const std::string e(ext);
        if (out.size() > e.size() && out.compare(out.size() - e.size(), e.size(), e) == 0) out.resize(out.size() - e.size());
    }
    return fs::absolute(out);
}

std::string output_tail(const process_result& r, std::size_t n = 1500) {
    return tail_text(r.stdout_text + (r.stderr_text.empty() ? "" : "\n" + r.stderr_text), n);
}

/// `waiting_for`: what the run was doing when its time ran out (profiled_target.h), for the error.
void check_ran(const process_result& r, const std::string& what, double timeout_s, const std::string& waiting_for) {
    if (r.cancelled) throw tool_error(what + " was cancelled");
    if (r.spawn_failed) throw tool_error(what + " could not be started: " + r.spawn_error);
    if (r.timed_out)
        throw tool_error(fmt::format("{} {} while waiting for {}; raise {}, or profile less (ncu: a tighter {} and {}). "
                                     "Output tail:\n{}",
                                     what, r.describe(timeout_s), waiting_for, words::param("timeout_s"),
                                     words::param("ncu_kernel_regex"), words::param("launch_count"), output_tail(r)));
}

/// How a target script in the command is profiled: in its contract's profile mode, only the
/// calls inside the NVTX range; with an older contract the whole run, with a warning.
struct target_plan {
    std::optional<profiled_target> target;
    std::optional<std::string> workload;  ///< the shape profiled, of a target with workloads
    [[nodiscard]] bool ranged() const { return target && target->profile_mode >= 1; }
    /// What the profiled run's environment needs: the contract's profile mode, and the shape.
    void set_env(process_spec& spec) const {
        if (ranged()) spec.env_set[std::string(profile_mode_env)] = "1";
        if (workload) spec.env_set[std::string(workload_env)] = *workload;
    }
    [[nodiscard]] json to_json() const {
        if (!target) return nullptr;
        json j{{"script", target->script.string()}, {"contract", target->contract.string()}};
        if (ranged()) {
            j["mode"] = "profile";
            j["range"] = std::string(profile_mode_range);
            // A target with workloads is profiled at one shape (docs/workloads.md).
            if (workload) j["workload"] = *workload;
        } else {
            j["mode"] = "whole_run";
        }
        return j;
    }
    void add_warning(json& warnings) const {
        if (target && !ranged())
            warnings.push_back(findings::profile_mode_unavailable(target->script.string(), target->contract.string()));
    }
};

located_tool need_tool(const std::string& name, tool_context& ctx, const std::string& install_hint) {
    auto t = locate_nvidia_tool(name, &ctx);
    if (!t.found()) {
        std::string where;
        for (const auto& d : nvidia_tool_search_description(name)) where += (where.empty() ? "" : ", ") + d;
        throw tool_error(fmt::format("{} was not found (searched {}). {}", name, where, install_hint));
    }
    return t;
}

json run_ncu(const profile_args& args, tool_context& ctx, const std::vector<std::string>& command, const fs::path& prefix,
             const target_plan& plan) {
    const auto ncu = need_tool("ncu", ctx,
                               "Install Nsight Compute (it ships with the CUDA toolkit) or put ncu on PATH; "
                               "torch_profile works without it");
    const double timeout_s = args.timeout_s;
    const fs::path report = prefix.string() + ".ncu-rep";
    std::error_code ec;
    fs::create_directories(prefix.parent_path(), ec);
    fs::remove(report, ec);  // a stale report must not pass for this run's

    std::vector<std::string> argv = {ncu.path.string(), "--clock-control", args.clock_control,
                                     "--target-processes", "all", "-f", "-o", prefix.string()};
    std::string regex_note;
    if (args.ncu_kernel_regex && !args.ncu_kernel_regex->empty()) {
        const std::string regex = *args.ncu_kernel_regex;
        // ncu matches the bare function name by default, which misses template arguments
        // (PyTorch's GeluCUDAKernelImpl sits inside vectorized_elementwise_kernel<...>).
        argv.insert(argv.end(), {"--kernel-name-base", "demangled", "-k", "regex:" + case_insensitive_regex(regex)});
        regex_note = fmt::format(" matching regex '{}'", regex);
    }
    if (args.launch_count && *args.launch_count > 0) argv.insert(argv.end(), {"-c", std::to_string(*args.launch_count)});
    if (args.launch_skip > 0) argv.insert(argv.end(), {"-s", std::to_string(args.launch_skip)});
    if (plan.ranged()) {
        // Only kernels launched inside the range (a push/pop range: the trailing '/').
        argv.insert(argv.end(), {"--nvtx", "--nvtx-include", std::string(profile_mode_range) + "/"});
        regex_note += fmt::format(" inside NVTX range {}", profile_mode_range);
    }
    argv.insert(argv.end(), command.begin(), command.end());

    process_spec spec;
    spec.argv = argv;
    spec.timeout_s = timeout_s;
    spec.env_set["LC_ALL"] = "C";  // decimal points, not commas, in the numbers
    plan.set_env(spec);
    ctx.progress(0, 2, "ncu: profiling " + join_command_line(command));
    ctx.log("profile: " + join_command_line(argv));
    const auto run = ctx.runner->run(spec, ctx.cancel);
    check_ran(run, "ncu", timeout_s, ncu_waiting_for(run.stdout_text + "\n" + run.stderr_text));

    const ncu_report live = parse_ncu_csv(run.stdout_text + "\n" + run.stderr_text);
    if (live.no_kernels_profiled) throw tool_error(ncu_nothing_profiled_message(live, regex_note));
    if (!fs::exists(report, ec)) {
        std::string errors;
        for (const auto& e : live.errors) errors += "\n  " + e;
        throw tool_error(fmt::format("ncu {} but wrote no report at {}{}{}. Output tail:\n{}", run.describe(timeout_s),
                                     report.string(), errors.empty() ? "" : "; its errors:", errors,
                                     output_tail(run)));
    }

    process_spec imp;
    imp.argv = {ncu.path.string(), "--import", report.string(), "--csv", "--page", "details", "--print-units", "base"};
    imp.timeout_s = std::min(timeout_s, 300.0);
    imp.env_set["LC_ALL"] = "C";
    ctx.progress(1, 2, "ncu: reading the report");
    const auto exported = ctx.runner->run(imp, ctx.cancel);
    check_ran(exported, "ncu --import", imp.timeout_s, "ncu to read the report " + report.string());
    const ncu_report parsed = parse_ncu_csv(exported.stdout_text);
    if (parsed.launches.empty()) {
        if (parsed.no_kernels_profiled) throw tool_error(ncu_nothing_profiled_message(parsed, regex_note));
        throw tool_error(fmt::format("ncu --import {} gave no kernel rows ({}). Output tail:\n{}", report.string(),
                                     exported.describe(), output_tail(exported)));
    }
    const fs::path csv = prefix.string() + ".csv";
    write_file_atomic(csv, exported.stdout_text);

    json out;
    out["tool"] = "ncu";
    out["tool_path"] = ncu.path.string();
    out["command"] = command;
    out["report_path"] = report.string();
    out["csv_path"] = csv.string();
    out["clock_control"] = args.clock_control;
    if (plan.target) out["target"] = plan.to_json();
    json table = ncu_kernel_table(parsed, static_cast<std::size_t>(args.n));
    for (auto it = table.begin(); it != table.end(); ++it) out[it.key()] = it.value();
    json warnings = json::array();
    plan.add_warning(warnings);
    if (!run.ok())
        warnings.push_back(findings::profiled_command_failed(run.describe(), true));
    for (const auto& e : live.errors) warnings.push_back(findings::profiler_error("ncu", e));
    if (args.clock_control == "none")
        warnings.push_back(findings::clocks_not_locked());
    out["warnings"] = warnings;
    out["program_output_tail"] = tail_text(run.stdout_text, 1000);
    return out;
}

json run_nsys(const profile_args& args, tool_context& ctx, const std::vector<std::string>& command, const fs::path& prefix,
              const target_plan& plan) {
    const auto nsys = need_tool("nsys", ctx,
                                "Install Nsight Systems (CUDA toolkit or nsight-systems package) or put nsys on PATH; "
                                "torch_profile gives per-kernel times without it");
    const double timeout_s = args.timeout_s;
    std::error_code ec;
    fs::create_directories(prefix.parent_path(), ec);
    for (const char* ext : {".nsys-rep", ".qdrep", ".qdstrm", ".sqlite"}) fs::remove(prefix.string() + ext, ec);

    std::vector<std::string> argv = {nsys.path.string(), "profile", "--trace=cuda,nvtx", "--force-overwrite", "true",
                                     "-o", prefix.string()};
    if (plan.ranged())  // the trace covers the range alone: it starts at its push and stops at its pop
        argv.insert(argv.end(), {"--capture-range=nvtx", "--nvtx-capture=" + std::string(profile_mode_range),
                                 "--capture-range-end=stop"});
    argv.insert(argv.end(), command.begin(), command.end());
    process_spec spec;
    spec.argv = argv;
    spec.timeout_s = timeout_s;
    plan.set_env(spec);
    // nsys matches only registered NVTX strings by default; torch's range_push registers none.
    if (plan.ranged()) spec.env_set["NSYS_NVTX_PROFILER_REGISTER_ONLY"] = "0";
    ctx.progress(0, 2, "nsys: profiling " + join_command_line(command));
    ctx.log("profile: " + join_command_line(argv));
    const auto run = ctx.runner->run(spec, ctx.cancel);
    check_ran(run, "nsys profile", timeout_s, nsys_waiting_for(run.stdout_text + "\n" + run.stderr_text));

    fs::path report = prefix.string() + ".nsys-rep";
    if (!fs::exists(report, ec)) report = prefix.string() + ".qdrep";  // before 2021.4
    if (!fs::exists(report, ec)) {
        const fs::path qdstrm = prefix.string() + ".qdstrm";
        std::string why;
        for (const auto& line : split_lines(run.stdout_text + "\n" + run.stderr_text))
            if (contains_ci(line, "error") || contains_ci(line, "unable")) why += "\n  " + trim(line);
        if (fs::exists(qdstrm, ec)) {
            const auto size = fs::file_size(qdstrm, ec);
            // Only remove what we named ourselves: a raw stream can be gigabytes.
            const bool ours = args.output.value_or("").empty();
            if (ours) fs::remove(qdstrm, ec);
            throw tool_error(fmt::format(
                "nsys {} but wrote no report: only the raw stream {} ({:.1f} MB{}) is there, no {}.nsys-rep. nsys could "
                "not import its own trace{}{}\nThis nsys ({}) cannot produce reports on this machine; use "
                "profile with tool='ncu', or torch_profile, for per-kernel times.",
                run.describe(timeout_s), qdstrm.string(), static_cast<double>(size) / 1e6, ours ? ", removed" : "",
                prefix.string(), why.empty() ? "." : ":", why, nsys.path.string()));
        }
        const std::string range_note =
            plan.ranged() ? fmt::format(" The trace starts when the target enters NVTX range {}: check in the output "
                                        "that it got that far.",
                                        profile_mode_range)
                          : "";
        throw tool_error(fmt::format("nsys {} but wrote no report at {}.nsys-rep.{}{}{}\nOutput tail:\n{}",
                                     run.describe(timeout_s), prefix.string(), why.empty() ? "" : " Its errors:", why,
                                     range_note, output_tail(run)));
    }

    fs::path csv;
    process_result stats;
    std::string used_report;
    for (const std::string name : {"cuda_gpu_kern_sum", "gpukernsum"}) {
        process_spec s;
        s.argv = {nsys.path.string(), "stats", "--report", name, "--format", "csv", "--force-export", "true",
                  "--force-overwrite", "true", "--output", prefix.string(), report.string()};
        s.timeout_s = std::min(timeout_s, 300.0);
        ctx.progress(1, 2, "nsys stats --report " + name);
        stats = ctx.runner->run(s, ctx.cancel);
        check_ran(stats, "nsys stats", s.timeout_s, "nsys stats to export " + report.string() + " and sum its kernels");
        const fs::path candidate = prefix.string() + "_" + name + ".csv";
        if (fs::exists(candidate, ec)) {
            csv = candidate;
            used_report = name;
            break;
        }
        // Newer nsys names it cuda_gpu_kern_sum; 2021-era nsys only knows gpukernsum.
        if (parse_nsys_kern_sum(stats.stdout_text).found_header) {
            csv = candidate;
            write_file_atomic(csv, stats.stdout_text);
            used_report = name;
            break;
        }
    }
    if (csv.empty())
        throw tool_error(fmt::format("nsys stats wrote no kernel summary for {} (tried cuda_gpu_kern_sum and gpukernsum). "
                                     "Output tail:\n{}",
                                     report.string(), output_tail(stats)));
    const auto summary = parse_nsys_kern_sum(read_file(csv));

    json out;
    out["tool"] = "nsys";
    out["tool_path"] = nsys.path.string();
    out["command"] = command;
    out["report_path"] = report.string();
    out["csv_path"] = csv.string();
    out["stats_report"] = used_report;
    if (plan.target) out["target"] = plan.to_json();
    json table = nsys_kernel_table(summary, static_cast<std::size_t>(args.n));
    for (auto it = table.begin(); it != table.end(); ++it) out[it.key()] = it.value();
    json warnings = json::array();
    plan.add_warning(warnings);
    if (summary.no_kernel_data || summary.kernels.empty())
        warnings.push_back(findings::no_kernel_data(true));
    for (const finding& f : summary.warnings) warnings.push_back(f);
    if (!run.ok()) warnings.push_back(findings::profiled_command_failed(run.describe(), false));
    out["warnings"] = warnings;
    out["program_output_tail"] = tail_text(run.stdout_text, 1000);
    return out;
}

json handle(const profile_args& args, tool_context& ctx) {
    const std::string& tool = args.tool;
    std::vector<std::string> command = split_command_line(args.command);
    if (command.empty()) throw usage_error("command is empty; pass the command line to profile, e.g. 'python3 bench.py'");
    // "python"/"python3" means the user's interpreter (--python / HOTKERNEL_PYTHON), as elsewhere.
    if (command[0] == "python" || command[0] == "python3") command[0] = resolve_python(ctx);
    else if (find_executable(command[0]).empty())
        throw tool_error(fmt::format("the command's program '{}' was not found on PATH or is not executable; give a path "
                                     "or a program on PATH",
                                     command[0]));
    const fs::path prefix = report_prefix(args, tool);
    std::error_code ec;
    target_plan plan{find_profiled_target(command, fs::current_path(ec))};
    // The shape to profile: the parameter, else HOTKERNEL_WORKLOAD as the caller's shell set it.
    if (args.workload) plan.workload = *args.workload;
    else if (const char* w = std::getenv(std::string(workload_env).c_str()); w && *w) plan.workload = w;
    // The card's pool lease (src/scale/lease.h): ncu locks the card's clocks and replays kernels,
    // so no pool job measures beside it.
    const auto lease = scale::lease_visible_card(
        *ctx.runner, ctx.cancel, fmt::format("profile {} (pid {})", shorten(args.command, 120), ::getpid()),
        std::max(600.0, 2 * args.timeout_s),
        [&](const std::string& holder) { ctx.progress(0, 2, "waiting for GPU " + shorten(trim(holder), 200)); });
    return tool == "ncu" ? run_ncu(args, ctx, command, prefix, plan) : run_nsys(args, ctx, command, prefix, plan);
}

}  // namespace

tool_spec profile_tool() {
    tool_spec t;
    t.name = "profile";
    t.title = "Nsight";
    t.summary = "A command under Nsight Compute or Nsight Systems: report and kernel summary";
    t.description =
        "Run a command under nsys or ncu: returns the report's path and a kernel summary. Call it when "
        "torch_profile is not enough.";
    t.details =
        "Run a command under Nsight Systems (tool='nsys') or Nsight Compute (tool='ncu') and return the path "
        "of the report plus a parsed kernel summary. nsys gives the per-kernel time breakdown; ncu gives "
        "per-kernel metrics (achieved occupancy, DRAM throughput, SM throughput) and is much slower, so use "
        "ncu_kernel_regex to target one kernel. The report and its CSV are saved (pass csv_path to "
        "top_kernels). 'No kernels were profiled' is an error that lists the kernels that did run; exit codes "
        "are not trusted alone.";
    t.output_schema = {
        {"type", "object"},
        {"properties",
         {{"tool", {{"type", "string"}}},
          {"report_path", {{"type", "string"}}},
          {"csv_path", {{"type", "string"}}},
          {"command", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"target", {{"type", "object"}}},
          {"kernels", {{"type", "array"}, {"items", {{"type", "object"}}}}},
          {"warnings", findings_schema(finding_kind::warning)}}},
        {"required", {"tool", "report_path", "csv_path", "kernels", "warnings"}}};
    t.annotations = {.read_only = false, .destructive = true, .idempotent = false, .open_world = false};  // runs the user's command
    return make_tool<profile_args>(
        std::move(t),
        {
            param(&profile_args::tool, {.name = "tool",
                                        .summary = "nsys (times) or ncu (metrics)",
                                        .details = "nsys (time per kernel) or ncu (metrics per launch).",
                                        .required = true,
                                        .choices = {"nsys", "ncu"}}),
            param(&profile_args::command,
                  {.name = "command",
                   .summary = "Command line to profile",
                   .details = "Quotes and backslashes work; no pipes or variables: wrap those in bash -c '...'. A "
                              "leading python/python3 runs the user's interpreter (--python / HOTKERNEL_PYTHON).",
                   .required = true,
                   .positional = true,
                   .max_length = 65536}),
            param(&profile_args::ncu_kernel_regex,
                  {.name = "ncu_kernel_regex",
                   .summary = "ncu: kernel name regex",
                   .details = "e.g. 'gelu' finds PyTorch's vectorized_elementwise_kernel<..GeluCUDAKernelImpl..>."}),
            param(&profile_args::launch_count,
                  {.name = "launch_count",
                   .summary = "ncu: launches to profile",
                   .details = "ncu only: profile at most this many matching launches (without it: all).",
                   .minimum = 1}),
            param(&profile_args::launch_skip, {.name = "launch_skip",
                                               .summary = "ncu: launches to skip first",
                                               .details = "ncu only: skip this many matching launches first, e.g. "
                                                          "warm-up.",
                                               .default_value = 0,
                                               .minimum = 0}),
            param(&profile_args::output, {.name = "output",
                                          .summary = "Report path prefix",
                                          .details = "Without it: a new name under the hotkernel cache folder."}),
            param(&profile_args::n, {.name = "n",
                                     .summary = "Kernels in the summary",
                                     .default_value = 20,
                                     .minimum = 1,
                                     .maximum = 10000}),
            param(&profile_args::timeout_s, {.name = "timeout_s",
                                             .summary = "Limit in seconds",
                                             .details = "wall-clock limit for the profiled run, in seconds.",
                                             .default_value = 900,
                                             .minimum = 1,
                                             .maximum = 86400}),
            param(&profile_args::clock_control,
                  {.name = "clock_control",
                   .summary = "ncu: clock locking",
                   .details = "ncu only: none (clocks as in real runs), base (locked to base) or reset.",
                   .default_value = "none",
                   .choices = {"none", "base", "reset"}}),
            param(&profile_args::workload, workload_param()),
        },
        handle);
}

}  // namespace hotkernel
