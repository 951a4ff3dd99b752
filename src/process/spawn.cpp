// Starting a child: the child registry (what the stray sweep spares), the environment it
// gets, posix_spawn into its own process group (setsid when detached), and its pipes.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
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

#include "process/spawn.h"
#include "util/strings.h"

extern char** environ;

namespace hotkernel::spawn_detail {

// Every process this runner started and has not reaped yet: a stray sweep (strays.h) spares
// them and kills any other child of ours (an orphan re-parented to us as the subreaper).
namespace {
std::mutex g_children_mutex;
std::set<pid_t> g_children;
std::set<pid_t> g_kept;  // kept servers started here: spared by the sweep, never waited for

}  // namespace

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

void remember_kept(pid_t pid) {
    std::lock_guard lock(g_children_mutex);
    g_kept.insert(pid);
}

void forget_kept(pid_t pid) {
    std::lock_guard lock(g_children_mutex);
    g_kept.erase(pid);
}


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
/// `detach`, setsid (no controlling terminal, out of our group); every descriptor past 2 (past
/// chan_w, the child's number of the channel, where there is one) closed. Returns 0 or
/// posix_spawn's errno.
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
    // Nothing else this process holds reaches the child: a descriptor hotkernel inherited without
    // close-on-exec (a pipe of the shell or CI runner that started it) reached the candidate.
    posix_spawn_file_actions_addclosefrom_np(fa, chan_w >= 0 ? chan_w + 1 : 3);

    std::vector<std::string> argv_s = spec.argv;
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    auto env_s = build_env(spec, chan_w);
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);

    // posix_spawn has no affinity attribute; the child inherits the calling thread's mask, so
    // that thread takes spec.cpus for the spawn and gets its own mask back after it.
    cpu_set_t before;
    CPU_ZERO(&before);
    const bool pin = !spec.cpus.empty() && ::sched_getaffinity(0, sizeof before, &before) == 0;
    if (pin) {
        cpu_set_t want;
        CPU_ZERO(&want);
        for (int c : spec.cpus)
            if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &want);
        (void)::sched_setaffinity(0, sizeof want, &want);  // cores outside the mask: the child keeps ours
    }
    const int rc = ::posix_spawn(&pid, exe.c_str(), fa, &attr, argv.data(), envp.data());
    if (pin) (void)::sched_setaffinity(0, sizeof before, &before);
    posix_spawnattr_destroy(&attr);
    return rc;
}

/// The spawn itself, shared by run() and start(): the child gets in_r/out_w/err_w as fds 0-2
/// and, when chan_w >= 0, that pipe as fd 3, and no other descriptor. It starts in
/// its own process group, so a timeout kills grandchildren too, with default SIGPIPE/SIGINT/
/// SIGTERM and an empty signal mask. Returns 0 or the errno of posix_spawn.
int spawn_in_own_group(const std::filesystem::path& exe, const process_spec& spec, int in_r, int out_w, int err_w,
                       int chan_w, pid_t& pid) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in_r, 0);
    posix_spawn_file_actions_adddup2(&fa, out_w, 1);
    posix_spawn_file_actions_adddup2(&fa, err_w, 2);
    constexpr int child_chan = 3;
    if (chan_w >= 0) posix_spawn_file_actions_adddup2(&fa, chan_w, child_chan);
    if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
    const int rc = spawn_with(exe, spec, &fa, chan_w >= 0 ? child_chan : -1, false, pid);
    if (rc == 0) remember_child(pid);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
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

/// A waitpid status as the connections' describe_exit says it: "exited with status 1", "was killed
/// by signal 9 (SIGKILL)".
std::string describe_wait_status(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return "was killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")";
    }
    return "exited with status " + std::to_string(WEXITSTATUS(status));
}

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

}  // namespace hotkernel::spawn_detail

namespace hotkernel {

using namespace spawn_detail;

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

}  // namespace hotkernel
