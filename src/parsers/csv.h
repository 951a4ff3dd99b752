// A small RFC 4180 CSV reader for the CSVs other tools write (ncu, nsys, nvidia-smi):
// quoted fields with commas, doubled quotes and newlines inside, CRLF, short rows.
// Pure: text in, rows out.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hotkernel {

using csv_row = std::vector<std::string>;

struct csv_options {
    char separator = ',';
    bool trim_fields = false;   ///< strip spaces around unquoted fields (nvidia-smi writes ", ")
};

/// Splits CSV text into rows of fields. Never throws: an unterminated quote takes the rest
/// of the text as the last field. Blank lines are dropped.
std::vector<csv_row> parse_csv(std::string_view text, const csv_options& opts = {});

/// A number as the profilers print it: "1,234.5", "  12 ", "n/a" -> nullopt.
/// Thousands separators are removed only when the text is not a plain decimal.
std::optional<double> parse_number(std::string_view text);

}  // namespace hotkernel
