#include "util/strings.h"

#include <algorithm>
#include <cctype>

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
    const std::string w = to_lower(word);
    const std::size_t limit = std::max<std::size_t>(2, w.size() / 3);
    for (const auto& c : candidates) {
        const std::string lc = to_lower(c);
        std::size_t d = edit_distance(w, lc);
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

std::string tail_text(std::string_view s, std::size_t max_bytes) {
    if (s.size() <= max_bytes) return std::string(s);
    std::string_view tail = s.substr(s.size() - max_bytes);
    auto nl = tail.find('\n');
    if (nl != std::string_view::npos && nl + 1 < tail.size()) tail.remove_prefix(nl + 1);
    return "…" + std::string(tail);
}

}  // namespace hotkernel
