// Interface words: a message names a parameter, a tool call or a setting the way the front end
// the caller used spells it (MCP `'flops'`, `gpu: "NVIDIA H200"`; CLI `--flops`,
// `--gpu "NVIDIA H200"`). Code that writes a message puts a reference in it (param(), call(),
// either()); call_tool renders every reference in a result or an error for the caller's front
// end (render_words), so no builder needs to know who is asking.
#pragma once
#include <string>
#include <string_view>

#include "util/json.h"

namespace hotkernel {

enum class front_end { cli, mcp };

namespace words {
/// A parameter by name: CLI `--min-bytes`, MCP `'min_bytes'`.
std::string param(std::string_view name);
/// A parameter with a value: CLI `--gpu "NVIDIA H200"` (a list comma-joined, true a bare flag,
/// false `--no-x`), MCP `gpu: "NVIDIA H200"` (the JSON value).
std::string param(std::string_view name, const json& value);
/// A call of a tool with arguments: CLI `hotkernel new --force`, MCP `new {"force": true}`.
std::string call(std::string_view tool, const json& args = json::object());
/// Text that differs by front end beyond a name.
std::string either(std::string_view cli, std::string_view mcp);
/// Where the user's interpreter is chosen: CLI `--python /path/to/python or HOTKERNEL_PYTHON`,
/// MCP the server's environment (HOTKERNEL_PYTHON) or its start command.
std::string python_setting();
}  // namespace words

/// `text` with every reference rendered for `fe`; text without references comes back unchanged.
std::string render_words(std::string_view text, front_end fe);
/// Renders the references in every string of `value`, in place.
void render_words(json& value, front_end fe);

}  // namespace hotkernel
