#include "measure/clock_check.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "stats/summary.h"

namespace hotkernel {

json check_sample_clocks(const std::vector<const run_record*>& runs, double max_sm_clock_mhz) {
    std::vector<double> all;
    struct per_run {
        const run_record* run;
        std::vector<double> mhz;
    };
    std::vector<per_run> seen;
    for (const run_record* r : runs) {
        if (r == nullptr || !r->line.is_object()) continue;
        auto it = r->line.find("sample_sm_clock_mhz");
        if (it == r->line.end() || !it->is_array()) continue;
        per_run p{r, {}};
        for (const auto& v : *it)
            if (v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0) p.mhz.push_back(v.get<double>());
        if (p.mhz.empty()) continue;
        all.insert(all.end(), p.mhz.begin(), p.mhz.end());
        seen.push_back(std::move(p));
    }
    if (all.empty()) return nullptr;
    const sample_summary s = summarize(all);
    const bool from_smi = std::isfinite(max_sm_clock_mhz) && max_sm_clock_mhz > 0;
    const double reference = from_smi ? max_sm_clock_mhz : s.max;
    const double threshold = throttle_fraction * reference;
    std::size_t throttled = 0;
    json where = json::array();
    for (const auto& p : seen) {
        const auto k = static_cast<std::size_t>(std::count_if(p.mhz.begin(), p.mhz.end(), [&](double m) { return m < threshold; }));
        throttled += k;
        if (k > 0)
            where.push_back(fmt::format("{}{} {} ({} of {} samples)", p.run->warmup ? "warm-up " : "", p.run->role,
                                        p.run->index, k, p.mhz.size()));
    }
    return json{{"reference_mhz", reference},
                {"reference", from_smi ? "nvidia-smi clocks.max.sm" : "the fastest reading (no maximum clock known)"},
                {"threshold_mhz", threshold},
                {"samples", s.n},
                {"throttled_samples", throttled},
                {"min_mhz", s.min},
                {"median_mhz", s.median},
                {"throttled_runs", where},
                {"method", "a spin of 200000 SM cycles (clock64) after every timed sample, over its CUDA-event time; "
                           "reads 2-3% under the true clock"}};
}

std::optional<finding> throttle_warning(const json& check) {
    if (!check.is_object() || check.value("throttled_samples", 0) == 0) return std::nullopt;
    std::string runs;
    for (const auto& w : check["throttled_runs"]) runs += (runs.empty() ? "" : ", ") + w.get<std::string>();
    return findings::sample_clocks_throttled(check["throttled_samples"].get<std::size_t>(),
                                             check["samples"].get<std::size_t>(), check["threshold_mhz"].get<double>(),
                                             check["reference_mhz"].get<double>(), check["min_mhz"].get<double>(),
                                             runs);
}

}  // namespace hotkernel
