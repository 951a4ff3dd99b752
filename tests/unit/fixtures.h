// The captured outputs the parser tests read (tests/fixtures: real tool output, see its README).
#pragma once
#include <string>

#include "util/files.h"

namespace hotkernel::test_fixtures {
/// tests/fixtures/<rel>, read whole.
inline std::string fixture(const std::string& rel) { return read_file(std::string(HOTKERNEL_FIXTURES) + "/" + rel); }
}  // namespace hotkernel::test_fixtures
