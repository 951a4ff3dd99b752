// A verify result as a Markdown table (a pull-request comment, a job summary).
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
    if (r.contains("speedup") && r["speedup"].is_number()) {
        out += fmt::format("\nspeedup {:.3f}x", r["speedup"].get<double>());
        const json ci = r.value("speedup_ci95", json());
        if (ci.is_object() && ci.value("low", json()).is_number() && ci.value("high", json()).is_number())
            out += fmt::format(" (95% CI {:.3f}-{:.3f})", ci["low"].get<double>(), ci["high"].get<double>());
        out += "\n";
    }
    if (const std::string gpu = gpu_of(r); !gpu.empty()) out += fmt::format("\nmeasured on {}\n", gpu);
    return out;
}

}  // namespace hotkernel
