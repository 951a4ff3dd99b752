// top_kernels: read a saved nsys cuda_gpu_kern_sum (or gpukernsum) CSV or an ncu details CSV
// and return the n heaviest kernels, with a memory/compute/latency hint for ncu launches.
#include <filesystem>

#include <fmt/format.h>

#include "nvidia/kernel_tables.h"
#include "parsers/ncu_csv.h"
#include "parsers/nsys_csv.h"
#include "registry/tool.h"
#include "report/findings.h"
#include "util/files.h"
#include "util/strings.h"

namespace hotkernel {
namespace fs = std::filesystem;
namespace {

std::string first_line(const std::string& text) {
    for (const auto& l : split_lines(text))
        if (!trim(l).empty()) return l.size() > 120 ? l.substr(0, 117) + "..." : l;
    return "(empty file)";
}

struct top_kernels_args {
    std::string csv;
    std::string tool;
    long long n = 0;
};

json handle(const top_kernels_args& args, tool_context& ctx) {
    const std::string& path = args.csv;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        throw tool_error(fmt::format("CSV '{}' was not found; pass the csv_path that profile() returned, or a CSV from "
                                     "'nsys stats --report cuda_gpu_kern_sum --format csv' / 'ncu --csv --page details'",
                                     path));
    const std::string text = read_file(path);
    std::string tool = args.tool;
    const auto n = static_cast<std::size_t>(args.n);
    if (tool == "auto") {
        const ncu_report probe = parse_ncu_csv(text);
        if (probe.found_header || probe.no_kernels_profiled) tool = "ncu";
        else if (parse_nsys_kern_sum(text).found_header) tool = "nsys";
        else
            throw tool_error(fmt::format("'{}' is neither an nsys kernel summary (header with 'Total Time', 'Instances', "
                                         "'Name') nor an ncu details CSV (header with 'Kernel Name', 'Metric Name'); its "
                                         "first line is: {}. Produce one with profile(), or pass tool='nsys'/'ncu'",
                                         path, first_line(text)));
    }
    json out;
    out["csv"] = fs::absolute(path).string();
    out["tool"] = tool;
    json warnings = json::array();
    if (tool == "ncu") {
        const ncu_report rep = parse_ncu_csv(text);
        if (rep.launches.empty()) {
            if (rep.no_kernels_profiled) throw tool_error(ncu_nothing_profiled_message(rep, " in " + path));
            throw tool_error(fmt::format("'{}' holds no ncu kernel rows (no header with 'Kernel Name' and 'Metric "
                                         "Name'; first line: {}); it needs 'ncu --csv --page details' output",
                                         path, first_line(text)));
        }
        json table = ncu_kernel_table(rep, n);
        for (auto it = table.begin(); it != table.end(); ++it) out[it.key()] = it.value();
        bool any_throughput = false;
        for (const auto& l : rep.launches) any_throughput = any_throughput || l.sm_throughput_pct || l.dram_throughput_pct;
        if (!any_throughput)
            warnings.push_back(findings::no_speed_of_light());
        for (const auto& e : rep.errors) warnings.push_back(findings::profiler_error("ncu", e));
    } else {
        const nsys_kern_sum s = parse_nsys_kern_sum(text);
        if (!s.found_header) {
            if (s.no_kernel_data) {
                out["generation"] = "";
                out["kernel_count"] = 0;
                out["kernels"] = json::array();
                warnings.push_back(findings::no_kernel_data(false));
                out["warnings"] = warnings;
                return out;
            }
            throw tool_error(fmt::format("'{}' is not an nsys kernel summary CSV (no header with 'Total Time', "
                                         "'Instances', 'Name'; first line: {}); make one with 'nsys stats --report "
                                         "cuda_gpu_kern_sum --format csv'",
                                         path, first_line(text)));
        }
        json table = nsys_kernel_table(s, n);
        for (auto it = table.begin(); it != table.end(); ++it) out[it.key()] = it.value();
        for (const finding& f : s.warnings) warnings.push_back(f);
    }
    out["warnings"] = warnings;
    return out;
}

}  // namespace

tool_spec top_kernels_tool() {
    tool_spec t;
    t.name = "top_kernels";
    t.title = "Top kernels";
    t.summary = "The heaviest kernels of a saved nsys or ncu CSV";
    t.description =
        "Read a saved nsys or ncu CSV: returns the n heaviest kernels and a memory/compute/latency hint. Call "
        "it to re-read a report.";
    t.details =
        "Read a saved profile CSV (from profile()) and return the n heaviest kernels. tool='nsys': "
        "cuda_gpu_kern_sum CSV -> share of GPU time, calls, avg/med/min/max/std ns. tool='ncu': details CSV "
        "-> per-launch duration, achieved occupancy, DRAM / SM throughput %, registers per thread, and a "
        "memory/compute/latency hint. tool='auto' (default) tells them apart by their headers. Reads every "
        "known header generation.";
    t.output_schema = {
        {"type", "object"},
        {"properties",
         {{"csv", {{"type", "string"}}},
          {"tool", {{"type", "string"}}},
          {"kernels", {{"type", "array"}, {"items", {{"type", "object"}}}}},
          {"warnings", findings_schema(finding_kind::warning)}}},
        {"required", {"csv", "tool", "kernels", "warnings"}}};
    t.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    return make_tool<top_kernels_args>(
        std::move(t),
        {param(&top_kernels_args::csv, {.name = "csv",
                                        .summary = "profile's csv_path",
                                        .details = "path of the CSV (profile() returns it as csv_path).",
                                        .required = true,
                                        .positional = true}),
         param(&top_kernels_args::tool, {.name = "tool",
                                         .summary = "Which profiler wrote it",
                                         .details = "which profiler wrote it: auto, nsys or ncu.",
                                         .default_value = "auto",
                                         .choices = {"auto", "nsys", "ncu"}}),
         param(&top_kernels_args::n, {.name = "n",
                                      .summary = "Kernels to return",
                                      .default_value = 10,
                                      .minimum = 1,
                                      .maximum = 10000})},
        handle);
}

}  // namespace hotkernel
