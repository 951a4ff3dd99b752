#include "util/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "util/errors.h"

namespace hotkernel {

file_lock::file_lock(const std::filesystem::path& path, const options& opt) {
    // Open an existing file without O_CREAT first: with fs.protected_regular, O_CREAT on another
    // user's file in a sticky folder such as /tmp fails even when its mode allows writing.
    m_fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (m_fd < 0 && errno == ENOENT) {
        m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, opt.mode);
        if (m_fd >= 0) ::fchmod(m_fd, opt.mode);  // past the umask, so other users can share it; best effort
    }
    if (m_fd < 0) {
        const std::string why = fmt::format("cannot open the lock file '{}': {}", path.string(), std::strerror(errno));
        if (opt.optional) {
            m_not_held = why;
            return;
        }
        throw tool_error(why + "; check that the folder is writable");
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    while (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            const int err = errno;
            ::close(m_fd);
            throw tool_error(fmt::format("cannot lock '{}': {}", path.string(), std::strerror(err)));
        }
        if (opt.cancelled && opt.cancelled()) {
            ::close(m_fd);
            throw tool_error(fmt::format("cancelled while waiting for '{}'", path.string()));
        }
        if (elapsed() > opt.timeout_s) {
            ::close(m_fd);
            throw tool_error(fmt::format("{} has held '{}' for over {:g} s; check for a stuck process, then rerun",
                                         opt.holder_what, path.string(), opt.timeout_s));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    m_waited_s = elapsed();
}

file_lock::~file_lock() {
    if (m_fd >= 0) {
        ::flock(m_fd, LOCK_UN);
        ::close(m_fd);
    }
}

}  // namespace hotkernel
