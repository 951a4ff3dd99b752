// github-action-benchmark's `customSmallerIsBetter` input: a JSON array of
// {name, unit, value, range?, extra?} (benchmark-action/github-action-benchmark README). One
// entry per side, named "<target> baseline" and "<target> candidate" (and, for a target with
// workloads, "<target> <workload> baseline" … for each); value the mean in ms, range "± std";
// extra a readable line with n, min, the verdict and the speedup.
#include <fmt/format.h>

#include "export/export.h"

namespace hotkernel {

json export_github_action_benchmark(const json& r) {
    using namespace export_detail;
    json out = json::array();
    for (const auto& [workload, part] : result_parts(r)) {
        const json& p = *part;
        const std::string name = target_of(r) + (workload.empty() ? "" : " " + workload);
        for (const auto& s : side_rows(r, p)) {
            if (!s.has_stats) continue;
            std::string extra =
                fmt::format("n={} min={:.6g} ms verdict={}", s.n, s.min_ms, p.value("verdict", std::string()));
            if (s.side == "candidate" && p.contains("speedup") && p["speedup"].is_number())
                extra += fmt::format(" speedup={:.4f}x", p["speedup"].get<double>());
            if (const std::string gpu = gpu_of(r); !gpu.empty()) extra += " gpu=" + gpu;
            out.push_back(json{{"name", name + " " + s.side},
                               {"unit", "ms"},
                               {"value", s.mean_ms},
                               {"range", fmt::format("± {:.6g}", s.std_ms)},
                               {"extra", extra}});
        }
    }
    return out;
}

}  // namespace hotkernel
