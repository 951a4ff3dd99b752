// Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format): one
// benchmark per side, "<target>/baseline" and "<target>/candidate", each with the built-in
// `latency` measure in nanoseconds (value: the mean; lower/upper: the mean's 95% interval,
// 1.96 standard errors); the candidate also carries a `speedup` measure (mean_b / mean_c, its
// bounds the paired 95% interval). A target with workloads has the same pair for each workload,
// "<target>/<workload>/baseline" (e.g. "gelu/M=8,K=128/baseline") beside the runs' totals. Names
// stay the same from run to run, so Bencher keeps a history.
#include <cmath>

#include "export/export.h"

namespace hotkernel {

json export_bmf(const json& r) {
    using namespace export_detail;
    json out = json::object();
    for (const auto& [workload, part] : result_parts(r)) {
        const std::string name = target_of(r) + (workload.empty() ? "" : "/" + workload);
        for (const auto& s : side_rows(r, *part)) {
            if (!s.has_stats) continue;
            const double half = s.n > 1 ? 1.96 * s.std_ms / std::sqrt(static_cast<double>(s.n)) : 0.0;
            json bench = json::object();
            bench["latency"] = {{"value", s.mean_ms * 1e6},
                                {"lower_value", std::max(0.0, s.mean_ms - half) * 1e6},
                                {"upper_value", (s.mean_ms + half) * 1e6}};
            const json& p = *part;
            if (s.side == "candidate" && p.contains("speedup") && p["speedup"].is_number()) {
                json sp = {{"value", p["speedup"].get<double>()}};
                if (const auto ci = speedup_interval(p)) {
                    sp["lower_value"] = ci->low;
                    sp["upper_value"] = ci->high;
                }
                bench["speedup"] = sp;
            }
            out[name + "/" + s.side] = bench;
        }
    }
    return out;
}

}  // namespace hotkernel
