#include "util/strings.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "util/errors.h"

namespace hotkernel {

std::string to_kebab(std::string_view snake) {
    std::string out(snake);
    std::replace(out.begin(), out.end(), '_', '-');
    return out;
}

std::string to_snake(std::string_view kebab) {
    std::string out(kebab);
    std::replace(out.begin(), out.end(), '-', '_');
    return out;
}

std::string trim(std::string_view s) {
    auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return std::string(s);
}

std::string to_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string to_upper(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        auto pos = s.find(sep, start);
        out.emplace_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) out += sep;
        out += parts[i];
    }
    return out;
}

std::vector<std::string> split_lines(std::string_view s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < s.size()) {
        auto pos = s.find('\n', start);
        std::string_view line = s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        out.emplace_back(line);
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return out;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
    if (prefix.size() > s.size()) return false;
    return to_lower(s.substr(0, prefix.size())) == to_lower(prefix);
}

bool contains_ci(std::string_view haystack, std::string_view needle) {
    return to_lower(haystack).find(to_lower(needle)) != std::string::npos;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::vector<std::string> closest_matches(std::string_view word, const std::vector<std::string>& candidates,
                                         std::size_t max_results) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    // A word more than twice as long as every candidate is farther than its limit from all of
    // them: answered before it is even copied (a 10 MiB argument costs nothing).
    std::size_t longest = 0;
    for (const auto& c : candidates) longest = std::max(longest, c.size());
    if (word.size() > 2 * longest + 3) return {};
    const std::string w = to_lower(word);
    const std::size_t limit = std::max<std::size_t>(2, w.size() / 3);
    for (const auto& c : candidates) {
        const std::string lc = to_lower(c);
        // The distance is at least the length gap: a word far longer than every candidate (a
        // 10 MiB argument) costs nothing, and the answer is the same.
        const std::size_t gap = w.size() > lc.size() ? w.size() - lc.size() : lc.size() - w.size();
        std::size_t d = gap > limit ? limit + 1 : edit_distance(w, lc);
        if (!w.empty() && lc.find(w) != std::string::npos) d = std::min<std::size_t>(d, 1);
        if (d <= limit) scored.emplace_back(d, c);
    }
    std::stable_sort(scored.begin(), scored.end(), [](auto& x, auto& y) { return x.first < y.first; });
    std::vector<std::string> out;
    for (auto& [d, c] : scored) {
        if (out.size() >= max_results) break;
        out.push_back(c);
    }
    return out;
}

std::string shorten(std::string_view s, std::size_t max_bytes) {
    if (s.size() <= max_bytes) return std::string(s);
    const std::string tail = fmt::format("… ({} bytes)", s.size());
    std::size_t keep = max_bytes > tail.size() ? max_bytes - tail.size() : 0;
    while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;  // not inside a character
    return std::string(s.substr(0, keep)) + tail;
}

std::string tail_text(std::string_view s, std::size_t max_bytes) {
    if (s.size() <= max_bytes) return std::string(s);
    std::string_view tail = s.substr(s.size() - max_bytes);
    auto nl = tail.find('\n');
    if (nl != std::string_view::npos && nl + 1 < tail.size()) tail.remove_prefix(nl + 1);
    return "…" + std::string(tail);
}

std::vector<std::string> split_command_line(const std::string& text) {
    std::vector<std::string> out;
    std::string word;
    bool in_word = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\'') {
            const auto end = text.find('\'', i + 1);
            if (end == std::string::npos) throw usage_error("command: unterminated single quote in '" + text + "'; close the quote");
            word += text.substr(i + 1, end - i - 1);
            i = end;
            in_word = true;
        } else if (c == '"') {
            std::size_t j = i + 1;
            for (; j < text.size() && text[j] != '"'; ++j) {
                if (text[j] == '\\' && j + 1 < text.size() && (text[j + 1] == '"' || text[j + 1] == '\\' || text[j + 1] == '$' || text[j + 1] == '`'))
                    ++j;
                word += text[j];
            }
            if (j >= text.size()) throw usage_error("command: unterminated double quote in '" + text + "'; close the quote");
            i = j;
            in_word = true;
        } else if (c == '\\' && i + 1 < text.size()) {
            word += text[++i];
            in_word = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) out.push_back(word);
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) out.push_back(word);
    return out;
}

std::string join_command_line(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?&|;<>()[]{}!#~") == std::string::npos;
        if (plain) {
            out += a;
            continue;
        }
        out += '\'';
        for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += '\'';
    }
    return out;
}

std::string case_insensitive_regex(const std::string& pattern_in) {
    // A leading (?i) asks for what this function does anyway; other engines reject it.
    const std::string pattern = pattern_in.rfind("(?i)", 0) == 0 ? pattern_in.substr(4) : pattern_in;
    std::string out;
    bool in_class = false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            out += c;
            out += pattern[++i];
            continue;
        }
        if (in_class) {
            out += c;
            if (c == ']') in_class = false;
            continue;
        }
        if (c == '[') {
            in_class = true;
            out += c;
            // A ']' right after '[' or '[^' is a literal member, not the end.
            if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
            if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
            continue;
        }
        if (std::isalpha(static_cast<unsigned char>(c))) {
            const char lo = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            const char up = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            out += '[';
            out += lo;
            out += up;
            out += ']';
            continue;
        }
        out += c;
    }
    return out;
}

}  // namespace hotkernel
