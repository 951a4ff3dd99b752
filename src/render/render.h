// Readable text for a tool result. The JSON object is the result; this only formats it.
// Driven by value shapes and field-name suffixes (_ms, _pct, _gbs, …), never by tool names.
#pragma once
#include <string>

#include "util/json.h"

namespace hotkernel {
/// Renders an object as aligned "key  value" lines, nested objects indented, arrays of
/// objects as tables (at most `max_rows` rows each).
std::string render_text(const json& result, std::size_t max_rows = 40);
/// A short summary for MCP's text block, beside the whole object as structuredContent: the
/// top-level values one line each (objects inline, lists of objects as a count, findings as their
/// ids), each cut short, at most `max_chars` in all.
std::string render_summary(const json& result, std::size_t max_chars = 800);
/// A number as a person reads it: 4 significant digits, no trailing zeros.
std::string format_number(double v);
}  // namespace hotkernel
