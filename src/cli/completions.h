// Shell completions (bash, zsh, fish) and the man page, generated from the tool registry and
// the command line's own options (cli/command_line.h).
#pragma once
#include <string>
#include <string_view>

namespace hotkernel {
/// The completion script for `shell` (one of completion_shells); usage_error for another.
std::string completion_script(std::string_view shell);
/// hotkernel(1) in roff.
std::string man_page();
}  // namespace hotkernel
