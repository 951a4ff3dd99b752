#include "parsers/csv.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "util/strings.h"

namespace hotkernel {

std::vector<csv_row> parse_csv(std::string_view text, const csv_options& opts) {
    std::vector<csv_row> rows;
    csv_row row;
    std::string field;
    bool in_quotes = false, was_quoted = false, row_has_content = false;
    auto end_field = [&] {
        row.push_back(opts.trim_fields && !was_quoted ? trim(field) : field);
        field.clear();
        was_quoted = false;
    };
    auto end_row = [&] {
        end_field();
        if (row_has_content) rows.push_back(std::move(row));
        row.clear();
        row_has_content = false;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_quotes) {
            if (c == '"') {
                if (i + 1 < text.size() && text[i + 1] == '"') {
                    field.push_back('"');
                    ++i;
                } else {
                    in_quotes = false;
                }
            } else {
                field.push_back(c);
            }
            continue;
        }
        if (c == '"' && trim(field).empty()) {
            field.clear();
            in_quotes = true;
            was_quoted = true;
            row_has_content = true;
        } else if (c == opts.separator) {
            end_field();
            row_has_content = true;
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            end_row();
        } else {
            field.push_back(c);
            if (!std::isspace(static_cast<unsigned char>(c))) row_has_content = true;
        }
    }
    if (in_quotes || !field.empty() || !row.empty()) end_row();
    return rows;
}

std::optional<double> parse_number(std::string_view text) {
    std::string s = trim(text);
    if (s.empty()) return std::nullopt;
    std::string cleaned;
    cleaned.reserve(s.size());
    for (char c : s)
        if (c != ',') cleaned.push_back(c);  // "1,234,567" -> "1234567"
    // Drop a trailing unit or percent sign ("45.2 %", "1980 MHz").
    while (!cleaned.empty() && !std::isdigit(static_cast<unsigned char>(cleaned.back())) && cleaned.back() != '.') cleaned.pop_back();
    cleaned = trim(cleaned);
    if (cleaned.empty()) return std::nullopt;
    const char* begin = cleaned.data();
    char* end = nullptr;
    double v = std::strtod(begin, &end);
    if (end == begin) return std::nullopt;
    std::string_view rest(end, cleaned.data() + cleaned.size() - end);
    if (!trim(rest).empty()) return std::nullopt;
    if (!std::isfinite(v)) return std::nullopt;
    return v;
}

}  // namespace hotkernel
