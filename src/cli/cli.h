// The command line, generated from the tool registry: one subcommand per tool (kebab-case),
// one flag per parameter, plus `mcp` to serve the same tools over stdio.
#pragma once

namespace hotkernel {
/// Parses argv, runs the tool and prints its result; returns the process exit code.
int run_cli(int argc, char** argv);
}  // namespace hotkernel
