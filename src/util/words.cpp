#include "util/words.h"

#include "util/strings.h"

namespace hotkernel {
namespace {

// A reference is its JSON payload between two unit separators. dump_line escapes control
// characters, so the separator never occurs inside a payload; a result that still holds one
// after rendering shows up as \u001f in its JSON (a test scans for it).
constexpr char mark = '\x1f';

std::string reference(const json& payload) { return std::string(1, mark) + dump_line(payload) + mark; }

/// A value as a shell user types it: bare when safe, else quoted.
std::string shell_word(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:,=+-@%") ==
                          std::string::npos)
        return s;
    if (s.find_first_of("\"$`\\!") == std::string::npos) return "\"" + s + "\"";
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string cli_param(const std::string& name, const json* value) {
    const std::string flag = "--" + to_kebab(name);
    if (value == nullptr) return flag;
    if (value->is_boolean()) return value->get<bool>() ? flag : "--no-" + to_kebab(name);
    if (value->is_string()) return flag + " " + shell_word(value->get<std::string>());
    if (value->is_array()) {
        std::string joined;
        for (const auto& e : *value) joined += (joined.empty() ? "" : ",") + (e.is_string() ? e.get<std::string>() : dump_line(e));
        return flag + " " + shell_word(joined);
    }
    return flag + " " + dump_line(*value);
}

std::string mcp_param(const std::string& name, const json* value) {
    return value == nullptr ? "'" + name + "'" : name + ": " + dump_line(*value);
}

std::string render_one(const json& ref, front_end fe) {
    if (ref.contains("p")) {
        const std::string name = ref["p"].get<std::string>();
        const json* value = ref.contains("v") ? &ref["v"] : nullptr;
        return fe == front_end::cli ? cli_param(name, value) : mcp_param(name, value);
    }
    if (ref.contains("c")) {
        const std::string tool = ref["c"].get<std::string>();
        const json& args = ref["a"];
        if (fe == front_end::mcp) return args.empty() ? tool : tool + " " + dump_line(args);
        std::string out = "hotkernel " + to_kebab(tool);
        for (const auto& [k, v] : args.items()) out += " " + cli_param(k, &v);
        return out;
    }
    return ref.value(fe == front_end::cli ? "cli" : "mcp", std::string());
}

}  // namespace

namespace words {
std::string param(std::string_view name) { return reference(json{{"p", name}}); }
std::string param(std::string_view name, const json& value) { return reference(json{{"p", name}, {"v", value}}); }
std::string call(std::string_view tool, const json& args) { return reference(json{{"c", tool}, {"a", args}}); }
std::string either(std::string_view cli, std::string_view mcp) { return reference(json{{"cli", cli}, {"mcp", mcp}}); }
std::string python_setting() {
    return either("--python /path/to/python or HOTKERNEL_PYTHON=/path/to/python",
                  "HOTKERNEL_PYTHON=/path/to/python in the MCP server's environment (or start it as `hotkernel "
                  "--python /path/to/python mcp`)");
}
}  // namespace words

std::string render_words(std::string_view text, front_end fe) {
    if (text.find(mark) == std::string_view::npos) return std::string(text);
    std::string out;
    out.reserve(text.size());
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t open = text.find(mark, at);
        if (open == std::string_view::npos) {
            out.append(text.substr(at));
            break;
        }
        out.append(text.substr(at, open - at));
        const std::size_t close = text.find(mark, open + 1);
        if (close == std::string_view::npos) break;  // a reference cut short (a bounded message): drop its rest
        const json ref = json::parse(text.substr(open + 1, close - open - 1), nullptr, false);
        if (ref.is_object()) out += render_one(ref, fe);
        at = close + 1;
    }
    return out;
}

void render_words(json& value, front_end fe) {
    if (value.is_string()) {
        const std::string& s = value.get_ref<const std::string&>();
        if (s.find(mark) != std::string::npos) value = render_words(s, fe);
    } else if (value.is_structured()) {
        for (auto& v : value) render_words(v, fe);
    }
}

}  // namespace hotkernel
