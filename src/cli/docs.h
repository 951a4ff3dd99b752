// docs/tools.md, generated from the registry (checked in CI by tests/cli/test_docs).
#pragma once
#include <string>

namespace hotkernel {
std::string tools_markdown();
/// The README's tool table (between its tools:start / tools:end markers), from the summaries.
std::string tools_readme_table();
}
