// The bench contract's result line: last JSON object line with "ms", checked.
#include "parsers/run_line.h"

#include <cmath>

#include <fmt/format.h>

#include "util/strings.h"

namespace hotkernel {
namespace {

// Python's json.dumps writes NaN / Infinity / -Infinity bare, which is not JSON. We turn
// such tokens (outside strings) into marker strings so the line still parses and the error
// can say "ms is NaN" instead of "no result line".
constexpr std::string_view k_marker = "\x01hk-nonfinite:";

std::string quote_bare_nonfinite(std::string_view s, bool& replaced) {
    std::string out;
    out.reserve(s.size() + 16);
    bool in_string = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (in_string) {
            out += c;
            if (c == '\\' && i + 1 < s.size()) out += s[++i];
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
            out += c;
            continue;
        }
        for (std::string_view tok : {"-Infinity", "Infinity", "NaN"}) {
            if (s.substr(i, tok.size()) == tok) {
                out += "\"\\u0001hk-nonfinite:";  // JSON-escaped k_marker
                out += tok;
                out += "\"";
                i += tok.size() - 1;
                replaced = true;
                goto next;
            }
        }
        out += c;
    next:;
    }
    return out;
}

std::string describe_value(const json& v) {
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s.rfind(k_marker, 0) == 0) return s.substr(k_marker.size());
    }
    std::string d = dump_line(v);
    if (d.size() > 80) d = d.substr(0, 77) + "...";
    return d;
}

/// Marker strings back to the plain token ("NaN"), so the stored line reads naturally.
void strip_markers(json& j) {
    if (j.is_string()) {
        const auto& s = j.get_ref<const std::string&>();
        if (s.rfind(k_marker, 0) == 0) j = s.substr(k_marker.size());
    } else if (j.is_structured()) {
        for (auto& v : j) strip_markers(v);
    }
}

}  // namespace

std::string repair_utf8(std::string_view s, bool* changed) {
    std::string out;
    out.reserve(s.size());
    bool bad = false;
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        std::size_t len = 0;
        std::uint32_t cp = 0;
        if (c < 0x80) len = 1, cp = c;
        else if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
        else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
        else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
        bool ok = len > 0 && i + len <= n;
        for (std::size_t k = 1; ok && k < len; ++k) {
            if ((p[i + k] & 0xC0) != 0x80) ok = false;
            else cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        // Reject overlong forms, surrogates and code points past U+10FFFF.
        if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
                   (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF))
            ok = false;
        if (ok) {
            out.append(s.substr(i, len));
            i += len;
        } else {
            out += "\xEF\xBF\xBD";
            bad = true;
            ++i;
        }
    }
    if (changed) *changed = bad;
    return out;
}

run_line parse_run_line(std::string_view stdout_text) {
    run_line r;
    const std::string text = repair_utf8(stdout_text, &r.had_invalid_utf8);
    json chosen;
    std::string chosen_raw;
    for (const auto& raw_line : split_lines(text)) {
        std::string line = trim(raw_line);
        if (line.size() < 2 || line.front() != '{' || line.back() != '}') continue;
        json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded()) {
            bool replaced = false;
            std::string fixed = quote_bare_nonfinite(line, replaced);
            if (!replaced) continue;
            j = json::parse(fixed, nullptr, false);
            if (j.is_discarded()) continue;
        }
        if (!j.is_object() || !j.contains("ms")) continue;
        ++r.candidates;
        chosen = std::move(j);
        chosen_raw = line;
    }
    if (chosen.is_null()) {
        r.error = run_line_error::no_line;
        r.message = "printed no JSON line with \"ms\" on stdout (the bench contract: print one line like "
                    "{\"ms\": 1.23, \"ok\": true})";
        return r;
    }
    run_line r2 = check_run_line(std::move(chosen));
    r2.raw = chosen_raw;
    r2.candidates = r.candidates;
    r2.had_invalid_utf8 = r.had_invalid_utf8;
    return r2;
}

run_line check_run_line(json chosen) {
    run_line r;
    r.candidates = 1;
    if (!chosen.is_object() || !chosen.contains("ms")) {
        r.error = run_line_error::no_line;
        r.message = "sent a result without \"ms\"";
        if (chosen.is_object()) r.line = std::move(chosen);
        return r;
    }
    const json& ms = chosen["ms"];
    auto fail = [&](run_line_error e, std::string msg) {
        r.error = e;
        r.message = std::move(msg);
        r.line = chosen;
        strip_markers(r.line);
        return r;
    };
    if (ms.is_string() && ms.get_ref<const std::string&>().rfind(k_marker, 0) == 0)
        return fail(run_line_error::ms_not_finite,
                    fmt::format("printed \"ms\": {} (not a finite number)", describe_value(ms)));
    if (!ms.is_number())
        return fail(run_line_error::ms_not_number, fmt::format("printed \"ms\": {} (expected a number of milliseconds)",
                                                               describe_value(ms)));
    const double v = ms.get<double>();
    if (!std::isfinite(v))
        return fail(run_line_error::ms_not_finite, fmt::format("printed \"ms\": {} (not a finite number)", v));
    if (v < 0) return fail(run_line_error::ms_negative, fmt::format("printed \"ms\": {} (a time cannot be negative)", v));
    if (chosen.contains("ok") && !chosen["ok"].is_null()) {
        if (!chosen["ok"].is_boolean())
            return fail(run_line_error::ok_not_bool,
                        fmt::format("printed \"ok\": {} (expected true or false)", describe_value(chosen["ok"])));
        r.ok = chosen["ok"].get<bool>();
    }
    r.error = run_line_error::none;
    r.ms = v;
    r.line = std::move(chosen);
    strip_markers(r.line);
    return r;
}

}  // namespace hotkernel
