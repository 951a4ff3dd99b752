#include "mcp/framing.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/strings.h"

namespace hotkernel {
namespace {

constexpr bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

struct scanner {
    std::string_view s;
    std::size_t i = 0;

    [[nodiscard]] bool end() const { return i >= s.size(); }
    [[nodiscard]] char peek() const { return s[i]; }
    void skip_ws() {
        while (!end() && is_ws(peek())) ++i;
    }
    /// At a '"': past its closing quote; false when the line ends first.
    bool skip_string() {
        ++i;
        while (i < s.size()) {
            const char c = s[i++];
            if (c == '\\') {
                if (i >= s.size()) return false;
                ++i;
            } else if (c == '"') {
                return true;
            }
        }
        return false;
    }
    /// Past one value of any kind (brackets counted, strings skipped, nothing decoded).
    bool skip_value() {
        if (end()) return false;
        const char c = peek();
        if (c == '"') return skip_string();
        if (c == '{' || c == '[') {
            std::size_t depth = 0;
            while (!end()) {
                const char d = peek();
                if (d == '"') {
                    if (!skip_string()) return false;
                    continue;
                }
                ++i;
                if (d == '{' || d == '[') ++depth;
                else if ((d == '}' || d == ']') && --depth == 0) return true;
            }
            return false;
        }
        const std::size_t start = i;
        while (!end() && !is_ws(peek()) && peek() != ',' && peek() != '}' && peek() != ']' && peek() != ':') ++i;
        return i > start;
    }
};

/// A JSON string token (with its quotes) as text; nullopt when it does not decode.
std::optional<std::string> decode_string(std::string_view token) {
    const json v = json::parse(token.begin(), token.end(), nullptr, /*allow_exceptions=*/false);
    if (!v.is_string()) return std::nullopt;
    return v.get<std::string>();
}

bool hex4(std::string_view s, std::size_t at, unsigned& v) {
    if (at + 4 > s.size()) return false;
    v = 0;
    for (std::size_t k = at; k < at + 4; ++k) {
        const char c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
        else return false;
    }
    return true;
}

/// Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
/// forms, no encoded surrogates, nothing past U+10FFFF); npos when all of it is.
std::size_t first_invalid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;
        unsigned lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
        if (b < 0x80) { ++i; continue; }
        if (b >= 0xC2 && b <= 0xDF) n = 1;
        else if (b == 0xE0) { n = 2; lo = 0xA0; }
        else if (b >= 0xE1 && b <= 0xEC) n = 2;
        else if (b == 0xED) { n = 2; hi = 0x9F; }
        else if (b >= 0xEE && b <= 0xEF) n = 2;
        else if (b == 0xF0) { n = 3; lo = 0x90; }
        else if (b >= 0xF1 && b <= 0xF3) n = 3;
        else if (b == 0xF4) { n = 3; hi = 0x8F; }
        else return i;
        for (std::size_t k = 1; k <= n; ++k) {
            if (i + k >= s.size()) return i;
            const auto c = static_cast<unsigned char>(s[i + k]);
            if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return i;
        }
        i += n + 1;
    }
    return std::string_view::npos;
}

}  // namespace

std::optional<json> scan_request_id(std::string_view line) {
    scanner sc{line};
    if (line.substr(0, 3) == "\xEF\xBB\xBF") sc.i = 3;  // the parser skips a leading BOM too
    sc.skip_ws();
    if (sc.end() || sc.peek() != '{') return std::nullopt;
    ++sc.i;
    std::optional<json> found;
    while (true) {
        sc.skip_ws();
        if (sc.end() || sc.peek() != '"') return found;
        const std::size_t key_start = sc.i;
        if (!sc.skip_string()) return found;
        const std::string_view raw = line.substr(key_start + 1, sc.i - key_start - 2);
        bool is_id = raw == "id";
        if (!is_id && raw.find('\\') != std::string_view::npos && raw.size() <= 64) {  // "i\u0064"
            const auto key = decode_string(line.substr(key_start, sc.i - key_start));
            is_id = key && *key == "id";
        }
        sc.skip_ws();
        if (sc.end() || sc.peek() != ':') return found;
        ++sc.i;
        sc.skip_ws();
        if (sc.end()) return found;
        const std::size_t value_start = sc.i;
        const char first = sc.peek();
        if (!sc.skip_value()) return is_id ? std::nullopt : found;
        if (is_id) {
            const std::string_view token = line.substr(value_start, sc.i - value_start);
            found.reset();  // a later "id" replaces an earlier one, as in the parser
            if (first == '"' && token.size() <= max_scanned_id_bytes + 2) {
                if (auto s = decode_string(token)) found = json(*s);
            } else if (first == '-' || (first >= '0' && first <= '9')) {
                json v = json::parse(token.begin(), token.end(), nullptr, /*allow_exceptions=*/false);
                if (v.is_number_integer()) found = std::move(v);
            }
        }
        sc.skip_ws();
        if (sc.end() || sc.peek() != ',') return found;
        ++sc.i;
    }
}

std::optional<std::string> replace_lone_surrogates(std::string_view s) {
    std::string out;
    std::size_t copied = 0;
    bool replaced = false;
    bool in_string = false;
    std::size_t i = 0;
    auto replace = [&](std::size_t at) {
        out.append(s.substr(copied, at - copied));
        out += "\\ufffd";
        copied = at + 6;
        replaced = true;
    };
    while (i < s.size()) {
        const char c = s[i];
        if (!in_string || c != '\\') {
            if (c == '"') in_string = !in_string;
            ++i;
            continue;
        }
        unsigned v = 0;
        if (i + 1 >= s.size() || s[i + 1] != 'u' || !hex4(s, i + 2, v)) {
            i += 2;  // any other escape, kept
            continue;
        }
        if (v >= 0xD800 && v <= 0xDBFF) {
            unsigned w = 0;
            if (i + 7 < s.size() && s[i + 6] == '\\' && s[i + 7] == 'u' && hex4(s, i + 8, w) && w >= 0xDC00 &&
                w <= 0xDFFF) {
                i += 12;  // a valid pair
                continue;
            }
            replace(i);
        } else if (v >= 0xDC00 && v <= 0xDFFF) {
            replace(i);
        }
        i += 6;
    }
    if (!replaced) return std::nullopt;
    out.append(s.substr(copied));
    return out;
}

line_shape measure_line(std::string_view s) {
    line_shape shape;
    int depth = 0;
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (c != '"') {
            if (c == '[' || c == '{') shape.depth = std::max(shape.depth, ++depth);
            else if (c == ']' || c == '}') --depth;
            ++i;
            continue;
        }
        std::size_t n = 0;  // decoded bytes of this string
        for (++i; i < s.size() && s[i] != '"'; ++n) {
            if (s[i] != '\\') {
                ++i;
                continue;
            }
            unsigned v = 0;
            if (i + 1 < s.size() && s[i + 1] == 'u' && hex4(s, i + 2, v)) {
                n += v < 0x80 ? 0 : v < 0x800 ? 1 : (v >= 0xDC00 && v <= 0xDFFF) ? 0 : 2;  // +1 below
                i += 6;
            } else {
                i += 2;
            }
        }
        ++i;  // the closing quote
        shape.longest_string = std::max(shape.longest_string, n);
    }
    return shape;
}

std::string parse_failure(std::string_view line) {
    if (const std::size_t bad = first_invalid_utf8(line); bad != std::string_view::npos)
        return fmt::format("the line is not valid UTF-8 (byte {} of {})", bad, line.size());
    try {
        const json parsed = json::parse(line.begin(), line.end());
        (void)parsed;
    } catch (const json::out_of_range&) {
        return "a number is out of range: JSON numbers must fit a double (1e999 does not)";
    } catch (const json::parse_error& e) {
        // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error while
        // parsing value - invalid literal; last read: '<the bytes>'; expected ...": the bytes
        // are left out.
        std::string what = e.what();
        if (auto p = what.find("] "); p != std::string::npos) what.erase(0, p + 2);
        std::string expected;
        if (auto p = what.rfind("; expected "); p != std::string::npos) expected = what.substr(p);
        if (auto p = what.find("; last read"); p != std::string::npos) what.erase(p);
        return fmt::format("not valid JSON at byte {}: {}", e.byte, shorten(what + shorten(expected, 80), 160));
    } catch (const std::exception&) {
        return "not valid JSON";
    }
    return "not valid JSON";
}

}  // namespace hotkernel
