// socket_connection: a connection over a Unix socket to a server that outlives this process (the
// kept fork server), with its lock file and detached start (posix_runner::connect_kept).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

#include "process/posix_io.h"
#include "process/spawn.h"
#include "util/strings.h"

extern char** environ;

namespace hotkernel {

using namespace spawn_detail;

std::unique_ptr<server_connection> process_runner::connect_kept(const process_spec&, const std::filesystem::path&,
                                                              const std::filesystem::path&, std::string* error) {
    if (error) *error = "this process runner cannot keep servers";
    return nullptr;
}

namespace {

/// A connection to a kept server (see connect_kept). Pending until the server listens: each
/// read_line tries to connect first. Owns the lock fd; closing both is all its end does.
class socket_connection final : public server_connection {
public:
    socket_connection(int lock_fd, std::filesystem::path socket, std::filesystem::path log, pid_t spawned, int fd)
        : m_lock(lock_fd), m_socket(std::move(socket)), m_log(std::move(log)), m_spawned(spawned), m_fd(fd) {}
    ~socket_connection() override {
        terminate();
        if (m_lock >= 0) ::close(m_lock);  // releases the flock
    }

    int pid() const override { return m_spawned; }

    bool write_line(const std::string& line) override {
        if (m_fd < 0) return false;
        if (write_all(m_fd, line + "\n")) return true;
        close_fd();
        return false;
    }

    std::optional<connection_line> read_line(double timeout_s, const cancel_token& cancel) override {
        const auto deadline = after_s(timeout_s);
        while (true) {
            if (auto nl = m_buf.find('\n'); nl != std::string::npos) {
                connection_line l{m_buf.substr(0, nl), true};
                m_buf.erase(0, nl + 1);
                return l;
            }
            if (m_closed) return std::nullopt;
            if (cancel.cancelled()) return std::nullopt;
            const auto now = clock_type::now();
            if (now >= deadline) return std::nullopt;
            const int left_ms = static_cast<int>(std::clamp<long long>(
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count(), 1, 100));
            if (m_fd < 0) {
                if (!try_connect()) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(left_ms, 25)));
                continue;
            }
            pollfd p{m_fd, POLLIN, 0};
            if (::poll(&p, 1, left_ms) <= 0) continue;
            char buf[65536];
            ssize_t n = ::recv(m_fd, buf, sizeof buf, 0);
            if (n > 0) m_buf.append(buf, static_cast<std::size_t>(n));
            else if (n == 0 || (errno != EINTR && errno != EAGAIN)) close_fd();
        }
    }

    bool wait_listening(double timeout_s) override {
        const auto deadline = after_s(timeout_s);
        while (m_fd < 0) {
            if (try_connect()) break;
            if (m_closed || !alive() || clock_type::now() >= deadline) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return true;
    }

    bool alive() override {
        if (m_closed) return false;
        if (m_fd >= 0) return true;
        // Pending: alive while the server this connection started has not exited.
        if (m_spawned > 0) {
            int status = 0;
            if (::waitpid(m_spawned, &status, WNOHANG) == m_spawned) {
                m_status = status;
                m_exited = true;
                forget_kept(m_spawned);
                m_closed = true;
                return false;
            }
        }
        return true;
    }

    void terminate() override { close_fd(); }

    std::string stderr_tail() override {
        // The server's output goes to its log: its last lines say why it failed.
        std::FILE* f = std::fopen(m_log.c_str(), "rb");
        if (!f) return {};
        std::string out;
        if (std::fseek(f, 0, SEEK_END) == 0) {
            const long size = std::ftell(f);
            const long from = std::max(0L, size - 4096);
            std::fseek(f, from, SEEK_SET);
            out.resize(static_cast<std::size_t>(size - from));
            out.resize(std::fread(out.data(), 1, out.size(), f));
        }
        std::fclose(f);
        return out;
    }

    std::string describe_exit() override {
        if (m_exited) return describe_wait_status(m_status);
        return m_closed ? "closed the connection" : "running";
    }

private:
    bool try_connect() {
        if (!alive()) return false;
        const int fd = connect_unix(m_socket);
        if (fd < 0) return false;
        m_fd = fd;
        return true;
    }

    void close_fd() {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
        m_closed = true;
    }

public:
    /// A connected socket fd, or -1 (errno says why: ENOENT, ECONNREFUSED, ...).
    static int connect_unix(const std::filesystem::path& path) {
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        const std::string p = path.string();
        if (p.size() >= sizeof addr.sun_path) {
            errno = ENAMETOOLONG;
            return -1;
        }
        std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -1;
        if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            const int e = errno;
            ::close(fd);
            errno = e;
            return -1;
        }
        return fd;
    }

private:
    int m_lock;
    std::filesystem::path m_socket, m_log;
    pid_t m_spawned;  ///< the server this connection started, or 0 (it was running already)
    int m_fd;
    std::string m_buf;
    bool m_closed = false, m_exited = false;
    int m_status = 0;
};

}  // namespace

std::unique_ptr<server_connection> posix_runner::connect_kept(const process_spec& spec,
                                                            const std::filesystem::path& socket,
                                                            const std::filesystem::path& log, std::string* error) {
    auto fail = [&](const std::string& why) -> std::unique_ptr<server_connection> {
        if (error) *error = why;
        return nullptr;
    };
    const std::string lock_path = socket.string() + ".lock";
    const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd < 0) return fail("cannot open " + lock_path + ": " + std::strerror(errno));
    if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(lock_fd);
        return fail("another hotkernel is using the kept fork server");
    }
    if (const int fd = socket_connection::connect_unix(socket); fd >= 0)
        return std::make_unique<socket_connection>(lock_fd, socket, log, 0, fd);
    if (errno == ENAMETOOLONG) {
        ::close(lock_fd);
        return fail("the socket path " + socket.string() + " is too long for a Unix socket");
    }
    // Nothing listens (never started, idled out, or died): start one, detached.
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);  // this start's output only
    if (null_fd < 0 || log_fd < 0) {
        for (int fd : {null_fd, log_fd, lock_fd})
            if (fd >= 0) ::close(fd);
        return fail("cannot open " + log.string() + " for the kept fork server's output");
    }
    const auto exe = find_executable(spec.argv.at(0));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, null_fd, 0);
    posix_spawn_file_actions_adddup2(&fa, log_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, log_fd, 2);
    posix_spawn_file_actions_addchdir_np(&fa, "/");
    // setsid: no terminal's SIGINT or SIGHUP, and no kill of our group, reaches it.
    pid_t pid = 0;
    const int rc = exe.empty() ? ENOENT : spawn_with(exe, spec, &fa, -1, true, pid);
    posix_spawn_file_actions_destroy(&fa);
    ::close(null_fd);
    ::close(log_fd);
    if (rc != 0) {
        ::close(lock_fd);
        return fail("cannot start " + spec.argv.at(0) + ": " + std::strerror(rc));
    }
    remember_kept(pid);
    return std::make_unique<socket_connection>(lock_fd, socket, log, pid, -1);
}

}  // namespace hotkernel
