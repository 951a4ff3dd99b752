// Rendering LEADERBOARD.md from result entries (pure).
#include "store/leaderboard.h"
#include "util/schema_version.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace hotkernel {
namespace {

const std::set<std::string>& verdicts() {
    static const std::set<std::string> v{"faster", "slower", "mixed", "inconclusive", "incorrect", "invalid"};
    return v;
}

/// Markdown table cells cannot hold '|' or newlines.
std::string cell(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += "\\|";
        else if (c == '\n' || c == '\r' || c == '\t') out += ' ';
        else out += c;
    }
    return out.empty() ? "—" : out;
}

std::string num(const json& v) {
    if (!v.is_number()) return "—";
    return fmt::format("{:.4g}", v.get<double>());
}

std::string mean_std(const json& side) {
    if (!side.is_object()) return "—";
    std::string s = num(side.value("mean_ms", json()));
    if (side.contains("std_ms") && side["std_ms"].is_number())
        s += " ± " + fmt::format("{:.2g}", side["std_ms"].get<double>());
    return s;
}

std::string cell_text(const json& v) {
    if (v.is_null()) return "—";
    if (v.is_string()) return v.get<std::string>();
    return dump_line(v);
}

int rank_group(const std::string& verdict) {
    if (verdict == "faster") return 0;
    if (verdict == "incorrect") return 2;
    if (verdict == "invalid") return 3;
    return 1;  // inconclusive, slower, mixed: no gain to rank by
}

double speedup_of(const json& r) {
    return r.contains("speedup") && r["speedup"].is_number() ? r["speedup"].get<double>() : 0.0;
}

std::string string_field(const json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

}  // namespace

std::string check_result_doc(const json& doc) {
    if (!doc.is_object()) return "not a JSON object";
    if (std::string why = newer_schema(doc); !why.empty()) return why;
    if (!doc.contains("format")) return "no \"format\" field (not written by hotkernel record)";
    if (doc["format"] != 1) return "unknown format " + dump_line(doc["format"]) + " (this hotkernel reads format 1)";
    if (!doc.contains("target") || !doc["target"].is_string() || doc["target"].get<std::string>().empty())
        return "no \"target\"";
    if (!doc.contains("result") || !doc["result"].is_object()) return "no \"result\" object";
    const json& r = doc["result"];
    if (std::string why = newer_schema(r); !why.empty()) return "its result: " + why;
    if (!r.contains("verdict") || !r["verdict"].is_string() || !verdicts().count(r["verdict"].get<std::string>()))
        return "result has no valid \"verdict\"";
    if (r["verdict"] == "faster" && !(r.contains("speedup") && r["speedup"].is_number()))
        return "verdict faster without a numeric \"speedup\"";
    return "";
}

std::string gpu_label(const json& r) {
    if (r.contains("measurement") && r["measurement"].is_object()) {
        const json& m = r["measurement"];
        if (m.contains("gpu") && m["gpu"].is_object() && m["gpu"].contains("name") && m["gpu"]["name"].is_string())
            return m["gpu"]["name"].get<std::string>();
    }
    return "CPU (no GPU)";
}

std::string speedup_cell(const json& r) {
    const std::string v = r.value("verdict", "invalid");
    if (v == "faster") return fmt::format("{:.3f}×", speedup_of(r));
    if (v == "incorrect" || v == "invalid" || v == "mixed") return v;
    return "no gain";
}

/// The workloads' names over a section's rows, in the order they first appear.
std::vector<std::string> section_workloads(const std::vector<const result_entry*>& rows) {
    std::vector<std::string> names;
    for (const auto* e : rows) {
        const json& r = e->doc["result"];
        if (!r.contains("workloads") || !r["workloads"].is_array()) continue;
        for (const auto& w : r["workloads"]) {
            const std::string n = w.is_object() ? string_field(w, "name") : "";
            if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
        }
    }
    return names;
}

/// One workload's cell: its speedup where that workload is faster, else its verdict.
std::string workload_cell(const json& r, const std::string& name) {
    if (!r.contains("workloads") || !r["workloads"].is_array()) return "—";
    for (const auto& w : r["workloads"]) {
        if (!w.is_object() || string_field(w, "name") != name) continue;
        const std::string v = string_field(w, "verdict");
        if (v == "faster" && w.contains("speedup") && w["speedup"].is_number())
            return fmt::format("{:.3f}×", w["speedup"].get<double>());
        return v == "inconclusive" ? "no gain" : v;
    }
    return "—";
}

std::string render_row(const result_entry& e, std::size_t rank, const std::vector<std::string>& workloads) {
    const json& d = e.doc;
    const json& r = d["result"];
    std::string ci = "—";
    const std::string verdict = r.value("verdict", "");
    if (verdict == "faster" && r.contains("speedup_ci95") && r["speedup_ci95"].is_object() &&
        r["speedup_ci95"].value("low", json()).is_number() && r["speedup_ci95"].value("high", json()).is_number())
        ci = fmt::format("{:.3f}–{:.3f}", r["speedup_ci95"]["low"].get<double>(), r["speedup_ci95"]["high"].get<double>());
    std::string candidate = string_field(r, "candidate_script");
    if (auto slash = candidate.find_last_of('/'); slash != std::string::npos) candidate = candidate.substr(slash + 1);
    std::string per;
    for (const auto& w : workloads) per += " " + cell(workload_cell(r, w)) + " |";
    return fmt::format("| {} | {} | {} | {} |{} {} | {} | {} | {} | {} | {} | {} | {} | `{}` |", rank,
                       cell(speedup_cell(r)), ci, cell(r.value("verdict", "")), per, cell(candidate),
                       mean_std(r.value("baseline", json())), mean_std(r.value("candidate", json())),
                       cell(cell_text(r.value("n", json()))), cell(cell_text(r.value("seed", json()))),
                       cell(string_field(d, "note")), cell(string_field(d, "who")),
                       cell(string_field(d, "recorded_utc")), e.rel_path);
}

std::string render_leaderboard(const std::vector<result_entry>& entries, const std::vector<skipped_file>& skipped,
                               const std::string& results_label) {
    // Group by (target, gpu); std::map keeps the sections sorted.
    std::map<std::pair<std::string, std::string>, std::vector<const result_entry*>> sections;
    std::size_t used = 0;
    for (const auto& e : entries) {
        if (!check_result_doc(e.doc).empty()) continue;  // callers pass checked entries; stay total anyway
        sections[{e.doc["target"].get<std::string>(), gpu_label(e.doc["result"])}].push_back(&e);
        ++used;
    }
    std::string out;
    out += "# Leaderboard\n\n";
    out += fmt::format("Generated by `hotkernel record` from the {} result file{} under `{}`; never edit it by hand "
                       "(rerun `record`). Speedup = baseline mean / candidate mean, shown only when verify's verdict "
                       "is `faster` (|mean_b − mean_c| > 2·sqrt(std_b²/n + std_c²/n)); otherwise the cell says `no "
                       "gain`, `incorrect` or `invalid`. Times are mean ± std in ms over n runs.\n",
                       used, used == 1 ? "" : "s", results_label);
    if (sections.empty()) out += "\nNo results yet: run `hotkernel verify`, then `hotkernel record`.\n";
    for (auto& [key, rows] : sections) {
        std::sort(rows.begin(), rows.end(), [](const result_entry* a, const result_entry* b) {
            const json &ra = a->doc["result"], &rb = b->doc["result"];
            const int ga = rank_group(ra["verdict"].get<std::string>()), gb = rank_group(rb["verdict"].get<std::string>());
            if (ga != gb) return ga < gb;
            if (ga == 0 && speedup_of(ra) != speedup_of(rb)) return speedup_of(ra) > speedup_of(rb);
            const std::string ta = string_field(a->doc, "recorded_utc"), tb = string_field(b->doc, "recorded_utc");
            if (ta != tb) return ta > tb;
            return a->rel_path < b->rel_path;
        });
        out += fmt::format("\n## {} on {}\n\n", cell(key.first), cell(key.second));
        const std::vector<std::string> workloads = section_workloads(rows);
        if (!workloads.empty())
            out += "Speedup and its CI are the geometric mean over the workloads; a workload's column shows its own "
                   "speedup where it is `faster`, else its verdict. Times are the runs' totals over the workloads.\n\n";
        std::string wh, wsep;
        for (const auto& w : workloads) {
            wh += " " + cell(w) + " |";
            wsep += "---|";
        }
        out += "| # | Speedup | 95% CI | Verdict |" + wh +
               " Candidate | Baseline ms | Candidate ms | n | Seed | Note | Who | Recorded (UTC) | Result file |\n";
        out += "|---|---|---|---|" + wsep + "---|---|---|---|---|---|---|---|---|\n";
        std::size_t rank = 0;
        for (const auto* e : rows) out += render_row(*e, ++rank, workloads) + "\n";
    }
    if (!skipped.empty()) {
        std::vector<skipped_file> sorted = skipped;
        std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.rel_path < b.rel_path; });
        out += fmt::format("\n## Skipped files\n\n{} file{} under `{}` {} not hotkernel results and {} left out:\n\n",
                           sorted.size(), sorted.size() == 1 ? "" : "s", results_label,
                           sorted.size() == 1 ? "is" : "are", sorted.size() == 1 ? "was" : "were");
        for (const auto& s : sorted) out += fmt::format("- `{}`: {}\n", s.rel_path, cell(s.reason));
    }
    return out;
}

}  // namespace hotkernel
