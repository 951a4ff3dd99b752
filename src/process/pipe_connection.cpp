// pipe_connection: a long-lived child over pipes (posix_runner::start).
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

// ---- server connections -------------------------------------------------------------

std::unique_ptr<server_connection> process_runner::start(const process_spec&, std::string* error) {
    if (error) *error = "this process runner cannot keep server connections";
    return nullptr;
}

namespace {

class pipe_connection final : public server_connection {
public:
    pipe_connection(pid_t pid, int in_fd, int out_fd, int err_fd, int chan_fd, const process_spec& spec)
        : m_pid(pid), m_in(in_fd), m_out(out_fd), m_err(err_fd), m_chan(chan_fd), m_limit(spec.max_capture_bytes),
          m_grace_s(spec.kill_grace_s), m_start(clock_type::now()) {
        if (spec.timeout_s > 0)
            m_deadline = m_start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(spec.timeout_s));
    }
    ~pipe_connection() override {
        // Never leak the group: a short grace, then SIGKILL and reap.
        m_grace_s = std::min(m_grace_s, 0.5);
        terminate();
    }

    int pid() const override { return m_pid; }

    bool write_line(const std::string& line) override { return write_raw(line + "\n"); }

    bool write_raw(const std::string& data) {
        if (m_in < 0 || !alive()) return false;
        if (write_all(m_in, data)) return true;
        ::close(m_in);
        m_in = -1;
        return false;
    }

    std::optional<connection_line> read_line(double timeout_s, const cancel_token& cancel) override {
        const auto deadline = after_s(timeout_s);
        while (true) {
            if (auto l = take_line()) return l;
            if (m_out < 0 && m_chan < 0) return take_rest();
            if (cancel.cancelled()) return std::nullopt;
            if (m_deadline && clock_type::now() >= *m_deadline) {
                terminate();  // the connection outlived its whole-life limit
                return std::nullopt;
            }
            const auto now = clock_type::now();
            if (now >= deadline) return std::nullopt;
            const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
            pump(static_cast<int>(std::clamp<long long>(left_ms, 1, 100)));
        }
    }

    bool alive() override {
        if (m_reaped) return false;
        int status = 0;
        pid_t w = reap(m_pid, &status, WNOHANG);
        if (w == m_pid) {
            m_reaped = true;
            m_status = status;
            ::kill(-m_pid, SIGKILL);  // stray members of its group go with it
            return false;
        }
        return true;
    }

    void terminate() override {
        if (m_in >= 0) {
            ::close(m_in);
            m_in = -1;
        }
        if (!m_reaped) {
            ::kill(-m_pid, SIGTERM);
            const auto kill_at = after_s(m_grace_s);
            while (alive() && clock_type::now() < kill_at) pump(20);
            ::kill(-m_pid, SIGKILL);
            if (!m_reaped) {
                int status = 0;
                while (reap(m_pid, &status, 0) < 0 && errno == EINTR) {
                }
                m_reaped = true;
                m_status = status;
            }
        }
        for (int* fd : {&m_out, &m_err, &m_chan})
            if (*fd >= 0) {
                ::close(*fd);
                *fd = -1;
            }
    }

    std::string stderr_tail() override {
        pump(0);
        return m_err_buf;
    }

    std::string describe_exit() override { return alive() ? "running" : describe_wait_status(m_status); }

private:
    /// Reads whatever is ready on stdout, stderr and the channel, waiting up to wait_ms.
    void pump(int wait_ms) {
        std::vector<pollfd> pfds;
        for (int fd : {m_out, m_err, m_chan})
            if (fd >= 0) pfds.push_back({fd, POLLIN, 0});
        if (pfds.empty()) {
            if (wait_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
            return;
        }
        if (::poll(pfds.data(), pfds.size(), wait_ms) <= 0) return;
        char buf[65536];
        for (auto& p : pfds) {
            if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = ::read(p.fd, buf, sizeof buf);
            int* fd = p.fd == m_out ? &m_out : p.fd == m_err ? &m_err : &m_chan;
            if (n > 0) {
                if (fd == &m_err) {
                    bool trunc = false;
                    append_bounded(m_err_buf, buf, static_cast<std::size_t>(n), m_limit, trunc);
                    if (m_err_buf.size() > m_limit) m_err_buf.erase(0, m_err_buf.size() - m_limit);
                } else {
                    (fd == &m_out ? m_out_buf : m_chan_buf).append(buf, static_cast<std::size_t>(n));
                }
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                ::close(*fd);
                *fd = -1;
            }
        }
    }

    std::optional<connection_line> take_line() {
        for (auto* b : {&m_chan_buf, &m_out_buf}) {
            auto nl = b->find('\n');
            if (nl == std::string::npos) continue;
            connection_line l{b->substr(0, nl), b == &m_chan_buf};
            b->erase(0, nl + 1);
            return l;
        }
        return std::nullopt;
    }

    /// Both streams closed: a last line without a newline, if any.
    std::optional<connection_line> take_rest() {
        for (auto* b : {&m_chan_buf, &m_out_buf}) {
            if (b->empty()) continue;
            connection_line l{*b, b == &m_chan_buf};
            b->clear();
            return l;
        }
        return std::nullopt;
    }

    pid_t m_pid;
    int m_in, m_out, m_err, m_chan;
    std::size_t m_limit;
    double m_grace_s;
    clock_type::time_point m_start;
    std::optional<clock_type::time_point> m_deadline;
    std::string m_out_buf, m_err_buf, m_chan_buf;
    bool m_reaped = false;
    int m_status = 0;
};

}  // namespace

std::unique_ptr<server_connection> posix_runner::start(const process_spec& spec, std::string* error) {
    auto fail = [&](const std::string& why) -> std::unique_ptr<server_connection> {
        if (error) *error = why;
        return nullptr;
    };
    child_ends c;
    if (std::string why = spawn_with_pipes(spec, c); !why.empty()) return fail(why);
    auto s = std::make_unique<pipe_connection>(c.pid, c.in, c.out, c.err, c.chan, spec);
    if (!spec.stdin_data.empty()) s->write_raw(spec.stdin_data);
    return s;
}

}  // namespace hotkernel
