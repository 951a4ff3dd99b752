// Nsight Systems kernel-summary CSV reader (see nsys_csv.h).
#include "parsers/nsys_csv.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "parsers/csv.h"
#include "util/strings.h"

namespace hotkernel {
namespace {

bool is_header(std::string_view line) {
    return line.find("Total Time") != std::string_view::npos && line.find("Name") != std::string_view::npos &&
           line.find("Instances") != std::string_view::npos;
}

/// Index of the first column whose trimmed name starts with one of the prefixes.
int find_col(const std::vector<std::string>& header, std::initializer_list<std::string_view> prefixes) {
    for (auto prefix : prefixes)
        for (std::size_t i = 0; i < header.size(); ++i)
            if (trim(header[i]).rfind(prefix, 0) == 0) return static_cast<int>(i);
    return -1;
}

double unit_scale(const std::string& unit) {
    if (unit == "us") return 1e3;
    if (unit == "ms") return 1e6;
    if (unit == "s" || unit == "sec") return 1e9;
    return 1.0;
}

std::optional<double> num(const csv_row& row, int idx) {
    if (idx < 0 || static_cast<std::size_t>(idx) >= row.size()) return std::nullopt;
    return parse_number(row[static_cast<std::size_t>(idx)]);
}

}  // namespace

nsys_kern_sum parse_nsys_kern_sum(std::string_view text) {
    nsys_kern_sum out;
    const auto lines = split_lines(text);
    std::size_t header_at = lines.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].find("does not contain CUDA kernel data") != std::string::npos) out.no_kernel_data = true;
        if (header_at == lines.size() && is_header(lines[i])) header_at = i;
    }
    if (header_at == lines.size()) return out;
    // The table ends at the first blank line (stdout can hold more reports after it).
    std::string table;
    for (std::size_t i = header_at; i < lines.size(); ++i) {
        if (trim(lines[i]).empty()) break;
        table += lines[i];
        table += '\n';
    }
    auto rows = parse_csv(table);
    if (rows.empty()) return out;
    out.found_header = true;
    const auto& h = rows.front();
    const int c_pct = find_col(h, {"Time (%)", "Time(%)"}), c_total = find_col(h, {"Total Time"}),
              c_inst = find_col(h, {"Instances"}), c_avg = find_col(h, {"Avg (", "Average"}),
              c_med = find_col(h, {"Med (", "Median"}), c_min = find_col(h, {"Min (", "Minimum"}),
              c_max = find_col(h, {"Max (", "Maximum"}), c_std = find_col(h, {"StdDev (", "Std Dev"}),
              c_grid = find_col(h, {"GridXYZ"}), c_name = find_col(h, {"Name"});
    if (c_total < 0 || c_name < 0) return out;
    if (c_grid >= 0)
        out.generation = "gpukernsum-gridblock";
    else if (find_col(h, {"Average"}) >= 0)
        out.generation = "gpukernsum-legacy";
    else
        out.generation = "cuda_gpu_kern_sum";
    static const std::regex unit_re(R"(\((ns|us|ms|s|sec)\))");
    std::smatch m;
    const std::string total_header = h[static_cast<std::size_t>(c_total)];
    if (std::regex_search(total_header, m, unit_re)) out.time_unit = m[1];
    const double scale = unit_scale(out.time_unit);

    std::map<std::string, std::size_t> index;
    struct moments { double sum_sq = 0; bool ok = true; };
    std::vector<moments> mom;
    for (std::size_t r = 1; r < rows.size(); ++r) {
        const auto& row = rows[r];
        if (static_cast<std::size_t>(c_name) >= row.size()) continue;
        nsys_kernel_row k;
        k.name = row[static_cast<std::size_t>(c_name)];
        auto total = num(row, c_total);
        if (!total) continue;
        k.total_ns = *total * scale;
        k.time_pct = num(row, c_pct).value_or(0);
        // Clamped: converting a double outside long long's range is undefined behaviour (found by fuzz_nsys_csv).
        const double inst = num(row, c_inst).value_or(0);
        k.instances = inst >= 0 && inst < 9.2e18 ? static_cast<long long>(inst) : 0;
        auto scaled = [&](int c) -> std::optional<double> {
            auto v = num(row, c);
            if (v) *v *= scale;
            return v;
        };
        k.avg_ns = scaled(c_avg);
        k.med_ns = scaled(c_med);
        k.min_ns = scaled(c_min);
        k.max_ns = scaled(c_max);
        k.stddev_ns = scaled(c_std);
        auto [it, fresh] = index.try_emplace(k.name, out.kernels.size());
        if (fresh) {
            moments mo;
            if (k.avg_ns && k.stddev_ns) {
                const double n = static_cast<double>(k.instances);
                mo.sum_sq = n * (*k.stddev_ns * *k.stddev_ns + *k.avg_ns * *k.avg_ns);
            } else {
                mo.ok = false;
            }
            mom.push_back(mo);
            out.kernels.push_back(std::move(k));
            continue;
        }
        // Same kernel under another grid/block (middle generation): add the rows up.
        auto& a = out.kernels[it->second];
        auto& mo = mom[it->second];
        if (k.avg_ns && k.stddev_ns && mo.ok) {
            const double n = static_cast<double>(k.instances);
            mo.sum_sq += n * (*k.stddev_ns * *k.stddev_ns + *k.avg_ns * *k.avg_ns);
        } else {
            mo.ok = false;
        }
        a.total_ns += k.total_ns;
        a.time_pct += k.time_pct;
        // Saturated: two huge counts in a corrupt file would overflow (found by fuzz_nsys_csv).
        a.instances = k.instances > std::numeric_limits<long long>::max() - a.instances
                          ? std::numeric_limits<long long>::max()
                          : a.instances + k.instances;
        if (k.min_ns) a.min_ns = a.min_ns ? std::min(*a.min_ns, *k.min_ns) : *k.min_ns;
        if (k.max_ns) a.max_ns = a.max_ns ? std::max(*a.max_ns, *k.max_ns) : *k.max_ns;
        a.med_ns.reset();  // a median does not add up across groups
        a.merged_rows += 1;
    }
    int merged = 0;
    for (std::size_t i = 0; i < out.kernels.size(); ++i) {
        auto& k = out.kernels[i];
        if (k.merged_rows == 1) continue;
        ++merged;
        const double n = static_cast<double>(k.instances);
        if (n > 0) {
            k.avg_ns = k.total_ns / n;
            if (mom[i].ok) k.stddev_ns = std::sqrt(std::max(0.0, mom[i].sum_sq / n - *k.avg_ns * *k.avg_ns));
            else k.stddev_ns.reset();
        }
    }
    if (merged > 0)
        out.warnings.push_back(findings::kernel_rows_merged(merged));
    std::stable_sort(out.kernels.begin(), out.kernels.end(),
                     [](const nsys_kernel_row& a, const nsys_kernel_row& b) { return a.total_ns > b.total_ns; });
    return out;
}

}  // namespace hotkernel
