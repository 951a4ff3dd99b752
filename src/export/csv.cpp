// A verify result as CSV (RFC 4180: fields with a comma, quote or newline are quoted): a row per
// side, for the whole result and then for each workload (its name in the last column, empty
// for the runs' totals).
#include <cmath>

#include <fmt/format.h>

#include "export/export.h"

namespace hotkernel {
namespace {

std::string field(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string number(const json& v) { return v.is_number() ? fmt::format("{:.6g}", v.get<double>()) : ""; }

}  // namespace

std::string export_csv(const json& r) {
    using namespace export_detail;
    std::string out =
        "target,side,script,mean_ms,std_ms,min_ms,n,verdict,speedup,speedup_ci_low,speedup_ci_high,gpu,workload\n";
    for (const auto& [workload, part] : result_parts(r)) {
        const json& p = *part;
        const auto ci = speedup_interval(p);
        const std::string speedup = number(p.value("speedup", json()));
        const std::string lo = ci ? number(ci->low) : "";
        const std::string hi = ci ? number(ci->high) : "";
        for (const auto& s : side_rows(r, p)) {
            const bool cand = s.side == "candidate";
            out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", field(target_of(r)), s.side, field(s.script),
                               s.has_stats ? fmt::format("{:.6g}", s.mean_ms) : "",
                               s.has_stats ? fmt::format("{:.6g}", s.std_ms) : "",
                               s.has_stats ? fmt::format("{:.6g}", s.min_ms) : "", s.n,
                               field(p.value("verdict", std::string())), cand ? speedup : "", cand ? lo : "",
                               cand ? hi : "", field(gpu_of(r)), field(workload));
        }
    }
    return out;
}

}  // namespace hotkernel
