// Parses a measured run's stdout (the bench contract) into its result line: the LAST line
// that parses as a JSON object with an "ms" key; or checks a result that came as an object.
// Pure: text in, struct out, never throws.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "util/json.h"

namespace hotkernel {

enum class run_line_error {
    none,
    no_line,          ///< no stdout line is a JSON object with an "ms" key
    ms_not_number,    ///< "ms" is a string, null, bool, array or object
    ms_not_finite,    ///< "ms" is NaN or ±Infinity (Python's json.dumps writes these bare)
    ms_negative,      ///< "ms" < 0
    ok_not_bool,      ///< "ok" is present but not true/false
};

struct run_line {
    run_line_error error = run_line_error::no_line;
    /// Says what was wrong, with the offending value, when error != none.
    std::string message;
    /// The chosen line as parsed (invalid UTF-8 replaced by U+FFFD); null when none was found.
    json line;
    /// The chosen line exactly as printed (after UTF-8 repair), for the record.
    std::string raw;
    double ms = 0;
    std::optional<bool> ok;  ///< absent: the script made no correctness claim
    /// How many stdout lines were JSON objects carrying "ms" (more than one is legal).
    int candidates = 0;
    /// The script's stdout had bytes that were not valid UTF-8 (replaced before parsing).
    bool had_invalid_utf8 = false;

    [[nodiscard]] bool valid() const { return error == run_line_error::none; }
};

/// Finds and checks the result line. A line with "ms" whose value is bad is an error even when
/// an earlier line was good: the script's last word counts, nothing is guessed.
run_line parse_run_line(std::string_view stdout_text);

/// The same checks on a result that came as one JSON object already (the trusted harness's
/// channel): "ms" a finite number >= 0, "ok" true/false when present. candidates is 1.
run_line check_run_line(json line);

/// Replaces every byte sequence that is not valid UTF-8 by U+FFFD; exposed for tests.
std::string repair_utf8(std::string_view s, bool* changed = nullptr);

}  // namespace hotkernel
