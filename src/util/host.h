// This machine, as results and lease notes name it.
#pragma once
#include <string>

namespace hotkernel {

/// gethostname(), "" when it fails.
std::string host_name();

}  // namespace hotkernel
