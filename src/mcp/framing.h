// What the MCP server does with a line that is not a well-formed JSON-RPC message: find its id
// anyway, so the error can be matched to the request (a client waits on an id:null error until
// its timeout), and mend the one defect JavaScript clients produce themselves (a string cut
// inside a surrogate pair). Pure functions, no I/O; fuzzed through fuzz/fuzz_mcp.cpp.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "util/json.h"

namespace hotkernel {

/// The longest id string scan_request_id returns; a longer one is not recovered.
inline constexpr std::size_t max_scanned_id_bytes = 1024;

/// The top-level "id" member of `line` when it is a string or an integer, read by a lexical
/// scan that needs neither valid UTF-8 elsewhere, nor numbers in range, nor the end of the line
/// (an oversized line's start is enough). Linear in the bytes scanned, iterative (no recursion).
/// For a line that parses as a JSON object its answer is the parser's (the last "id" wins), so
/// the fuzzer can check one against the other. nullopt: no usable id.
std::optional<json> scan_request_id(std::string_view line);

/// `line` with every lone UTF-16 surrogate escape inside a string (a \uD800-\uDBFF not followed
/// by a \uDC00-\uDFFF escape, or a \uDC00-\uDFFF on its own) replaced by \uFFFD, the
/// replacement character; nullopt when there is none. Valid pairs and everything else are kept
/// byte for byte.
std::optional<std::string> replace_lone_surrogates(std::string_view line);

/// What one pass over a line finds before it is parsed: the deepest bracket nesting outside
/// strings, and how many bytes the longest string (a key or a value) decodes to (an escape
/// counted as the bytes it stands for; a lone low surrogate as 1). Parsing a 10 MiB string takes
/// the JSON parser far longer than this pass, so a line whose longest string no parameter takes
/// is refused before it is parsed.
struct line_shape {
    int depth = 0;
    std::size_t longest_string = 0;
};
line_shape measure_line(std::string_view line);

/// Why `line` is not JSON, in one short sentence without the line's bytes (at most ~200
/// characters): invalid UTF-8 (at which byte), a number out of range, or the parser's reason.
std::string parse_failure(std::string_view line);

}  // namespace hotkernel
