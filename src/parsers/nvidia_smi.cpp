// nvidia-smi --query-gpu CSV parsing (see nvidia_smi.h for the format facts).
#include "parsers/nvidia_smi.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "parsers/csv.h"
#include "util/strings.h"

namespace hotkernel {

namespace {

// Names the header prints for names one may ask for (the header is always canonical).
std::string canonical_field(const std::string& f) {
    static const std::map<std::string, std::string> aliases = {
        {"gpu_name", "name"},
        {"gpu_uuid", "uuid"},
        {"clocks.sm", "clocks.current.sm"},
        {"clocks.mem", "clocks.current.memory"},
        {"clocks_throttle_reasons.active", "clocks_event_reasons.active"},
        {"gpu.power.requested_limit", "power.limit"},
    };
    auto it = aliases.find(f);
    return it == aliases.end() ? f : it->second;
}

// "memory.total [MiB]" -> "memory.total"
std::string strip_unit(const std::string& cell) {
    auto pos = cell.find(" [");
    return to_lower(trim(pos == std::string::npos ? cell : cell.substr(0, pos)));
}

std::optional<double> number_of(const std::map<std::string, std::string>& row, const std::string& field) {
    auto it = row.find(field);
    if (it == row.end()) return std::nullopt;
    return parse_number(it->second);
}

std::optional<std::string> text_of(const std::map<std::string, std::string>& row, const std::string& field) {
    auto it = row.find(field);
    if (it == row.end()) return std::nullopt;
    return it->second;
}

std::optional<int> int_of(const std::map<std::string, std::string>& row, const std::string& field) {
    auto v = number_of(row, field);
    // Range first: converting a double outside int's range is undefined behaviour (found by fuzz_nvidia_smi).
    if (!v || !(*v >= 0 && *v <= 2147483647.0) || *v != static_cast<int>(*v)) return std::nullopt;
    return static_cast<int>(*v);
}

// The first of several aliases present in the row.
std::optional<std::string> first_of(const std::map<std::string, std::string>& row,
                                    std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (auto v = text_of(row, n)) return v;
    return std::nullopt;
}

// "9.0", "10.3": digits, one dot, digits.
bool is_major_minor(const std::string& s) {
    auto dot = s.find('.');
    auto digits = [](std::string_view d) {
        return !d.empty() && d.size() <= 4 &&
               std::all_of(d.begin(), d.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    return dot != std::string::npos && digits(std::string_view(s).substr(0, dot)) &&
           digits(std::string_view(s).substr(dot + 1));
}

}  // namespace

bool is_missing_value(std::string_view cell) {
    std::string c = trim(cell);
    if (c.empty()) return true;
    if (c.front() == '[' && c.back() == ']') return true;
    std::string l = to_lower(c);
    return l == "n/a" || l == "not found" || l == "requested functionality has been deprecated";
}

std::vector<std::map<std::string, std::string>> parse_query_rows(std::string_view text,
                                                                 const std::vector<std::string>& fields) {
    std::vector<std::map<std::string, std::string>> out;
    bool first = true;
    for (const auto& raw : split_lines(text)) {
        std::string line = trim(raw);
        if (line.empty()) continue;
        // nvidia-smi can print driver warnings among the rows ("WARNING: infoROM is corrupted at gpu …").
        if (starts_with_ci(line, "WARNING:")) continue;
        // Fields are ", "-separated and never quoted, so a plain split is exact (a quote in a
        // value must not start a CSV quoted field).
        std::vector<std::string> cells;
        for (const auto& c : split(line, ',')) cells.push_back(trim(c));
        if (first) {
            first = false;
            if (!cells.empty() && !fields.empty()) {
                std::string h = strip_unit(cells.front());
                if (h == to_lower(fields.front()) || h == canonical_field(to_lower(fields.front()))) continue;
            }
        }
        if (cells.size() != fields.size())
            throw std::runtime_error(fmt::format("nvidia-smi printed {} fields where {} were asked for: '{}'",
                                                 cells.size(), fields.size(), tail_text(line, 300)));
        std::map<std::string, std::string> row;
        for (std::size_t i = 0; i < fields.size(); ++i)
            if (!is_missing_value(cells[i])) row[fields[i]] = cells[i];
        out.push_back(std::move(row));
    }
    return out;
}

std::vector<gpu_record> parse_gpu_query(std::string_view text, const std::vector<std::string>& fields) {
    std::vector<gpu_record> out;
    for (const auto& row : parse_query_rows(text, fields)) {
        gpu_record r;
        r.index = int_of(row, "index");
        r.name = first_of(row, {"name", "gpu_name"}).value_or("");
        r.uuid = first_of(row, {"uuid", "gpu_uuid"});
        r.driver = text_of(row, "driver_version");
        r.memory_mib = number_of(row, "memory.total");
        if (auto p = first_of(row, {"power.limit", "gpu.power.requested_limit"})) r.power_limit_w = parse_number(*p);
        if (auto cc = text_of(row, "compute_cap"); cc && is_major_minor(*cc)) {
            r.compute_capability = *cc;
            r.compute_capability_source = "nvidia-smi";
        }
        r.max_sm_clock_mhz = number_of(row, "clocks.max.sm");
        r.mig_mode = text_of(row, "mig.mode.current");
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<clock_state> parse_clock_query(std::string_view text, const std::vector<std::string>& fields) {
    std::vector<clock_state> out;
    for (const auto& row : parse_query_rows(text, fields)) {
        clock_state s;
        s.index = int_of(row, "index");
        if (auto v = first_of(row, {"clocks.sm", "clocks.current.sm"})) s.sm_clock_mhz = parse_number(*v);
        s.max_sm_clock_mhz = number_of(row, "clocks.max.sm");
        if (auto m = first_of(row, {"clocks_event_reasons.active", "clocks_throttle_reasons.active"})) {
            const char* begin = m->c_str();
            char* end = nullptr;
            unsigned long long v = std::strtoull(begin, &end, 16);  // "0x0000000000000001"
            if (end != begin && trim(end).empty()) s.event_reasons_mask = v;
        }
        s.power_draw_w = number_of(row, "power.draw");
        s.temperature_c = number_of(row, "temperature.gpu");
        out.push_back(s);
    }
    return out;
}

std::optional<std::string> invalid_query_field(std::string_view output) {
    // Hand-matched, not std::regex: libstdc++'s regex recurses per character and can overflow
    // the stack on a long output.
    static constexpr std::string_view head = "Field \"";
    static constexpr std::string_view tail = "\" is not a valid field to query";
    for (std::size_t pos = output.find(head); pos != std::string_view::npos; pos = output.find(head, pos + 1)) {
        std::size_t start = pos + head.size();
        std::size_t end = output.find('"', start);
        if (end == std::string_view::npos) return std::nullopt;
        if (output.substr(end, tail.size()) == tail) return std::string(output.substr(start, end - start));
    }
    return std::nullopt;
}

std::vector<std::string> decode_clock_event_reasons(std::uint64_t mask) {
    static const std::vector<std::pair<std::uint64_t, const char*>> bits = {
        {0x1, "gpu_idle"},
        {0x2, "applications_clocks_setting"},
        {0x4, "sw_power_cap"},
        {0x8, "hw_slowdown"},
        {0x10, "sync_boost"},
        {0x20, "sw_thermal_slowdown"},
        {0x40, "hw_thermal_slowdown"},
        {0x80, "hw_power_brake_slowdown"},
        {0x100, "display_clock_setting"},
    };
    std::vector<std::string> names;
    std::uint64_t known = 0;
    for (const auto& [bit, name] : bits) {
        known |= bit;
        if (mask & bit) names.emplace_back(name);
    }
    for (int b = 0; b < 64; ++b) {
        std::uint64_t bit = std::uint64_t{1} << b;
        if ((mask & bit) && !(known & bit)) names.push_back(fmt::format("unknown_0x{:x}", bit));
    }
    return names;
}

json clock_state_json(const clock_state& s) {
    json j;
    j["index"] = s.index ? json(*s.index) : json(nullptr);
    j["sm_clock_mhz"] = number_or_null(s.sm_clock_mhz);
    j["max_sm_clock_mhz"] = number_or_null(s.max_sm_clock_mhz);
    if (s.event_reasons_mask) {
        j["clock_event_reasons_mask"] = fmt::format("0x{:016x}", *s.event_reasons_mask);
        j["clock_event_reasons"] = decode_clock_event_reasons(*s.event_reasons_mask);
        j["throttled"] = (*s.event_reasons_mask & throttling_reasons_mask) != 0;
    } else {
        j["clock_event_reasons_mask"] = nullptr;
        j["clock_event_reasons"] = json::array();
        j["throttled"] = nullptr;
    }
    j["power_draw_w"] = number_or_null(s.power_draw_w);
    j["temperature_c"] = number_or_null(s.temperature_c);
    return j;
}

}  // namespace hotkernel
