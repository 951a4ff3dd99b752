// posix_runner::run: one child to completion (poll on its pipes, the timeout, the kill of its
// group), and the asynchronous form over it.
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

process_result posix_runner::run(const process_spec& spec, const cancel_token& cancel) {
    process_result res;
    const auto start = clock_type::now();
    child_ends c;
    if (std::string why = spawn_with_pipes(spec, c); !why.empty()) {
        res.spawn_failed = true;
        res.spawn_error = why;
        return res;
    }
    const pid_t pid = c.pid;
    res.pid = pid;

    // Feed stdin from a thread so a child that does not read it cannot block us.
    std::thread stdin_writer([fd = c.in, data = spec.stdin_data]() {
        std::size_t off = 0;
        signal(SIGPIPE, SIG_IGN);
        while (off < data.size()) {
            ssize_t n = ::write(fd, data.data() + off, data.size() - off);
            if (n <= 0) break;
            off += static_cast<std::size_t>(n);
        }
        ::close(fd);
    });

    struct stream {
        int fd;
        std::string* buf;
        bool* truncated;
    };
    std::vector<stream> streams = {{c.out, &res.stdout_text, &res.stdout_truncated},
                                   {c.err, &res.stderr_text, &res.stderr_truncated}};
    bool chan_trunc = false;
    if (c.chan >= 0) streams.push_back({c.chan, &res.channel_text, &chan_trunc});

    const bool has_timeout = spec.timeout_s > 0;
    const auto deadline = start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(has_timeout ? spec.timeout_s : 0));
    // SIGKILL after the grace period. A flag and a plain time point: g++ 12 wrongly reports
    // std::optional<time_point> as maybe-uninitialized here.
    bool kill_armed = false;
    clock_type::time_point kill_at{};
    bool exited = false;
    int status = 0;
    char buf[65536];
    int drain_rounds = 0;  // polls spent draining after the child exited

    auto terminate_group = [&](bool hard) {
        ::kill(-pid, hard ? SIGKILL : SIGTERM);
        if (!hard) {
            kill_at = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(spec.kill_grace_s));
            kill_armed = true;
        }
    };

    // A pidfd makes poll() wake the moment the child exits, instead of on the next 50 ms
    // tick: that tick was most of a warm run's overhead. Without pidfd we fall back to ticks.
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));

    while (true) {
        std::vector<pollfd> pfds;
        for (auto& s : streams)
            if (s.fd >= 0) pfds.push_back({s.fd, POLLIN, 0});
        if (pfds.empty() && exited) break;
        if (!exited && pidfd >= 0) pfds.push_back({pidfd, POLLIN, 0});

        int wait_ms = 50;
        ::poll(pfds.data(), pfds.size(), pfds.empty() ? 0 : wait_ms);
        if (pfds.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
        for (auto& p : pfds) {
            if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
            for (auto& s : streams) {
                if (s.fd != p.fd) continue;
                ssize_t n = ::read(s.fd, buf, sizeof buf);
                if (n > 0) {
                    append_bounded(*s.buf, buf, static_cast<std::size_t>(n), spec.max_capture_bytes, *s.truncated);
                } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                    ::close(s.fd);
                    s.fd = -1;
                }
            }
        }
        if (!exited) {
            pid_t w = reap(pid, &status, WNOHANG);
            if (w == pid) {
                exited = true;
                // The leader is gone; anything left in its group (a daemonised grandchild holding
                // our pipes open) is killed so we never wait on it.
                ::kill(-pid, SIGKILL);
            }
        }
        const auto now = clock_type::now();
        if (!exited && !res.timed_out && !res.cancelled) {
            if (has_timeout && now >= deadline) {
                res.timed_out = true;
                terminate_group(false);
            } else if (cancel.cancelled()) {
                res.cancelled = true;
                terminate_group(false);
            }
        }
        if (kill_armed && now >= kill_at) {
            ::kill(-pid, SIGKILL);
            kill_armed = false;
        }
        if (exited) {
            // Drain what is already buffered, but do not wait on pipes held by stray processes.
            bool any_open = false;
            for (auto& s : streams) any_open |= s.fd >= 0;
            if (!any_open) break;
            if (++drain_rounds > 40) break;  // about 2 s after exit
        }
    }
    for (auto& s : streams)
        if (s.fd >= 0) ::close(s.fd);
    if (pidfd >= 0) ::close(pidfd);
    stdin_writer.join();
    res.wall_s = std::chrono::duration<double>(clock_type::now() - start).count();
    if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) res.term_signal = WTERMSIG(status);
    if (res.timed_out || res.cancelled) res.term_signal = 0;
    if (res.stdout_text.size() > spec.max_capture_bytes) res.stdout_text.erase(0, res.stdout_text.size() - spec.max_capture_bytes);
    if (res.stderr_text.size() > spec.max_capture_bytes) res.stderr_text.erase(0, res.stderr_text.size() - spec.max_capture_bytes);
    return res;
}

// ---- asynchronous form --------------------------------------------------------------

struct process_runner::job {
    cancel_token cancel;
    std::future<process_result> future;
};

process_runner::job_id process_runner::submit(process_spec spec) {
    auto j = std::make_shared<job>();
    auto token = j->cancel;
    j->future = std::async(std::launch::async, [this, spec = std::move(spec), token]() { return run(spec, token); });
    const job_id id = m_next++;
    m_jobs[id] = j;
    return id;
}

bool process_runner::poll(job_id id) {
    auto it = m_jobs.find(id);
    if (it == m_jobs.end()) return true;
    return it->second->future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

void process_runner::cancel(job_id id) {
    auto it = m_jobs.find(id);
    if (it != m_jobs.end()) it->second->cancel.cancel();
}

process_result process_runner::result(job_id id) {
    auto it = m_jobs.find(id);
    if (it == m_jobs.end()) {
        process_result r;
        r.spawn_failed = true;
        r.spawn_error = "unknown job";
        return r;
    }
    auto j = it->second;
    m_jobs.erase(it);
    return j->future.get();
}

}  // namespace hotkernel
