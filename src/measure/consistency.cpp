// Agreement checks between result lines.
#include "measure/consistency.h"

#include <fmt/format.h>

namespace hotkernel {

const std::vector<std::string>& compared_fields() {
    static const std::vector<std::string> f{"protocol", "shapes", "dtype", "iters", "seed", "timer",
                                                   "contract_sha256"};
    return f;
}

json line_field(const json& line, const std::string& field) {
    if (!line.is_object()) return nullptr;
    if (auto it = line.find(field); it != line.end()) return *it;
    if (field == "shapes") {
        if (auto it = line.find("shape"); it != line.end()) return *it;
    }
    return nullptr;
}

int line_protocol(const json& line) {
    json p = line_field(line, "protocol");
    if (p.is_number_integer()) return p.get<int>();
    if (p.is_number()) return static_cast<int>(p.get<double>());
    return 0;
}

namespace {
std::string show(const json& v) {
    if (v.is_null()) return "none";
    std::string s = dump_line(v);
    if (s.size() > 60) {
        s.resize(57);  // in place: `s.substr(0, 57) + "..."` trips g++ 12's -Warray-bounds (GCC PR105329)
        s += "...";
    }
    return s;
}
}  // namespace

std::vector<std::string> compare_lines(const json& baseline, const json& candidate) {
    std::vector<std::string> out;
    const bool strict = line_protocol(baseline) >= 3 || line_protocol(candidate) >= 3;
    for (const auto& f : compared_fields()) {
        json b = line_field(baseline, f), c = line_field(candidate, f);
        if (b.is_null() && c.is_null()) continue;
        if ((b.is_null() || c.is_null()) && !strict && f != "protocol") continue;
        if (b != c) out.push_back(fmt::format("{}: baseline {}, candidate {}", f, show(b), show(c)));
    }
    return out;
}

std::vector<std::string> unstable_fields(const std::vector<json>& lines, const std::string& role) {
    std::vector<std::string> out;
    if (lines.empty()) return out;
    for (const auto& f : compared_fields()) {
        json first = line_field(lines[0], f);
        for (std::size_t i = 1; i < lines.size(); ++i) {
            json v = line_field(lines[i], f);
            if (v != first) {
                out.push_back(fmt::format("{}: {} run {} gave {}, run 1 gave {}", f, role, i + 1, show(v), show(first)));
                break;
            }
        }
    }
    return out;
}

}  // namespace hotkernel

namespace hotkernel {

std::optional<finding> contract_mismatch(const json& line, const std::string& binary_hash) {
    json h = line_field(line, "contract_sha256");
    if (!h.is_string() || binary_hash.empty() || h.get<std::string>() == binary_hash) return std::nullopt;
    return findings::contract_mismatch(h.get<std::string>().substr(0, 12), binary_hash.substr(0, 12));
}

}  // namespace hotkernel
