// Writing to a pipe or socket whose reader may be gone.
#pragma once
#include <string_view>

namespace hotkernel {

/// Writes all of `data` to `fd` (a pipe or a socket), retrying short writes and EINTR; false
/// when the other end is gone. SIGPIPE is ignored, so a closed reader is an EPIPE here, never
/// a signal.
bool write_all(int fd, std::string_view data);

}  // namespace hotkernel
