// Small string helpers shared by the CLI, parsers and renderers, and the shell-word
// splitting and regex rewriting the profiler front ends use.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hotkernel {

std::string to_kebab(std::string_view snake);   ///< measured_mem_gbs -> measured-mem-gbs
std::string to_snake(std::string_view kebab);   ///< measured-mem-gbs -> measured_mem_gbs
std::string trim(std::string_view s);
std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep = ", ");
std::vector<std::string> split_lines(std::string_view s);  ///< accepts \n and \r\n
bool starts_with_ci(std::string_view s, std::string_view prefix);
bool contains_ci(std::string_view haystack, std::string_view needle);
/// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The candidates closest to `word` (distance <= max(2, len/3)), best first.
std::vector<std::string> closest_matches(std::string_view word, const std::vector<std::string>& candidates,
                                         std::size_t max_results = 3);
/// `s` when it fits in `max_bytes`, else its start and "… (N bytes)" in at most `max_bytes`:
/// every value an error message echoes goes through it.
std::string shorten(std::string_view s, std::size_t max_bytes = 200);
/// The last `max_bytes` of `s`, cut at a line start when possible; for stderr tails in errors.
std::string tail_text(std::string_view s, std::size_t max_bytes = 2000);

/// Splits a command line like a POSIX shell does for words: whitespace separates, single
/// quotes keep everything, double quotes keep all but \" and \\, a backslash escapes one char.
/// No variables, globs or pipes. Throws usage_error on an unterminated quote.
std::vector<std::string> split_command_line(const std::string& text);

/// Joins argv back into one line a shell would split the same way (for display).
std::string join_command_line(const std::vector<std::string>& argv);

/// Rewrites a regex so that letters outside bracket expressions match either case:
/// "gelu" -> "[gG][eE][lL][uU]". Escapes and bracket expressions are kept as they are.
std::string case_insensitive_regex(const std::string& pattern);

}  // namespace hotkernel
