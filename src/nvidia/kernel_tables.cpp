// Kernel tables shared by profile() and top_kernels() (see kernel_tables.h).
#include "nvidia/kernel_tables.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace hotkernel {
namespace {

json rounded_or_null(const std::optional<double>& v, int digits = 2) {
    if (!v) return nullptr;
    const double scale = std::pow(10.0, digits);
    return std::round(*v * scale) / scale;
}

}  // namespace

json ncu_kernel_table(const ncu_report& report, std::size_t n) {
    std::vector<const ncu_launch*> order;
    for (const auto& l : report.launches) order.push_back(&l);
    std::stable_sort(order.begin(), order.end(), [](const ncu_launch* a, const ncu_launch* b) {
        return a->duration_ns.value_or(-1) > b->duration_ns.value_or(-1);
    });
    json rows = json::array();
    double total_ns = 0;
    for (const auto* l : order) total_ns += l->duration_ns.value_or(0);
    for (std::size_t i = 0; i < order.size() && i < n; ++i) {
        const ncu_launch& l = *order[i];
        const auto hint = ncu_classify(l);
        json r;
        r["id"] = l.id;
        r["name"] = l.kernel_name;
        r["duration_ns"] = rounded_or_null(l.duration_ns, 1);
        r["share_pct"] = (l.duration_ns && total_ns > 0) ? rounded_or_null(100.0 * *l.duration_ns / total_ns) : json(nullptr);
        r["achieved_occupancy_pct"] = rounded_or_null(l.achieved_occupancy_pct);
        r["theoretical_occupancy_pct"] = rounded_or_null(l.theoretical_occupancy_pct);
        r["dram_throughput_pct"] = rounded_or_null(l.dram_throughput_pct);
        r["memory_throughput_pct"] = rounded_or_null(l.memory_throughput_pct);
        r["sm_throughput_pct"] = rounded_or_null(l.sm_throughput_pct);
        r["registers_per_thread"] = rounded_or_null(l.registers_per_thread, 0);
        r["grid"] = l.grid_size;
        r["block"] = l.block_size;
        r["bound"] = hint.bound;
        r["hint"] = hint.hint;
        json rules = json::array();
        for (const auto& rule : l.rules) {
            json jr;
            jr["rule"] = rule.name;
            jr["type"] = rule.type;
            jr["estimated_speedup_pct"] = rounded_or_null(rule.estimated_speedup_pct);
            jr["description"] = rule.description;
            rules.push_back(jr);
        }
        r["ncu_rules"] = rules;
        rows.push_back(r);
    }
    json out;
    out["launches_in_file"] = report.launches.size();
    out["total_duration_ns"] = std::round(total_ns);
    out["kernels"] = rows;
    return out;
}

json nsys_kernel_table(const nsys_kern_sum& s, std::size_t n) {
    double total = 0;
    for (const auto& k : s.kernels) total += k.total_ns;
    json rows = json::array();
    for (std::size_t i = 0; i < s.kernels.size() && i < n; ++i) {
        const auto& k = s.kernels[i];
        json r;
        r["name"] = k.name;
        // The share is recomputed over the file's kernels so merged grid/block rows add up.
        r["time_pct"] = total > 0 ? rounded_or_null(100.0 * k.total_ns / total) : json(k.time_pct);
        r["total_ns"] = rounded_or_null(k.total_ns, 1);
        r["calls"] = k.instances;
        r["avg_ns"] = rounded_or_null(k.avg_ns, 1);
        r["med_ns"] = rounded_or_null(k.med_ns, 1);
        r["min_ns"] = rounded_or_null(k.min_ns, 1);
        r["max_ns"] = rounded_or_null(k.max_ns, 1);
        r["std_ns"] = rounded_or_null(k.stddev_ns, 1);
        rows.push_back(r);
    }
    json out;
    out["generation"] = s.generation;
    out["time_unit_in_file"] = s.time_unit;
    out["total_kernel_time_ns"] = std::round(total);
    out["kernel_count"] = s.kernels.size();
    out["kernels"] = rows;
    return out;
}

std::string ncu_nothing_profiled_message(const ncu_report& report, const std::string& regex_note) {
    std::string ran;
    for (std::size_t i = 0; i < report.available_kernels.size(); ++i)
        ran += fmt::format("{}{}. {}", i ? "; " : "", i + 1, report.available_kernels[i]);  // names hold commas
    if (ran.empty())
        return fmt::format("ncu profiled no kernel{} and listed none that ran: the command launched no CUDA kernel "
                           "(check that it uses the GPU and does not exit early)",
                           regex_note);
    return fmt::format("ncu profiled no kernel{}. Kernels that did run: {}. Pick a regex that matches one of these "
                       "(ncu_kernel_regex is matched case-insensitively against the full demangled name), or lower "
                       "launch_skip",
                       regex_note, ran);
}

}  // namespace hotkernel
