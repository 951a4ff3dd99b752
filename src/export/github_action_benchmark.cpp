// github-action-benchmark's `customSmallerIsBetter` input: a JSON array of
// {name, unit, value, range?, extra?} (benchmark-action/github-action-benchmark README). One
// entry per side, named "<target> baseline" and "<target> candidate"; value the mean in ms, range
// "± std"; extra a readable line with n, min, the verdict and the speedup.
#include <fmt/format.h>

#include "export/export.h"

namespace hotkernel {

json export_github_action_benchmark(const json& r) {
    using namespace export_detail;
    json out = json::array();
    const std::string target = target_of(r);
    for (const auto& s : side_rows(r)) {
        if (!s.has_stats) continue;
        std::string extra = fmt::format("n={} min={:.6g} ms verdict={}", s.n, s.min_ms, r.value("verdict", std::string()));
        if (s.side == "candidate" && r.contains("speedup") && r["speedup"].is_number())
            extra += fmt::format(" speedup={:.4f}x", r["speedup"].get<double>());
        if (const std::string gpu = gpu_of(r); !gpu.empty()) extra += " gpu=" + gpu;
        out.push_back(json{{"name", target + " " + s.side},
                           {"unit", "ms"},
                           {"value", s.mean_ms},
                           {"range", fmt::format("± {:.6g}", s.std_ms)},
                           {"extra", extra}});
    }
    return out;
}

}  // namespace hotkernel
