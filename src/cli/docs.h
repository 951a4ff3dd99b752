// docs/tools.md, generated from the registry (checked in CI by tests/cli/test_docs).
#pragma once
#include <string>

namespace hotkernel {
std::string tools_markdown();
}
