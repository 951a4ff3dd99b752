// Nsight Compute details-page CSV reader (see ncu_csv.h).
#include "parsers/ncu_csv.h"

#include <algorithm>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "parsers/csv.h"
#include "util/strings.h"

namespace hotkernel {
namespace {

bool is_tool_line(std::string_view line) {
    // ==PROF==, ==WARNING==, ==ERROR==, ==INFO== ...
    static const std::regex re(R"(^==[A-Z]+==)");
    return std::regex_search(line.begin(), line.end(), re);
}

bool is_header_line(std::string_view line) {
    return line.find("Kernel Name") != std::string_view::npos && line.find("Metric Name") != std::string_view::npos;
}

int column(const std::vector<std::string>& header, std::string_view name) {
    for (std::size_t i = 0; i < header.size(); ++i)
        if (trim(header[i]) == name) return static_cast<int>(i);
    return -1;
}

std::string cell(const csv_row& row, int idx) {
    if (idx < 0 || static_cast<std::size_t>(idx) >= row.size()) return {};
    return row[static_cast<std::size_t>(idx)];
}

bool is_percent(const ncu_metric& m) {
    return trim(m.unit) == "%" || m.name.find("[%]") != std::string::npos;
}

std::optional<double> pct_metric(const ncu_launch& l, std::initializer_list<std::string_view> names) {
    for (auto name : names)
        for (const auto& m : l.metrics)
            if (m.name == name && is_percent(m) && m.value) return m.value;
    return std::nullopt;
}

void normalise(ncu_launch& l) {
    for (const auto& m : l.metrics) {
        if (m.name == "Duration" && m.value && !l.duration_ns) l.duration_ns = ncu_time_to_ns(*m.value, m.unit);
        if (m.name == "Registers Per Thread" && m.value && !l.registers_per_thread) l.registers_per_thread = m.value;
    }
    l.achieved_occupancy_pct = pct_metric(l, {"Achieved Occupancy"});
    l.theoretical_occupancy_pct = pct_metric(l, {"Theoretical Occupancy"});
    l.dram_throughput_pct = pct_metric(l, {"DRAM Throughput", "DRAM Throughput [%]"});
    l.memory_throughput_pct = pct_metric(l, {"Memory Throughput", "Memory [%]", "Memory Throughput [%]"});
    // "Compute (SM) Throughput" since ~2022; "SM [%]" / "Compute (SM) [%]" in older releases.
    l.sm_throughput_pct = pct_metric(l, {"Compute (SM) Throughput", "Compute (SM) [%]", "SM [%]", "SM Throughput"});
}

}  // namespace

const ncu_metric* ncu_launch::find(std::string_view metric_name) const {
    for (const auto& m : metrics)
        if (m.name == metric_name) return &m;
    return nullptr;
}

std::optional<double> ncu_time_to_ns(double value, std::string_view unit_in) {
    const std::string unit = to_lower(trim(unit_in));
    static const std::map<std::string, double> scale = {
        {"ns", 1.0},      {"nsecond", 1.0},  {"nanosecond", 1.0}, {"us", 1e3},       {"usecond", 1e3},
        {"microsecond", 1e3}, {"ms", 1e6},   {"msecond", 1e6},    {"millisecond", 1e6}, {"s", 1e9},
        {"second", 1e9},  {"sec", 1e9}};
    auto it = scale.find(unit);
    if (it == scale.end()) return std::nullopt;
    return value * it->second;
}

ncu_report parse_ncu_csv(std::string_view text) {
    ncu_report rep;
    const auto lines = split_lines(text);
    std::size_t header_at = lines.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (is_header_line(lines[i])) {
            header_at = i;
            break;
        }
    }
    // Tool lines and the "Available Kernels" list can appear anywhere (before or after).
    bool in_available = false;
    static const std::regex avail_re(R"(^\s*\d+\.\s+(.+?)\s*$)");
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        if (i >= header_at && !is_tool_line(line) && !in_available) continue;
        if (line.find("No kernels were profiled") != std::string::npos) rep.no_kernels_profiled = true;
        if (starts_with_ci(line, "==ERROR==")) rep.errors.push_back(trim(line.substr(9)));
        if (trim(line) == "Available Kernels:") {
            in_available = true;
            continue;
        }
        std::smatch m;
        if (in_available) {
            if (std::regex_match(line, m, avail_re)) {
                rep.available_kernels.push_back(m[1]);
                continue;
            }
            in_available = false;
        }
        if (i < header_at) rep.preamble.push_back(line);
    }
    if (header_at == lines.size()) return rep;

    std::string table;
    for (std::size_t i = header_at; i < lines.size(); ++i) {
        if (is_tool_line(lines[i])) continue;
        table += lines[i];
        table += '\n';
    }
    auto rows = parse_csv(table);
    if (rows.empty()) return rep;
    rep.found_header = true;
    rep.header = rows.front();
    const auto& h = rep.header;
    const int c_id = column(h, "ID"), c_kernel = column(h, "Kernel Name"), c_proc = column(h, "Process Name"),
              c_block = column(h, "Block Size"), c_grid = column(h, "Grid Size"), c_dev = column(h, "Device"),
              c_cc = column(h, "CC"), c_section = column(h, "Section Name"), c_metric = column(h, "Metric Name"),
              c_unit = column(h, "Metric Unit"), c_rule = column(h, "Rule Name"), c_rule_type = column(h, "Rule Type"),
              c_rule_desc = column(h, "Rule Description"), c_speed_type = column(h, "Estimated Speedup Type"),
              c_speed = column(h, "Estimated Speedup");
    // --print-summary per-kernel writes Average/Minimum/Maximum instead of Metric Value.
    int c_value = column(h, "Metric Value");
    if (c_value < 0) c_value = column(h, "Average");

    std::map<std::string, std::size_t> by_key;
    for (std::size_t r = 1; r < rows.size(); ++r) {
        const auto& row = rows[r];
        if (row.size() < 2) continue;
        const std::string kernel = cell(row, c_kernel);
        if (kernel.empty()) continue;
        // ID identifies a launch; the oldest layouts without it fall back to the kernel name.
        const std::string key = c_id >= 0 ? cell(row, c_id) : kernel;
        auto [it, fresh] = by_key.try_emplace(key, rep.launches.size());
        if (fresh) {
            ncu_launch l;
            l.id = key;
            l.kernel_name = kernel;
            l.process_name = cell(row, c_proc);
            l.block_size = cell(row, c_block);
            l.grid_size = cell(row, c_grid);
            l.device = cell(row, c_dev);
            l.cc = cell(row, c_cc);
            rep.launches.push_back(std::move(l));
        }
        ncu_launch& l = rep.launches[it->second];
        const std::string metric_name = cell(row, c_metric);
        const std::string rule_name = cell(row, c_rule);
        if (metric_name.empty() && !rule_name.empty()) {
            ncu_rule rule;
            rule.section = cell(row, c_section);
            rule.name = rule_name;
            rule.type = cell(row, c_rule_type);
            rule.description = cell(row, c_rule_desc);
            rule.speedup_type = cell(row, c_speed_type);
            rule.estimated_speedup_pct = parse_number(cell(row, c_speed));
            l.rules.push_back(std::move(rule));
            continue;
        }
        if (metric_name.empty()) continue;
        ncu_metric m;
        m.section = cell(row, c_section);
        m.name = metric_name;
        m.unit = cell(row, c_unit);
        m.value_text = cell(row, c_value);
        m.value = parse_number(m.value_text);
        l.metrics.push_back(std::move(m));
    }
    for (auto& l : rep.launches) normalise(l);
    return rep;
}

ncu_bound_hint ncu_classify(const ncu_launch& l) {
    ncu_bound_hint out;
    const double dram = l.dram_throughput_pct.value_or(-1), mem = l.memory_throughput_pct.value_or(-1),
                 sm = l.sm_throughput_pct.value_or(-1);
    const double memory_side = std::max(dram, mem);
    if (memory_side < 0 && sm < 0) {
        out.bound = "unknown";
        out.hint = "no throughput metrics in this CSV (collect the SpeedOfLight section: ncu --section SpeedOfLight)";
        return out;
    }
    auto pct = [](double v) { return v < 0 ? std::string("n/a") : fmt::format("{:.1f}%", v); };
    std::string occ = l.achieved_occupancy_pct ? fmt::format("{:.1f}%", *l.achieved_occupancy_pct) : "n/a";
    // 60% of peak is where ncu's own SOL rule calls a unit well utilised.
    constexpr double busy = 60.0;
    if (memory_side >= busy && memory_side >= sm) {
        out.bound = "memory";
        const bool cache = mem > dram + 15 && dram >= 0;
        out.hint = fmt::format(
            "memory-bound: memory throughput {} of peak (DRAM {}) against SM {}; time goes to moving bytes{}. "
            "Move fewer bytes (fuse ops, lower precision, reuse through shared memory) and use wide coalesced "
            "(128-bit) loads; compare bytes/duration with roofline().",
            pct(mem), pct(dram), pct(sm), cache ? " through the caches (L1/L2 busier than DRAM)" : "");
    } else if (sm >= busy) {
        out.bound = "compute";
        out.hint = fmt::format(
            "compute-bound: SM throughput {} of peak against memory {} (DRAM {}); the math pipes are the limit. "
            "Use tensor cores (HMMA/HGMMA in disassemble), cheaper math or fewer instructions per element.",
            pct(sm), pct(mem), pct(dram));
    } else {
        out.bound = "latency";
        out.hint = fmt::format(
            "latency-bound: neither memory ({}, DRAM {}) nor SM ({}) is near peak, so the GPU waits (stalls, too "
            "little parallelism or a launch too small to fill the SMs); achieved occupancy {}. Give it more "
            "independent work: more blocks/warps, more loads in flight per thread, fewer registers to raise "
            "occupancy{}.",
            pct(mem), pct(dram), pct(sm), occ,
            (l.duration_ns && *l.duration_ns < 5000) ? "; at under 5 us, launch overhead matters: fuse with neighbours or use CUDA graphs" : "");
    }
    return out;
}

}  // namespace hotkernel
