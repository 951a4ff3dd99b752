// A verify result as a Markdown table (a pull-request comment, a job summary); a target with
// workloads gets a second table, a row per workload.
#include <fmt/format.h>

#include "export/export.h"

namespace hotkernel {

std::string export_markdown(const json& r) {
    using namespace export_detail;
    std::string out = fmt::format("### {}: {}\n\n", target_of(r), r.value("verdict", std::string("?")));
    out += "| side | script | mean (ms) | std (ms) | min (ms) | n |\n|---|---|---:|---:|---:|---:|\n";
    for (const auto& s : side_rows(r)) {
        if (!s.has_stats) {
            out += fmt::format("| {} | `{}` | - | - | - | {} |\n", s.side, s.script, s.n);
            continue;
        }
        // Significant digits, not decimals: a 4 µs kernel's spread is 0.00002 ms, not "0.0000".
        out += fmt::format("| {} | `{}` | {:.4g} | {:.3g} | {:.4g} | {} |\n", s.side, s.script, s.mean_ms, s.std_ms,
                           s.min_ms, s.n);
    }
    const auto parts = result_parts(r);
    if (r.contains("speedup") && r["speedup"].is_number()) {
        out += fmt::format("\n{} {:.3f}x", parts.size() > 1 ? "geometric-mean speedup" : "speedup",
                           r["speedup"].get<double>());
        if (const auto ci = speedup_interval(r)) out += fmt::format(" (95% CI {:.3f}-{:.3f})", ci->low, ci->high);
        out += "\n";
    }
    if (parts.size() > 1) {
        out += "\n| workload | verdict | baseline mean (ms) | candidate mean (ms) | speedup (95% CI) |\n"
               "|---|---|---:|---:|---|\n";
        for (std::size_t i = 1; i < parts.size(); ++i) {
            const json& p = *parts[i].part;
            const auto sides = side_rows(r, p);
            auto mean = [](const side_row& s) { return s.has_stats ? fmt::format("{:.4g}", s.mean_ms) : "-"; };
            std::string speedup = "-";
            if (p.contains("speedup") && p["speedup"].is_number()) {
                speedup = fmt::format("{:.3f}x", p["speedup"].get<double>());
                if (const auto ci = speedup_interval(p)) speedup += fmt::format(" ({:.3f}-{:.3f})", ci->low, ci->high);
            }
            out += fmt::format("| {} | {} | {} | {} | {} |\n", parts[i].workload, p.value("verdict", std::string("?")),
                               mean(sides[0]), mean(sides[1]), speedup);
        }
    }
    if (const std::string gpu = gpu_of(r); !gpu.empty()) out += fmt::format("\nmeasured on {}\n", gpu);
    return out;
}

}  // namespace hotkernel
