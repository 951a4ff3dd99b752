// A tool is data plus a handler. Each tool file builds one tool_spec; all_tools() lists
// them once, in doc order. The CLI, MCP tools/list, the docs and the snapshots are all
// generated from these specs, so the two front ends cannot drift apart.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "process/runner.h"
#include "util/errors.h"
#include "util/json.h"

namespace hotkernel {

enum class param_type { string, integer, number, boolean, string_array };

/// One parameter, declared once: it drives the JSON Schema, the CLI flag
/// (--kebab-case of name), the docs and validation.
struct param_spec {
    std::string name;          ///< snake_case
    param_type type = param_type::string;
    std::string description;   ///< for the model: units, default and bounds in the text
    json default_value;        ///< null: no default
    bool required = false;
    bool positional = false;   ///< CLI takes it positionally (in declaration order)
    std::optional<double> minimum;
    std::optional<double> maximum;
    std::vector<std::string> choices;  ///< enum values, when the set is closed
};

/// A parameter from its three essentials; set bounds, defaults and choices on the result.
inline param_spec make_param(std::string name, param_type type, std::string description) {
    param_spec p;
    p.name = std::move(name);
    p.type = type;
    p.description = std::move(description);
    return p;
}

/// MCP annotations; set explicitly on every tool (a registry test checks).
struct tool_annotations {
    bool read_only = true;
    bool destructive = false;
    bool idempotent = true;
    bool open_world = false;
};

/// What a tool touches, so `hotkernel mcp` can start without probing anything.
enum class tool_need { none, python, gpu, profiler };

class fork_server_pool;  // measure/warm_launcher.h

/// Everything a handler may use from the outside world, injected (never global).
struct tool_context {
    process_runner* runner = nullptr;
    /// Warm fork servers kept between calls (an MCP session owns one); nullptr in the CLI,
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
};

using tool_handler = std::function<json(const json& args, tool_context& ctx)>;
/// Optional readable rendering of a result; the default renderer is used when empty.
using tool_renderer = std::function<std::string(const json& result)>;

struct tool_spec {
    std::string name;          ///< MCP name, snake_case; the CLI uses kebab-case
    std::string title;
    std::string description;   ///< first sentence: what it returns and when to use it
    std::vector<param_spec> params;
    json output_schema;        ///< JSON Schema of the result object
    tool_annotations annotations;
    std::vector<tool_need> needs;
    tool_handler handler;
    tool_renderer render;
};

/// Every tool, in the order the docs and tools/list show them.
const std::vector<tool_spec>& all_tools();
/// nullptr when no tool has this (snake or kebab) name.
const tool_spec* find_tool(std::string_view name);

/// The MCP inputSchema of a tool, generated from its params.
json input_schema(const tool_spec& tool);
/// The tools/list entry of a tool.
json tool_listing(const tool_spec& tool);

/// Checks args against the tool's params and returns them with defaults filled in.
/// Unknown names get "did you mean"; a comma-separated string is accepted for a string_array.
/// Throws usage_error with a message that names the parameter and the fix.
json validate_args(const tool_spec& tool, const json& args);

/// Runs a tool: validate, then the handler. Exceptions other than tool_error propagate.
json call_tool(const tool_spec& tool, const json& args, tool_context& ctx);

}  // namespace hotkernel
