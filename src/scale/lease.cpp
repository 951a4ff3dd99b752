// GPU leases: one flock'd file per card in a folder every user shares.
#include "scale/lease.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "gpu/gpu_query.h"
#include "store/results_store.h"
#include "util/host.h"
#include "util/errors.h"
#include "util/strings.h"

namespace hotkernel::scale {
namespace fs = std::filesystem;

fs::path lease_dir() {
    if (const char* d = std::getenv("HOTKERNEL_GPU_LEASE_DIR"); d != nullptr && *d != '\0') return d;
    std::error_code ec;
    fs::path tmp = fs::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    return tmp / "hotkernel-gpu-leases";
}

fs::path lease_path(const std::string& uuid) {
    std::string name = uuid;
    for (char& c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) c = '_';
    if (name.size() > 100) name.resize(100);
    return lease_dir() / (name + ".lock");
}

std::optional<gpu_lease> gpu_lease::try_take(const std::string& uuid, const std::string& what) {
    const fs::path dir = lease_dir();
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        fs::create_directories(dir, ec);
        // Shared by every user, like /tmp: anyone may add a lock file, nobody may remove another's.
        if (!ec) ::chmod(dir.c_str(), 01777);
    }
    const fs::path path = lease_path(uuid);
    // An existing file opens without O_CREAT (fs.protected_regular refuses O_CREAT on another
    // user's file in a sticky folder); one we cannot write is still lockable read-only.
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd >= 0) ::fchmod(fd, 0666);  // past the umask, so other users can lease the card too
    }
    if (fd < 0 && errno == EACCES) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw tool_error(fmt::format("cannot open the GPU lease file '{}': {}; make {} writable for every user (mode "
                                     "1777) or set HOTKERNEL_GPU_LEASE_DIR to a folder that is",
                                     path.string(), std::strerror(errno), dir.string()));
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        if (err == EWOULDBLOCK) return std::nullopt;
        throw tool_error(fmt::format("cannot lock the GPU lease file '{}': {}", path.string(), std::strerror(err)));
    }
    const std::string note = fmt::format("pid {} on {}: {} since {}\n", ::getpid(), host_name(), what, utc_now_iso());
    if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, note.data(), note.size(), 0);  // best effort: read-only is fine
    return gpu_lease(fd, uuid);
}

namespace {
// Inside a pool's own job: its parent holds the card's lease.
bool in_pool_job() {
    const char* own = std::getenv("HOTKERNEL_GPU_LEASE");
    return own != nullptr && *own != '\0';
}
}  // namespace

std::optional<gpu_lease> lease_card_for_run(const std::optional<std::string>& uuid, const std::string& what,
                                            double wait_s, const std::function<bool()>& cancelled,
                                            const std::function<void(const std::string&)>& waiting) {
    if (!uuid || in_pool_job()) return std::nullopt;
    const auto t0 = std::chrono::steady_clock::now();
    bool said = false;
    for (;;) {
        std::optional<gpu_lease> lease;
        try {
            lease = gpu_lease::try_take(*uuid, what);
        } catch (const tool_error&) {
            if (cancelled()) throw;
            return std::nullopt;  // no lease folder: the measurement lock still keeps runs apart
        }
        if (lease) return lease;
        if (!said) {
            waiting(lease_note(*uuid));
            said = true;
        }
        if (cancelled()) throw tool_error(fmt::format("cancelled while waiting for GPU {}'s lease", *uuid));
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > wait_s)
            throw tool_error(fmt::format("GPU {} stayed leased for {:g} s ({}); wait for that job to finish or run on "
                                         "another card (CUDA_VISIBLE_DEVICES)",
                                         *uuid, wait_s, shorten(trim(lease_note(*uuid)), 200)));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

std::optional<gpu_lease> lease_visible_card(process_runner& runner, const cancel_token& cancel,
                                            const std::string& what, double wait_s,
                                            const std::function<void(const std::string&)>& waiting) {
    if (in_pool_job()) return std::nullopt;  // and nvidia-smi is not asked
    std::optional<std::string> uuid;
    try {
        if (auto g = visible_gpu(query_gpus(runner, cancel))) uuid = g->uuid;
    } catch (const tool_error&) {
        if (cancel.cancelled()) throw;
        return std::nullopt;  // no NVIDIA driver, or nvidia-smi failed: nothing to lease
    }
    return lease_card_for_run(uuid, what, wait_s, [&] { return cancel.cancelled(); },
                              [&](const std::string& holder) { waiting(*uuid + ": " + holder); });
}

gpu_lease::gpu_lease(gpu_lease&& other) noexcept : m_fd(other.m_fd), m_uuid(std::move(other.m_uuid)) { other.m_fd = -1; }

gpu_lease& gpu_lease::operator=(gpu_lease&& other) noexcept {
    if (this != &other) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = other.m_fd;
        m_uuid = std::move(other.m_uuid);
        other.m_fd = -1;
    }
    return *this;
}

gpu_lease::~gpu_lease() {
    if (m_fd >= 0) ::close(m_fd);  // closing the last descriptor drops the flock
}

std::string lease_note(const std::string& uuid) {
    std::ifstream in(lease_path(uuid));
    std::string line;
    if (!in || !std::getline(in, line)) return "";
    return shorten(trim(line), 300);
}

}  // namespace hotkernel::scale
