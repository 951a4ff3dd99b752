// One JSON type for the whole binary. ordered_json keeps keys in the order a tool
// wrote them, so readable output and snapshots follow the declaration order.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace hotkernel {
using json = nlohmann::ordered_json;

/// Serialises on one line. Invalid UTF-8 from a child's output is replaced, never thrown on,
/// so a stray byte cannot take down the MCP stream.
inline std::string dump_line(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}
inline std::string dump_pretty(const json& j) {
    return j.dump(2, ' ', false, json::error_handler_t::replace);
}
/// A reading that may be missing: the number, or null.
inline json number_or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
}  // namespace hotkernel
