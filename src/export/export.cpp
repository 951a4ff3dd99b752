#include "export/export.h"

#include <fmt/format.h>

#include "util/errors.h"
#include "util/files.h"
#include "util/strings.h"

namespace hotkernel {

std::string export_format_name(export_format f) {
    switch (f) {
        case export_format::markdown: return "markdown";
        case export_format::csv: return "csv";
        case export_format::bmf: return "bmf";
        case export_format::github_action_benchmark: return "github-action-benchmark";
    }
    return "markdown";
}

export_spec parse_export(const std::string& text, const std::string& param_name) {
    static const std::vector<std::pair<std::string, export_format>> names = {
        {"markdown", export_format::markdown}, {"md", export_format::markdown},
        {"csv", export_format::csv},           {"bmf", export_format::bmf},
        {"github-action-benchmark", export_format::github_action_benchmark}};
    const auto colon = text.find(':');
    if (colon != std::string::npos) {
        const std::string fmt_name = to_lower(trim(text.substr(0, colon)));
        for (const auto& [name, f] : names)
            if (fmt_name == name) {
                const std::string path = trim(text.substr(colon + 1));
                if (path.empty())
                    throw usage_error(fmt::format("{} '{}' names no file after the colon; e.g. bmf:bench.json",
                                                  param_name, shorten(text, 80)));
                return {f, path};
            }
    }
    const std::filesystem::path p(trim(text));
    const std::string ext = to_lower(p.extension().string());
    if (ext == ".md") return {export_format::markdown, p};
    if (ext == ".csv") return {export_format::csv, p};
    throw usage_error(fmt::format("{} '{}' is not FORMAT:PATH; FORMAT is markdown, csv, bmf or "
                                  "github-action-benchmark (a path ending .md or .csv needs none), e.g. bmf:bench.json",
                                  param_name, shorten(text, 80)));
}

json write_exports(const std::vector<export_spec>& specs, const json& verify_result) {
    json written = json::array();
    for (const auto& s : specs) {
        std::string text;
        switch (s.format) {
            case export_format::markdown: text = export_markdown(verify_result); break;
            case export_format::csv: text = export_csv(verify_result); break;
            case export_format::bmf: text = dump_pretty(export_bmf(verify_result)) + "\n"; break;
            case export_format::github_action_benchmark:
                text = dump_pretty(export_github_action_benchmark(verify_result)) + "\n";
                break;
        }
        write_file_atomic(s.path, text);
        written.push_back(json{{"format", export_format_name(s.format)}, {"path", s.path.string()}});
    }
    return written;
}

namespace export_detail {

std::string target_of(const json& r) {
    if (r.contains("target") && r["target"].is_string() && !r["target"].get<std::string>().empty())
        return r["target"].get<std::string>();
    return "unnamed";
}

std::vector<result_part> result_parts(const json& r) {
    std::vector<result_part> parts{{"", &r}};
    if (r.contains("workloads") && r["workloads"].is_array())
        for (const auto& w : r["workloads"])
            if (w.is_object() && w.value("name", json()).is_string()) parts.push_back({w["name"].get<std::string>(), &w});
    return parts;
}

std::optional<interval> speedup_interval(const json& part) {
    const json ci = part.value("speedup_ci95", json());
    if (!ci.is_object() || !ci.value("low", json()).is_number() || !ci.value("high", json()).is_number())
        return std::nullopt;
    return interval{ci["low"].get<double>(), ci["high"].get<double>()};
}

std::vector<side_row> side_rows(const json& r, const json& part) {
    std::vector<side_row> rows;
    for (const char* side : {"baseline", "candidate"}) {
        side_row row{.side = side};
        const std::string key = std::string(side) + "_script";
        if (r.contains(key) && r[key].is_string()) row.script = r[key].get<std::string>();
        if (part.contains(side) && part[side].is_object()) {
            const json& s = part[side];
            auto num = [&](const char* f, double& out) {
                if (s.contains(f) && s[f].is_number()) {
                    out = s[f].get<double>();
                    return true;
                }
                return false;
            };
            row.has_stats = num("mean_ms", row.mean_ms);
            num("std_ms", row.std_ms);
            num("min_ms", row.min_ms);
            if (s.contains("n") && s["n"].is_number_integer()) row.n = s["n"].get<long long>();
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string gpu_of(const json& r) {
    if (r.contains("measurement") && r["measurement"].is_object()) {
        const json& m = r["measurement"];
        if (m.contains("gpu") && m["gpu"].is_object() && m["gpu"].contains("name") && m["gpu"]["name"].is_string())
            return m["gpu"]["name"].get<std::string>();
    }
    if (r.contains("gpu") && r["gpu"].is_string()) return r["gpu"].get<std::string>();
    return "";
}

}  // namespace export_detail
}  // namespace hotkernel
