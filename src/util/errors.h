// The two tiers of failure. tool_error is what the user can fix (MCP isError result,
// CLI exit 1); usage_error is a malformed call (CLI exit 2, MCP isError). Anything else
// that escapes a handler is a bug and is reported as one.
#pragma once
#include <stdexcept>
#include <string>

namespace hotkernel {

/// A failure the user can fix. The message says what failed, the value, and the fix.
struct tool_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Arguments that do not fit the tool's schema (unknown flag, wrong type, out of range).
struct usage_error : tool_error {
    using tool_error::tool_error;
};

/// Exit codes of the CLI, in one place (README "Exit codes"). A verify with fail_on exits
/// gate_failed or undecided by its gate; without it, ok whatever the verdict.
enum class exit_status : int { ok = 0, tool_failed = 1, gate_failed = 1, usage = 2, internal = 3, undecided = 4 };

}  // namespace hotkernel
