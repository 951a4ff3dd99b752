// The command line's own words beside the tools' (which come from the registry): its global
// options and the commands that are not tools. cli.cpp registers them with CLI11; the shell
// completions and the man page are rendered from them and the registry, so nothing the user can
// type is declared twice.
#pragma once
#include <array>
#include <string_view>

namespace hotkernel {

struct global_option {
    std::string_view flag;   ///< "--quiet"
    std::string_view alias;  ///< "-q", or ""
    std::string_view value;  ///< what it takes ("FILE", "PYTHON"); "" for a switch
    std::string_view help;
};

inline constexpr std::array global_options = {
    global_option{"--json", "", "",
                  "Print the result as one JSON object: the full record (MCP returns it with detail: full)"},
    global_option{"--quiet", "-q", "",
                  "No progress on stderr (by default a bar on a terminal, a line a second in a log)"},
    global_option{"--json-out", "", "FILE",
                  "Also write the result as JSON to this file (e.g. a verify result to pass to record)"},
    global_option{"--python", "", "PYTHON",
                  "The Python interpreter that runs your kernels (default: $HOTKERNEL_PYTHON, else python3 on PATH)"},
};

/// Commands of the command line that are not tools; `hidden` ones serve the repository's scripts.
/// --help lists mcp before the tools and the others after them.
struct cli_command {
    std::string_view name;
    std::string_view help;
    bool hidden = false;
    bool before_tools = false;
};

inline constexpr std::array cli_commands = {
    cli_command{"mcp", "Serve every tool over MCP on stdin/stdout (newline-delimited JSON-RPC)", false, true},
    cli_command{"completions", "Print the shell completion script for bash, zsh or fish"},
    cli_command{"man", "Print the man page (roff): hotkernel man > hotkernel.1"},
    cli_command{"batch", "Run a file of verify and bench calls (JSON lines) spread over GPUs or Slurm"},
    cli_command{"docs", "Print docs/tools.md, generated from the tool registry", true},
    cli_command{"list-tools", "Print the MCP tools/list result as JSON", true},
    cli_command{"run-job", "Run one job of a spread (a JSON file, or - for stdin) and print its result", true},
};

/// What the exit status says (--help's footer, the man page).
inline constexpr std::string_view exit_status_help =
    "Exit codes: 0 success; 1 the tool failed, or a verify --fail-on gate failed (slower, incorrect, invalid, past "
    "the regression bound); 2 usage; 3 internal error (please report); 4 a --fail-on gate undecided (inconclusive "
    "where the gate needs a decision: retry or raise --n).";

/// The shells completion_script() writes for.
inline constexpr std::array completion_shells = {std::string_view("bash"), std::string_view("zsh"),
                                                 std::string_view("fish")};

}  // namespace hotkernel
