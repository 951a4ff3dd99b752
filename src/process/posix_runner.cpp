// The only code in hotkernel that spawns, waits for or kills processes.
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

#include "process/runner.h"
#include "util/strings.h"

extern char** environ;

namespace hotkernel {

// Every process this runner started and has not reaped yet: a stray sweep (strays.h) spares
// them and kills any other child of ours (an orphan re-parented to us as the subreaper).
namespace {
std::mutex g_children_mutex;
std::set<pid_t> g_children;
std::set<pid_t> g_kept;  // kept servers started here: spared by the sweep, never waited for

void remember_child(pid_t pid) {
    std::lock_guard lock(g_children_mutex);
    g_children.insert(pid);
}

/// waitpid that forgets a child once it is reaped.
pid_t reap(pid_t pid, int* status, int flags) {
    const pid_t w = ::waitpid(pid, status, flags);
    if (w == pid) {
        std::lock_guard lock(g_children_mutex);
        g_children.erase(pid);
    }
    return w;
}
}  // namespace

std::map<std::string, std::string> environment_now() {
    std::map<std::string, std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    return env;
}

std::set<int> live_children() {
    std::lock_guard lock(g_children_mutex);
    std::set<int> out(g_children.begin(), g_children.end());
    out.insert(g_kept.begin(), g_kept.end());
    return out;
}

namespace {

using clock_type = std::chrono::steady_clock;

/// Appends to a buffer that keeps only the last `limit` bytes.
void append_bounded(std::string& buf, const char* data, std::size_t n, std::size_t limit, bool& truncated) {
    buf.append(data, n);
    if (buf.size() > limit + limit / 2) {  // trim in chunks, not per read
        buf.erase(0, buf.size() - limit);
        truncated = true;
    }
}

std::vector<std::string> build_env(const process_spec& spec, int channel_fd) {
    std::map<std::string, std::string> env = environment_now();
    for (const auto& k : spec.env_unset) env.erase(k);
    for (const auto& [k, v] : spec.env_set) env[k] = v;
    if (channel_fd >= 0) env[spec.result_fd_env] = std::to_string(channel_fd);
    std::vector<std::string> out;
    out.reserve(env.size());
    for (auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
}

/// posix_spawn of spec.argv with build_env(spec, chan_w), default SIGPIPE/SIGINT/SIGTERM (and
/// SIGHUP when `detach`), an empty signal mask, and either a process group of its own or, with
/// `detach`, a session of its own. Returns 0 or the errno of posix_spawn.
int spawn_with(const std::filesystem::path& exe, const process_spec& spec, posix_spawn_file_actions_t* fa, int chan_w,
               bool detach, pid_t& pid) {
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t default_sigs;
    sigemptyset(&default_sigs);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM}) sigaddset(&default_sigs, sig);
    if (detach) sigaddset(&default_sigs, SIGHUP);
    sigset_t no_mask;
    sigemptyset(&no_mask);
    posix_spawnattr_setsigdefault(&attr, &default_sigs);
    posix_spawnattr_setsigmask(&attr, &no_mask);
    short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if (detach) {
        flags |= POSIX_SPAWN_SETSID;
    } else {
        posix_spawnattr_setpgroup(&attr, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&attr, flags);

    std::vector<std::string> argv_s = spec.argv;
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    auto env_s = build_env(spec, chan_w);
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);

    const int rc = ::posix_spawn(&pid, exe.c_str(), fa, &attr, argv.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    return rc;
}

/// The spawn itself, shared by run() and start(): the child gets in_r/out_w/err_w as fds 0-2
/// and, when chan_w >= 0, keeps that pipe under its own number (dup2 onto itself clears
/// FD_CLOEXEC, POSIX 2024 / glibc >= 2.35, so only this one pipe is inherited). It starts in
/// its own process group, so a timeout kills grandchildren too, with default SIGPIPE/SIGINT/
/// SIGTERM and an empty signal mask. Returns 0 or the errno of posix_spawn.
int spawn_in_own_group(const std::filesystem::path& exe, const process_spec& spec, int in_r, int out_w, int err_w,
                       int chan_w, pid_t& pid) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in_r, 0);
    posix_spawn_file_actions_adddup2(&fa, out_w, 1);
    posix_spawn_file_actions_adddup2(&fa, err_w, 2);
    if (chan_w >= 0) posix_spawn_file_actions_adddup2(&fa, chan_w, chan_w);
    if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
    const int rc = spawn_with(exe, spec, &fa, chan_w, false, pid);
    if (rc == 0) remember_child(pid);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

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

/// A steady-clock point `seconds` (clamped at 0) from now.
clock_type::time_point after_s(double seconds) {
    return clock_type::now() +
           std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(std::max(0.0, seconds)));
}

const char* signal_name(int sig) {
    switch (sig) {
        case SIGKILL: return "SIGKILL";
        case SIGTERM: return "SIGTERM";
        case SIGSEGV: return "SIGSEGV";
        case SIGABRT: return "SIGABRT";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGILL: return "SIGILL";
        case SIGINT: return "SIGINT";
        case SIGPIPE: return "SIGPIPE";
        default: return "signal";
    }
}

/// A waitpid status as the sessions' describe_exit says it: "exited with status 1", "was killed
/// by signal 9 (SIGKILL)".
std::string describe_wait_status(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return "was killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")";
    }
    return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

std::string process_result::describe(double timeout_s) const {
    if (spawn_failed) return "could not be started: " + spawn_error;
    if (cancelled) return "was cancelled";
    if (timed_out) {
        return timeout_s > 0 ? "timed out after " + std::to_string(static_cast<long>(timeout_s)) + " s and was killed"
                             : "timed out and was killed";
    }
    if (term_signal != 0) return "was killed by signal " + std::to_string(term_signal) + " (" + signal_name(term_signal) + ")";
    return "exited with status " + std::to_string(exit_code);
}

std::filesystem::path find_executable(const std::string& name) {
    namespace fs = std::filesystem;
    if (name.empty()) return {};
    if (name.find('/') != std::string::npos) {
        std::error_code ec;
        if (fs::exists(name, ec) && ::access(name.c_str(), X_OK) == 0 && !fs::is_directory(name, ec)) return fs::path(name);
        return {};
    }
    const char* path = std::getenv("PATH");
    if (!path) return {};
    for (const auto& dir : split(path, ':')) {
        if (dir.empty()) continue;
        fs::path p = fs::path(dir) / name;
        std::error_code ec;
        if (fs::exists(p, ec) && !fs::is_directory(p, ec) && ::access(p.c_str(), X_OK) == 0) return p;
    }
    return {};
}

namespace {

/// The parent's ends of a spawned child's pipes (chan is -1 without a result channel).
struct child_ends {
    pid_t pid = -1;
    int in = -1, out = -1, err = -1, chan = -1;
};

/// Finds the program, makes its pipes, spawns it in its own group and closes the child's ends.
/// Returns "" or why it could not start; every fd it opened is closed then.
std::string spawn_with_pipes(const process_spec& spec, child_ends& c) {
    if (spec.argv.empty()) return "empty command";
    const auto exe = find_executable(spec.argv[0]);
    if (exe.empty()) return "'" + spec.argv[0] + "' was not found on PATH or is not executable";
    enum { out, err, in, chan };
    int p[4][2] = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
    auto close_all = [&] {
        for (auto& pair : p)
            for (int& fd : pair)
                if (fd >= 0) ::close(std::exchange(fd, -1));
    };
    for (int i = 0; i < (spec.result_channel ? 4 : 3); ++i)
        if (::pipe2(p[i], O_CLOEXEC) != 0) {
            const std::string why = std::string("pipe: ") + std::strerror(errno);
            close_all();
            return why;
        }
    const int rc = spawn_in_own_group(exe, spec, p[in][0], p[out][1], p[err][1], p[chan][1], c.pid);
    for (int* fd : {&p[in][0], &p[out][1], &p[err][1], &p[chan][1]})  // the child's ends
        if (*fd >= 0) ::close(std::exchange(*fd, -1));
    if (rc != 0) {
        close_all();
        return "'" + exe.string() + "': " + std::strerror(rc);
    }
    c.in = p[in][1];
    c.out = p[out][0];
    c.err = p[err][0];
    c.chan = p[chan][0];
    return "";
}

}  // namespace

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


// ---- interactive sessions -------------------------------------------------------------

std::unique_ptr<process_session> process_runner::start(const process_spec&, std::string* error) {
    if (error) *error = "this process runner cannot keep interactive sessions";
    return nullptr;
}

namespace {

class posix_session final : public process_session {
public:
    posix_session(pid_t pid, int in_fd, int out_fd, int err_fd, int chan_fd, const process_spec& spec)
        : m_pid(pid), m_in(in_fd), m_out(out_fd), m_err(err_fd), m_chan(chan_fd), m_limit(spec.max_capture_bytes),
          m_grace_s(spec.kill_grace_s), m_start(clock_type::now()) {
        if (spec.timeout_s > 0)
            m_deadline = m_start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(spec.timeout_s));
    }
    ~posix_session() override {
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

    std::optional<session_line> read_line(double timeout_s, const cancel_token& cancel) override {
        const auto deadline = after_s(timeout_s);
        while (true) {
            if (auto l = take_line()) return l;
            if (m_out < 0 && m_chan < 0) return take_rest();
            if (cancel.cancelled()) return std::nullopt;
            if (m_deadline && clock_type::now() >= *m_deadline) {
                terminate();  // the session outlived its whole-life limit
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

    std::optional<session_line> take_line() {
        for (auto* b : {&m_chan_buf, &m_out_buf}) {
            auto nl = b->find('\n');
            if (nl == std::string::npos) continue;
            session_line l{b->substr(0, nl), b == &m_chan_buf};
            b->erase(0, nl + 1);
            return l;
        }
        return std::nullopt;
    }

    /// Both streams closed: a last line without a newline, if any.
    std::optional<session_line> take_rest() {
        for (auto* b : {&m_chan_buf, &m_out_buf}) {
            if (b->empty()) continue;
            session_line l{*b, b == &m_chan_buf};
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

std::unique_ptr<process_session> posix_runner::start(const process_spec& spec, std::string* error) {
    auto fail = [&](const std::string& why) -> std::unique_ptr<process_session> {
        if (error) *error = why;
        return nullptr;
    };
    child_ends c;
    if (std::string why = spawn_with_pipes(spec, c); !why.empty()) return fail(why);
    auto s = std::make_unique<posix_session>(c.pid, c.in, c.out, c.err, c.chan, spec);
    if (!spec.stdin_data.empty()) s->write_raw(spec.stdin_data);
    return s;
}

std::unique_ptr<process_session> process_runner::connect_kept(const process_spec&, const std::filesystem::path&,
                                                              const std::filesystem::path&, std::string* error) {
    if (error) *error = "this process runner cannot keep servers";
    return nullptr;
}

namespace {

/// A connection to a kept server (see connect_kept). Pending until the server listens: each
/// read_line tries to connect first. Owns the lock fd; closing both is all its end does.
class kept_session final : public process_session {
public:
    kept_session(int lock_fd, std::filesystem::path socket, std::filesystem::path log, pid_t spawned, int fd)
        : m_lock(lock_fd), m_socket(std::move(socket)), m_log(std::move(log)), m_spawned(spawned), m_fd(fd) {}
    ~kept_session() override {
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

    std::optional<session_line> read_line(double timeout_s, const cancel_token& cancel) override {
        const auto deadline = after_s(timeout_s);
        while (true) {
            if (auto nl = m_buf.find('\n'); nl != std::string::npos) {
                session_line l{m_buf.substr(0, nl), true};
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
        // Pending: alive while the server this session started has not exited.
        if (m_spawned > 0) {
            int status = 0;
            if (::waitpid(m_spawned, &status, WNOHANG) == m_spawned) {
                m_status = status;
                m_exited = true;
                std::lock_guard lock(g_children_mutex);
                g_kept.erase(m_spawned);
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
    pid_t m_spawned;  ///< the server this session started, or 0 (it was running already)
    int m_fd;
    std::string m_buf;
    bool m_closed = false, m_exited = false;
    int m_status = 0;
};

}  // namespace

std::unique_ptr<process_session> posix_runner::connect_kept(const process_spec& spec,
                                                            const std::filesystem::path& socket,
                                                            const std::filesystem::path& log, std::string* error) {
    auto fail = [&](const std::string& why) -> std::unique_ptr<process_session> {
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
    if (const int fd = kept_session::connect_unix(socket); fd >= 0)
        return std::make_unique<kept_session>(lock_fd, socket, log, 0, fd);
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
    // Its own session: no terminal's SIGINT or SIGHUP, and no kill of our group, reaches it.
    pid_t pid = 0;
    const int rc = exe.empty() ? ENOENT : spawn_with(exe, spec, &fa, -1, true, pid);
    posix_spawn_file_actions_destroy(&fa);
    ::close(null_fd);
    ::close(log_fd);
    if (rc != 0) {
        ::close(lock_fd);
        return fail("cannot start " + spec.argv.at(0) + ": " + std::strerror(rc));
    }
    {
        std::lock_guard lock(g_children_mutex);
        g_kept.insert(pid);
    }
    return std::make_unique<kept_session>(lock_fd, socket, log, pid, -1);
}

}  // namespace hotkernel
