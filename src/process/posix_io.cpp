// Writing to pipes and sockets without SIGPIPE.
#include "process/posix_io.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace hotkernel {

/// Writes all of `data` to `fd` (a pipe or a socket); false when the other end is gone. SIGPIPE
/// is ignored, so a closed reader is an EPIPE here, never a signal.
bool write_all(int fd, std::string_view data) {
    ::signal(SIGPIPE, SIG_IGN);
    std::size_t off = 0;
    while (off < data.size()) {
        ssize_t n = ::write(fd, data.data() + off, data.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        off += static_cast<std::size_t>(n);
    }
    return true;
}

}  // namespace hotkernel
