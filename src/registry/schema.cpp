// JSON Schema and the generic argument check, both generated from param_spec rows.
#include <cmath>
#include <stdexcept>
#include <fmt/format.h>

#include "registry/tool.h"
#include "report/findings.h"
#include "util/strings.h"

namespace hotkernel {
namespace {

const char* type_name(param_type t) {
    switch (t) {
        case param_type::string: return "string";
        case param_type::integer: return "integer";
        case param_type::number: return "number";
        case param_type::boolean: return "boolean";
        case param_type::string_array: return "array";
    }
    return "string";
}

/// A value as an error echoes it: JSON, at most max_echo bytes (a long string is cut before it
/// is dumped, so a 10 MiB argument costs nothing).
constexpr std::size_t max_echo = 200;
std::string describe_value(const json& v) {
    if (v.is_string()) return shorten(dump_line(json(shorten(v.get_ref<const std::string&>(), max_echo))), max_echo);
    return shorten(dump_line(v), max_echo);
}

std::size_t max_length_of(const param_spec& p) { return p.max_length.value_or(default_max_length); }

std::string number_text(double d) { return fmt::format("{}", d); }

void check_length(const std::string& where, const json& s, std::size_t max) {
    const auto& text = s.get_ref<const std::string&>();
    if (text.size() > max)
        throw usage_error(fmt::format("{} is {} bytes long, more than the {} it takes; got {}", where, text.size(), max,
                                      describe_value(s)));
}

/// An output schema as tools/list carries it: the top-level fields' types and enums, no
/// descriptions (the tool's description says what the result means; docs/tools.md the rest).
json schema_outline(const json& schema, int depth) {
    if (!schema.is_object()) return schema;
    json out = json::object();
    for (const char* k : {"type", "enum", "required"})
        if (schema.contains(k)) out[k] = schema[k];
    // A property is named, not typed: its type is in docs/tools.md and `hotkernel list-tools
    // --output-schemas`, and "number or null" told an agent little its name had not (20-odd bytes
    // each of every agent's context). A closed set (an enum) keeps its values.
    if (depth > 0 && !out.contains("enum")) out.erase("type");
    if (depth == 0) out.erase("required");  // the lean and the full result both validate
    if (schema.contains("items") && depth < 1) out["items"] = schema_outline(schema["items"], depth + 1);
    if (schema.contains("properties") && depth < 1) {
        json props = json::object();
        for (const auto& [k, v] : schema["properties"].items())
            // Every result carries these two (the server's instructions say so): not in each outline.
            if (depth > 0 || (k != "schema_version" && k != "hotkernel_version")) props[k] = schema_outline(v, depth + 1);
        out["properties"] = props;
    } else {
        out.erase("required");  // required names only make sense beside their properties
    }
    if (out.empty() && schema.contains("description")) out = json::object();  // "any value"
    return out;
}

}  // namespace

std::string param_cli_help(const param_spec& p) {
    param_spec shown = p;
    if (!p.cli_default.is_null()) shown.default_value = p.cli_default;  // the default this front end fills in
    std::string h = param_description(shown);
    if (!p.details.empty()) h += " " + p.details;
    if (!p.choices.empty()) h += fmt::format(" [{}]", fmt::join(p.choices, "|"));
    return h;
}

const char* param_metavar(param_type t) {
    switch (t) {
        case param_type::integer: return "INT";
        case param_type::number: return "FLOAT";
        case param_type::boolean: return "BOOL";
        case param_type::string:
        case param_type::string_array: return "TEXT";
    }
    return "TEXT";
}

std::string param_value_text(const json& v) {
    if (v.is_string()) return v.get<std::string>().empty() ? "\"\"" : v.get<std::string>();
    if (v.is_array()) {
        std::vector<std::string> parts;
        for (const auto& e : v) parts.push_back(param_value_text(e));
        return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ","));
    }
    return dump_line(v);
}

std::string param_limits(const param_spec& p, bool with_default) {
    std::vector<std::string> parts;
    if (with_default && !p.default_value.is_null()) parts.push_back("Default " + param_value_text(p.default_value));
    if (p.minimum && p.exclusive_minimum) {
        parts.push_back("> " + number_text(*p.minimum));
        if (p.maximum) parts.push_back("<= " + number_text(*p.maximum));
    } else if (p.minimum && p.maximum) parts.push_back(number_text(*p.minimum) + ".." + number_text(*p.maximum));
    else if (p.minimum) parts.push_back(">= " + number_text(*p.minimum));
    else if (p.maximum) parts.push_back("<= " + number_text(*p.maximum));
    return fmt::format("{}", fmt::join(parts, "; "));
}

std::string param_description(const param_spec& p) {
    const std::string limits = param_limits(p);
    if (limits.empty()) return p.summary;
    if (p.summary.empty()) return limits + ".";
    return p.summary + (p.summary.back() == '.' ? " " : ". ") + limits + ".";
}

namespace detail {
void bad_declaration(const param_spec& p, const char* why) {
    throw std::logic_error(fmt::format("parameter '{}' is declared wrongly: {}", p.name, why));
}
}  // namespace detail

json input_schema(const tool_spec& tool) {
    json props = json::object();
    json required = json::array();
    for (const auto& p : tool.params) {
        // The summary alone: default, bounds and choices are schema keywords of their own.
        // A string's maxLength is written where it is not the default (4096, PATH_MAX: a path, a name,
        // a shape); the default is said once, in the server's instructions and docs/mcp.md, since
        // 33 copies of it were 4% of tools/list. Validation applies it to every string alike.
        json prop = {{"type", type_name(p.type)}, {"description", p.summary}};
        const bool own_length = max_length_of(p) != default_max_length;
        if (p.type == param_type::string_array) {
            prop["items"] = {{"type", "string"}};
            if (own_length) prop["items"]["maxLength"] = max_length_of(p);
        }
        if (!p.choices.empty()) prop["enum"] = p.choices;
        else if (p.type == param_type::string && own_length) prop["maxLength"] = max_length_of(p);
        // A whole bound is written as an integer (1, not 1.0): the same number to JSON Schema.
        auto bound = [](double d) { return std::floor(d) == d && std::fabs(d) < 1e15 ? json(static_cast<long long>(d)) : json(d); };
        if (p.minimum) prop[p.exclusive_minimum ? "exclusiveMinimum" : "minimum"] = bound(*p.minimum);
        if (p.maximum) prop["maximum"] = bound(*p.maximum);
        if (!p.default_value.is_null()) prop["default"] = p.default_value;
        props[p.name] = prop;
        if (p.required) required.push_back(p.name);
    }
    json schema = {{"type", "object"}, {"properties", props}};
    if (!required.empty()) schema["required"] = required;
    schema["additionalProperties"] = false;
    return schema;
}

json tool_listing(const tool_spec& tool) {
    // The title is the entry's own "title"; annotations carry the hints only (tools/list stays small).
    // A hint is written when it differs from MCP's default (destructive true, idempotent false,
    // open world true), and readOnlyHint always; destructive and idempotent mean nothing for a
    // read-only tool (the spec says so), so they go with it.
    json ann = {{"readOnlyHint", tool.annotations.read_only}};
    if (!tool.annotations.read_only) {
        if (!tool.annotations.destructive) ann["destructiveHint"] = false;
        if (tool.annotations.idempotent) ann["idempotentHint"] = true;
    }
    if (!tool.annotations.open_world) ann["openWorldHint"] = false;
    json entry = {{"name", tool.name}, {"title", tool.title}, {"description", tool.description},
                  {"inputSchema", input_schema(tool)}};
    // The lean results' shapes; every other tool's result is described by its description and
    // docs/tools.md (`hotkernel list-tools --output-schemas`), which keeps tools/list small.
    if (tool.lean && !tool.output_schema.is_null()) entry["outputSchema"] = schema_outline(tool.output_schema, 0);
    entry["annotations"] = ann;
    return entry;
}

// The check itself; its messages name parameters by reference (words::param), rendered by
// validate_args for the caller's interface.
static json check_args(const tool_spec& tool, const json& args_in) {
    if (!args_in.is_null() && !args_in.is_object())
        throw usage_error(fmt::format("{}: arguments must be a JSON object, got {}", tool.name, describe_value(args_in)));
    const json args = args_in.is_null() ? json::object() : args_in;
    std::vector<std::string> names;
    for (const auto& p : tool.params) names.push_back(p.name);

    for (auto it = args.begin(); it != args.end(); ++it) {
        bool known = false;
        for (const auto& p : tool.params) known |= p.name == it.key() || p.name == to_snake(it.key());
        if (!known) {
            auto close = closest_matches(to_snake(it.key()), names);
            std::string hint = close.empty() ? fmt::format("valid parameters: {}", fmt::join(names, ", "))
                                             : fmt::format("did you mean {}?", words::param(close.front()));
            throw usage_error(fmt::format("{}: unknown parameter '{}'; {}", tool.name, shorten(it.key(), max_echo), hint));
        }
    }

    json out = json::object();
    for (const auto& p : tool.params) {
        const json* v = nullptr;
        if (args.contains(p.name)) v = &args[p.name];
        else if (args.contains(to_kebab(p.name))) v = &args[to_kebab(p.name)];
        if (v == nullptr || v->is_null()) {
            if (p.required)
                throw usage_error(fmt::format("{}: missing required parameter {} ({})", tool.name, words::param(p.name), p.summary));
            if (!p.default_value.is_null()) out[p.name] = p.default_value;
            continue;
        }
        const std::string where = fmt::format("{}: parameter {}", tool.name, words::param(p.name));
        json val = *v;
        if (p.or_true && val.is_boolean()) {
            if (!val.get<bool>()) continue;  // false: not asked for
            val = "true";
        }
        switch (p.type) {
            case param_type::string:
                if (!val.is_string()) throw usage_error(fmt::format("{} must be a string, got {}", where, describe_value(val)));
                check_length(where, val, max_length_of(p));
                break;
            case param_type::boolean:
                if (!val.is_boolean()) throw usage_error(fmt::format("{} must be true or false, got {}", where, describe_value(val)));
                break;
            case param_type::integer:
                if (val.is_number_float() && std::floor(val.get<double>()) == val.get<double>())
                    val = static_cast<long long>(val.get<double>());
                if (!val.is_number_integer()) throw usage_error(fmt::format("{} must be an integer, got {}", where, describe_value(val)));
                break;
            case param_type::number:
                if (!val.is_number()) throw usage_error(fmt::format("{} must be a number, got {}", where, describe_value(val)));
                if (!std::isfinite(val.get<double>())) throw usage_error(fmt::format("{} must be finite", where));
                break;
            case param_type::string_array:
                if (val.is_string())  // the schema says array; the CLI's comma form is split before this
                    throw usage_error(fmt::format("{} must be a JSON array of strings, got the string {}; send an array, "
                                                  "e.g. [\"x\", \"w_q\"]",
                                                  where, describe_value(val)));
                if (!val.is_array()) throw usage_error(fmt::format("{} must be a list of strings, got {}", where, describe_value(val)));
                for (const auto& e : val) {
                    if (!e.is_string()) throw usage_error(fmt::format("{} must hold only strings, got {}", where, describe_value(e)));
                    check_length(where, e, max_length_of(p));
                }
                break;
        }
        if ((p.type == param_type::integer || p.type == param_type::number)) {
            const double d = val.get<double>();
            if (p.minimum && d < *p.minimum)
                throw usage_error(fmt::format("{} must be >= {}, got {}", where, *p.minimum, describe_value(val)));
            if (p.maximum && d > *p.maximum)
                throw usage_error(fmt::format("{} must be <= {}, got {}", where, *p.maximum, describe_value(val)));
        }
        if (!p.choices.empty() && p.type == param_type::string) {
            const auto s = val.get<std::string>();
            bool ok = false;
            for (const auto& c : p.choices) ok |= c == s;
            if (!ok) {
                auto close = closest_matches(s, p.choices);
                throw usage_error(fmt::format("{} must be one of {}, got '{}'{}", where, fmt::join(p.choices, ", "), shorten(s, max_echo),
                                              close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close.front())));
            }
        }
        out[p.name] = val;
    }
    return out;
}

json validate_args(const tool_spec& tool, const json& args_in, front_end words_of) {
    try {
        return check_args(tool, args_in);
    } catch (const usage_error& e) {
        throw usage_error(render_words(e.what(), words_of));
    }
}

const tool_spec* find_tool(std::string_view name) {
    const std::string snake = to_snake(name);
    for (const auto& t : all_tools())
        if (t.name == snake) return &t;
    return nullptr;
}

}  // namespace hotkernel
