// Parses the embedded GPU spec table and resolves GPU names and keys against it.
#include "gpu/spec_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "data/embedded_data.h"
#include "parsers/csv.h"
#include "util/strings.h"

namespace hotkernel {

namespace {

// CSV column -> dtype for the peak columns.
const std::vector<std::pair<std::string, std::string>> peak_columns = {
    {"bf16_tflops", "bf16"}, {"fp16_tflops", "fp16"}, {"fp8_tflops", "fp8"},
    {"fp32_tflops", "fp32"}, {"tf32_tflops", "tf32"}, {"int8_tops", "int8"},
};

// A MIG profile token: "1g.5gb", "3g.40gb", "1c.2g.20gb", "1g.10gb+me".
bool is_mig_profile(std::string_view t) {
    std::size_t i = 0;
    auto number = [&] {
        std::size_t start = i;
        while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
        return i > start;
    };
    auto lit = [&](char c) {
        if (i < t.size() && std::tolower(static_cast<unsigned char>(t[i])) == c) { ++i; return true; }
        return false;
    };
    if (!number()) return false;
    if (lit('c')) {
        if (!lit('.') || !number()) return false;
    }
    if (!lit('g') || !lit('.') || !number() || !lit('g') || !lit('b')) return false;
    return i == t.size() || t[i] == '+';
}

// Where " MIG <profile>" starts in a name, or npos. Hand-matched, not std::regex, so a long
// name typed into --gpu cannot overflow the stack.
std::size_t mig_suffix_pos(std::string_view name) {
    std::string_view n = name;
    while (!n.empty() && std::isspace(static_cast<unsigned char>(n.back()))) n.remove_suffix(1);
    std::size_t sp = n.find_last_of(" \t");
    if (sp == std::string_view::npos || !is_mig_profile(n.substr(sp + 1))) return std::string_view::npos;
    std::string_view before = n.substr(0, sp);
    while (!before.empty() && std::isspace(static_cast<unsigned char>(before.back()))) before.remove_suffix(1);
    if (before.size() < 4) return std::string_view::npos;
    std::string_view mig = before.substr(before.size() - 3);
    char gap = before[before.size() - 4];
    if (to_lower(mig) != "mig" || (gap != ' ' && gap != '\t')) return std::string_view::npos;
    return before.size() - 4;
}

std::string strip_prefix_ci(const std::string& s, std::string_view prefix) {
    if (starts_with_ci(s, prefix)) return s.substr(prefix.size());
    return s;
}

}  // namespace

std::string normalize_gpu_name(std::string_view name) {
    std::string out;
    for (char c : trim(name)) {
        char d = (c == '-' || c == '_' || c == '\t') ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (d == ' ' && (out.empty() || out.back() == ' ')) continue;
        out.push_back(d);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

bool is_mig_name(std::string_view name) { return mig_suffix_pos(name) != std::string_view::npos; }

std::string strip_mig_suffix(std::string_view name) {
    std::size_t pos = mig_suffix_pos(name);
    return trim(pos == std::string_view::npos ? name : name.substr(0, pos));
}

std::optional<double> gpu_spec::peak(std::string_view dtype) const {
    auto it = peak_tflops.find(to_lower(dtype));
    if (it == peak_tflops.end()) return std::nullopt;
    return it->second;
}

std::string gpu_spec::display_name() const {
    return nvidia_smi_names.empty() ? key : nvidia_smi_names.front();
}

json gpu_spec::to_json() const {
    json peaks = json::object();
    for (const auto& d : spec_dtypes) peaks[d] = number_or_null(peak(d));
    return json{
        {"key", key},
        {"nvidia_smi_names", nvidia_smi_names},
        {"compute_capability", compute_capability ? json(*compute_capability) : json(nullptr)},
        {"sm_count", sm_count ? json(*sm_count) : json(nullptr)},
        {"boost_mhz", number_or_null(boost_mhz)},
        {"l2_mib", number_or_null(l2_mib)},
        {"memory_gb", number_or_null(memory_gb)},
        {"mem_gbs", number_or_null(mem_gbs)},
        {"tdp_w", number_or_null(tdp_w)},
        {"peak_tflops", peaks},
        {"source", source},
    };
}

json gpu_spec_schema() {
    const json num_or_null = {{"type", json::array({"number", "null"})}};
    json peak_props = json::object();
    for (const auto& d : spec_dtypes) peak_props[d] = num_or_null;
    return json{
        {"type", "object"},
        {"description", "Datasheet row (dense tensor peaks; fp16 = FP32 accumulate; int8 in TOPS)"},
        {"properties",
         {{"key", {{"type", "string"}}},
          {"nvidia_smi_names", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"compute_capability", {{"type", json::array({"string", "null"})}}},
          {"sm_count", {{"type", json::array({"integer", "null"})}}},
          {"boost_mhz", num_or_null},
          {"l2_mib", num_or_null},
          {"memory_gb", num_or_null},
          {"mem_gbs", num_or_null},
          {"tdp_w", num_or_null},
          {"peak_tflops", {{"type", "object"}, {"properties", peak_props}}},
          {"source", {{"type", "string"}}}}},
        {"required", json::array({"key", "nvidia_smi_names", "peak_tflops", "mem_gbs", "source"})},
    };
}

spec_table spec_table::parse(std::string_view csv_text) {
    auto rows = parse_csv(csv_text, csv_options{.separator = ',', .trim_fields = true});
    if (rows.empty()) throw std::runtime_error("GPU spec table is empty");
    const csv_row& header = rows.front();
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < header.size(); ++i) col[to_lower(trim(header[i]))] = i;
    for (const char* required : {"key", "nvidia_smi_names", "mem_gbs", "source"})
        if (!col.count(required))
            throw std::runtime_error(fmt::format("GPU spec table has no '{}' column", required));

    spec_table table;
    for (std::size_t r = 1; r < rows.size(); ++r) {
        const csv_row& row = rows[r];
        auto cell = [&](const std::string& name) -> std::string {
            auto it = col.find(name);
            if (it == col.end() || it->second >= row.size()) return {};
            return trim(row[it->second]);
        };
        auto number = [&](const std::string& name) -> std::optional<double> {
            std::string text = cell(name);
            if (text.empty()) return std::nullopt;
            auto v = parse_number(text);
            if (!v) throw std::runtime_error(fmt::format("GPU spec table row {} ({}): column {} is not a number: '{}'",
                                                         r + 1, cell("key"), name, text));
            return v;
        };
        gpu_spec s;
        s.key = cell("key");
        if (s.key.empty()) throw std::runtime_error(fmt::format("GPU spec table row {} has no key", r + 1));
        for (const auto& n : split(cell("nvidia_smi_names"), ';'))
            if (!trim(n).empty()) s.nvidia_smi_names.push_back(trim(n));
        if (std::string cc = cell("cc"); !cc.empty()) s.compute_capability = cc;
        if (auto v = number("sms")) s.sm_count = static_cast<int>(*v);
        s.boost_mhz = number("boost_mhz");
        s.l2_mib = number("l2_mb");
        s.memory_gb = number("mem_gb");
        s.mem_gbs = number("mem_gbs");
        s.tdp_w = number("tdp_w");
        for (const auto& [column, dtype] : peak_columns)
            if (auto v = number(column)) s.peak_tflops[dtype] = *v;
        s.source = cell("source");
        table.m_entries.push_back(std::move(s));
    }

    // Aliases: key, each name, and each name without its vendor prefix. A collision between
    // rows would make lookups ambiguous, so it is a table error.
    for (std::size_t i = 0; i < table.m_entries.size(); ++i) {
        const gpu_spec& s = table.m_entries[i];
        std::set<std::string> aliases{normalize_gpu_name(s.key)};
        for (const auto& n : s.nvidia_smi_names) {
            std::string a = normalize_gpu_name(n);
            aliases.insert(a);
            for (std::string_view prefix : {"nvidia ", "tesla "}) {
                std::string b = strip_prefix_ci(a, prefix);
                aliases.insert(b);
                aliases.insert(strip_prefix_ci(b, "geforce "));
            }
        }
        for (const auto& a : aliases) {
            if (a.empty()) continue;
            auto [it, inserted] = table.m_aliases.emplace(a, i);
            if (!inserted && it->second != i)
                throw std::runtime_error(fmt::format("GPU spec table: '{}' names both {} and {}", a,
                                                     table.m_entries[it->second].key, s.key));
        }
    }
    return table;
}

const spec_table& spec_table::builtin() {
    static const spec_table table = [] {
        for (const auto& f : detail::data::embedded_data_files)
            if (f.name == "gpu-specs.csv") return parse(f.text);
        throw std::runtime_error("gpu-specs.csv is not embedded in this binary (rebuild from the repo)");
    }();
    return table;
}

const gpu_spec* spec_table::find(std::string_view name) const {
    std::string n = normalize_gpu_name(strip_mig_suffix(name));
    if (n.empty()) return nullptr;
    auto it = m_aliases.find(n);
    if (it != m_aliases.end()) return &m_entries[it->second];
    // Names typed with the prefix when the table lists the bare name, or the other way round.
    for (std::string_view prefix : {"nvidia ", "tesla ", "geforce ", "nvidia geforce "}) {
        std::string b = strip_prefix_ci(n, prefix);
        if (b == n) continue;
        if (auto jt = m_aliases.find(b); jt != m_aliases.end()) return &m_entries[jt->second];
    }
    return nullptr;
}

std::vector<std::string> spec_table::suggestions(std::string_view name, std::size_t max_results) const {
    const std::string n = normalize_gpu_name(strip_mig_suffix(name));
    std::string bare = n;
    for (std::string_view prefix : {"nvidia ", "tesla ", "geforce "}) bare = strip_prefix_ci(bare, prefix);
    std::vector<std::string> keys;
    auto add = [&](std::size_t i) {
        const std::string& k = m_entries[i].key;
        if (keys.size() < max_results && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    };
    if (bare.empty()) return keys;
    // Rows whose names contain what was typed ("NVIDIA H100" -> the three H100 SKUs) first,
    // then the nearest by edit distance (typos).
    for (const auto& [a, i] : m_aliases)
        if (a.find(bare) != std::string::npos) add(i);
    std::vector<std::string> aliases;
    for (const auto& [a, i] : m_aliases) aliases.push_back(a);
    for (const auto& word : {n, bare})
        for (const auto& a : closest_matches(word, aliases, aliases.size())) add(m_aliases.at(a));
    return keys;
}

}  // namespace hotkernel
