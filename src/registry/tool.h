// A tool is data plus a handler. Each tool file builds one tool_spec; all_tools() lists
// them once, in doc order. The CLI, MCP tools/list, the docs and the snapshots are all
// generated from these specs, so the two front ends cannot drift apart.
#pragma once
#include <concepts>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "process/runner.h"
#include "util/errors.h"
#include "util/json.h"
#include "util/words.h"

namespace hotkernel {

enum class param_type { string, integer, number, boolean, string_array };

/// One parameter, declared once: it drives the JSON Schema, the CLI flag (--kebab-case of
/// name), the docs, validation and the filling of the tool's argument struct. Tools declare
/// it with param() below, which sets `type` from the bound member.
struct param_spec {
    std::string name;          ///< snake_case
    param_type type = param_type::string;
    std::string summary;       ///< what it is and its units; never the default or bounds (rendered from the fields)
    std::string details;       ///< more for docs/tools.md and the CLI's --help, never in tools/list
    json default_value;        ///< null: no default
    json cli_default;          ///< the CLI's default where it differs (detail: full); null: default_value
    bool required = false;
    bool positional = false;   ///< CLI takes it positionally (in declaration order)
    std::optional<double> minimum;
    std::optional<double> maximum;
    std::vector<std::string> choices;  ///< enum values, when the set is closed
    /// A string that also takes JSON `true` (arriving as the word "true"; `false` as absent):
    /// `plot`, whose true means "a file of the tool's choosing".
    bool or_true = false;
    bool exclusive_minimum = false;    ///< the bound is `> minimum` (JSON Schema exclusiveMinimum)
    /// Strings, and each item of a list: at most this many bytes (JSON Schema maxLength).
    /// Unset: default_max_length, so no argument can make an error or a fuzzy match slow.
    std::optional<std::size_t> max_length;
};

/// The bound of a string parameter that declares none: a path (PATH_MAX), a name, a shape.
inline constexpr std::size_t default_max_length = 4096;

/// A parameter from its three essentials (for rows declared outside a tool's argument struct).
inline param_spec make_param(std::string name, param_type type, std::string summary) {
    param_spec p;
    p.name = std::move(name);
    p.type = type;
    p.summary = std::move(summary);
    return p;
}

/// "Default 10; 2..1000" rendered from the fields (empty when there is neither); with
/// with_default=false only the bounds.
std::string param_limits(const param_spec& p, bool with_default = true);
/// The summary followed by param_limits(): the description the CLI and the docs show (with the
/// details). tools/list carries the summary alone: its schema has the default and bounds.
std::string param_description(const param_spec& p);
/// A flag's help on the command line (--help, the man page): the description with the CLI's
/// default, the details and the choices.
std::string param_cli_help(const param_spec& p);
/// What the command line shows after a flag: INT, FLOAT, BOOL or TEXT (never TEXT for a number).
const char* param_metavar(param_type t);
/// A default or choice as a user types it: strings bare, lists comma-joined.
std::string param_value_text(const json& v);

/// MCP annotations; set explicitly on every tool (a registry test checks).
struct tool_annotations {
    bool read_only = true;
    bool destructive = false;
    bool idempotent = true;
    bool open_world = false;
};

class fork_server_pool;  // process/fork_server_runner.h

/// Everything a handler may use from the outside world, injected (never global).
struct tool_context {
    process_runner* runner = nullptr;
    /// Warm fork servers pooled between calls (an MCP session owns one); nullptr in the CLI,
    /// whose servers are the kept ones that outlive a command (HOTKERNEL_KEEP_WARM_S).
    fork_server_pool* fork_servers = nullptr;
    /// --python / HOTKERNEL_PYTHON / python3 on PATH, as given; resolve_python() checks it.
    std::string python;
    cancel_token cancel;
    /// Progress sink: (progress, total or <= 0 when unknown, message). MCP turns this into
    /// notifications/progress when the request carried a token; the CLI draws it on a tty.
    std::function<void(double, double, const std::string&)> progress = [](double, double, const std::string&) {};
    /// Human-facing log lines (stderr in both front ends; never stdout).
    std::function<void(const std::string&)> log = [](const std::string&) {};
    /// Which interface the call came through: messages name parameters its way (util/words.h).
    front_end words = front_end::cli;
    /// Fields call_tool sets on an object result before its full record is written: where a
    /// spread's job ran (`placement`, src/scale/run_job.h). Null: none.
    json result_extra;
};

/// The type-erased handler: takes the validated JSON arguments (defaults filled in).
/// Tools do not write one: make_tool() builds it from a handler that takes the typed struct.
using tool_handler = std::function<json(const json& args, tool_context& ctx)>;
/// Optional readable rendering of a result; the default renderer is used when empty.
using tool_renderer = std::function<std::string(const json& result)>;
/// What the caller acts on, from the full result (tool_spec::lean).
using tool_projection = std::function<json(const json& full)>;

struct tool_spec {
    std::string name;          ///< MCP name, snake_case; the CLI uses kebab-case
    std::string title;
    std::string summary;       ///< one line for `hotkernel --help` and the README table
    std::string description;   ///< first sentence: what it returns and when to call it; short (tools/list)
    std::string details;       ///< the rest, for docs/tools.md and the CLI's --help
    std::vector<param_spec> params;
    json output_schema;        ///< JSON Schema of the result object (the lean one where there is `lean`)
    tool_annotations annotations;
    tool_handler handler;
    tool_renderer render;      ///< the CLI's readable output, from the full result
    tool_renderer summarize;   ///< MCP's text block, a few lines from the result sent; render_summary() when empty
    /// Set for tools whose full result is big: the tool takes `detail` (lean by default), every
    /// call writes its full result beside the file named by the `record_beside` argument
    /// (.hotkernel/runs/, see keep_full_record) and a lean result is this projection of it.
    tool_projection lean;
    std::string record_beside;
};

// ---- typed arguments ---------------------------------------------------------------

namespace detail {
template <class T>
struct member_traits;
template <>
struct member_traits<std::string> {
    static constexpr param_type type = param_type::string;
    static std::string from(const json& v) { return v.get<std::string>(); }
};
template <>
struct member_traits<bool> {
    static constexpr param_type type = param_type::boolean;
    static bool from(const json& v) { return v.get<bool>(); }
};
template <>
struct member_traits<double> {
    static constexpr param_type type = param_type::number;
    static double from(const json& v) { return v.get<double>(); }
};
template <std::integral T>
    requires(!std::same_as<T, bool>)
struct member_traits<T> {
    static constexpr param_type type = param_type::integer;
    static T from(const json& v) { return static_cast<T>(v.get<long long>()); }  // bounds checked first
};
template <>
struct member_traits<std::vector<std::string>> {
    static constexpr param_type type = param_type::string_array;
    static std::vector<std::string> from(const json& v) { return v.get<std::vector<std::string>>(); }
};
template <class T>
struct member_traits<std::optional<T>> {
    static constexpr param_type type = member_traits<T>::type;
    static std::optional<T> from(const json& v) { return member_traits<T>::from(v); }
};
template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;

/// A declaration that cannot fill its member the way the schema promises (checked when the
/// registry is built, so a registry test fails on it).
[[noreturn]] void bad_declaration(const param_spec& p, const char* why);
}  // namespace detail

/// One parameter bound to a member of the tool's argument struct.
template <class Args>
struct bound_param {
    param_spec spec;
    std::function<void(Args&, const json&)> fill;
};

/// Declares a parameter of `Args`: the JSON type comes from the member's C++ type
/// (std::string, bool, double, an integer, std::vector<std::string>, or std::optional of one
/// for a parameter without default). A plain member needs a default or `required`.
template <class Args, class T>
bound_param<Args> param(T Args::*member, param_spec spec) {
    spec.type = detail::member_traits<T>::type;
    if constexpr (detail::is_optional<T>) {
        if (spec.required || !spec.default_value.is_null()) detail::bad_declaration(spec, "an optional member has no default and is not required");
    } else if constexpr (!std::same_as<T, std::vector<std::string>>) {
        if (!spec.required && spec.default_value.is_null()) detail::bad_declaration(spec, "a plain member needs a default or required; use std::optional");
    }
    return {std::move(spec), [member](Args& a, const json& v) { a.*member = detail::member_traits<T>::from(v); }};
}

/// `detail`: lean (what the caller acts on, and where the full record is) or full. A tool with a
/// `lean` projection gets it from make_tool(); the handler never sees it.
param_spec detail_param();

/// A tool from its description, its parameters and a handler that takes the typed struct:
/// validation fills the defaults, then each member is set from its parameter.
template <class Args>
tool_spec make_tool(tool_spec spec, std::vector<bound_param<std::type_identity_t<Args>>> params,
                    json (*handler)(const Args&, tool_context&)) {
    std::vector<std::pair<std::string, std::function<void(Args&, const json&)>>> fills;
    for (auto& p : params) {
        fills.emplace_back(p.spec.name, std::move(p.fill));
        spec.params.push_back(std::move(p.spec));
    }
    if (spec.lean) spec.params.push_back(detail_param());
    spec.handler = [fills = std::move(fills), handler](const json& valid, tool_context& ctx) {
        Args args{};
        for (const auto& [name, fill] : fills)
            if (auto it = valid.find(name); it != valid.end() && !it->is_null()) fill(args, *it);
        return handler(args, ctx);
    };
    return spec;
}

/// Every tool, in the order the docs and tools/list show them.
const std::vector<tool_spec>& all_tools();
/// nullptr when no tool has this (snake or kebab) name.
const tool_spec* find_tool(std::string_view name);

/// The MCP inputSchema of a tool, generated from its params.
json input_schema(const tool_spec& tool);
/// The tools/list entry of a tool.
json tool_listing(const tool_spec& tool);

/// Checks args against the tool's params and returns them with defaults filled in.
/// Unknown names get "did you mean"; a list must be a JSON array (the CLI splits its
/// comma form before this).
/// Throws usage_error with a message that names the parameter and the fix, in `words`.
json validate_args(const tool_spec& tool, const json& args, front_end words = front_end::cli);

/// Runs a tool: validate, then the handler; messages rendered for ctx.words. A tool with `lean`
/// has its full result written on disk first (its path in `full_record`), then, unless
/// detail=full, projected. Exceptions other than tool_error propagate.
json call_tool(const tool_spec& tool, const json& args, tool_context& ctx);

/// Writes a full result under <folder of the `record_beside` file>/.hotkernel/runs/ (else under
/// cache_dir()/runs), atomically, and returns the absolute path; empty when neither could be
/// written (`why` says why).
std::string keep_full_record(const tool_spec& tool, const json& valid_args, const json& full, std::string& why);

}  // namespace hotkernel
