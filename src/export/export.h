// Exports of a verify result into the formats teams already read: a Markdown table, CSV,
// Bencher's BMF JSON and github-action-benchmark's customSmallerIsBetter JSON. One file per
// format renders a result to text (pure); write_exports() is the only I/O.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"

namespace hotkernel {

enum class export_format { markdown, csv, bmf, github_action_benchmark };

struct export_spec {
    export_format format = export_format::markdown;
    std::filesystem::path path;
};

/// "FORMAT:PATH" (markdown, csv, bmf, github-action-benchmark) or a PATH ending .md or .csv.
/// Throws usage_error naming the spec (cut short) and the accepted forms.
export_spec parse_export(const std::string& text, const std::string& param_name);
std::string export_format_name(export_format f);

// The renderers; each takes a verify result (lean or full: it reads the verdict, the target, the
// per-side mean/std/min/n and the speedup with its interval, for the whole and for each workload).
std::string export_markdown(const json& verify_result);
std::string export_csv(const json& verify_result);
json export_bmf(const json& verify_result);
json export_github_action_benchmark(const json& verify_result);

/// Renders and writes each spec atomically; returns [{format, path}] for the result.
json write_exports(const std::vector<export_spec>& specs, const json& verify_result);

namespace export_detail {
/// The fields every format reads, in one place.
struct side_row {
    std::string side;  ///< baseline or candidate
    std::string script;
    double mean_ms = 0, std_ms = 0, min_ms = 0;
    long long n = 0;
    bool has_stats = false;
};
std::string target_of(const json& r);
/// The baseline's and the candidate's row of `part` (the whole result, or one of its workloads),
/// the scripts named from the whole result `r`.
std::vector<side_row> side_rows(const json& r, const json& part);
inline std::vector<side_row> side_rows(const json& r) { return side_rows(r, r); }
/// What an export has rows for: the whole result (name ""), then, for a result with workloads,
/// each workload by its name ("M=8,K=128"), each read with the same fields (verdict, speedup,
/// speedup_ci95, baseline, candidate).
struct result_part {
    std::string workload;
    const json* part;
};
std::vector<result_part> result_parts(const json& r);
/// The paired 95% interval of a part's speedup (speedup_ci95's low and high), when it has one.
struct interval {
    double low, high;
};
std::optional<interval> speedup_interval(const json& part);
std::string gpu_of(const json& r);
}  // namespace export_detail

}  // namespace hotkernel
