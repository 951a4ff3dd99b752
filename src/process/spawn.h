// Inside src/process/ only: what run(), the pipe connection and the socket connection share to start
// and reap children. Nothing outside src/process/ includes this.
#pragma once
#include <spawn.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "process/runner.h"

namespace hotkernel::spawn_detail {

using clock_type = std::chrono::steady_clock;

/// The child registry (live_children()): a started child, until reap() reaps it.
void remember_child(pid_t pid);
/// waitpid that forgets a child once it is reaped.
pid_t reap(pid_t pid, int* status, int flags);
/// Kept servers started here: spared by the stray sweep, never waited for.
void remember_kept(pid_t pid);
void forget_kept(pid_t pid);

/// Appends to a buffer that keeps only the last `limit` bytes.
void append_bounded(std::string& buf, const char* data, std::size_t n, std::size_t limit, bool& truncated);
/// environment_now() with spec's changes, and the channel's fd number in spec.result_fd_env.
std::vector<std::string> build_env(const process_spec& spec, int channel_fd);
/// posix_spawn of spec.argv with build_env(spec, chan_w), default SIGPIPE/SIGINT/SIGTERM (and
/// SIGHUP when `detach`), an empty signal mask, and either a process group of its own or, with
/// `detach`, a session of its own. Returns 0 or the errno of posix_spawn.
int spawn_with(const std::filesystem::path& exe, const process_spec& spec, posix_spawn_file_actions_t* fa, int chan_w,
               bool detach, pid_t& pid);
/// The spawn shared by run() and start(): in_r/out_w/err_w become fds 0-2, chan_w (>= 0) is
/// inherited under its own number, in a process group of its own. Returns 0 or an errno.
int spawn_in_own_group(const std::filesystem::path& exe, const process_spec& spec, int in_r, int out_w, int err_w,
                       int chan_w, pid_t& pid);
/// A steady-clock point `seconds` (clamped at 0) from now.
clock_type::time_point after_s(double seconds);
const char* signal_name(int sig);
/// A waitpid status as the connections' describe_exit says it: "exited with status 1", "was killed
/// by signal 9 (SIGKILL)".
std::string describe_wait_status(int status);

/// The parent's ends of a spawned child's pipes (chan is -1 without a result channel).
struct child_ends {
    pid_t pid = -1;
    int in = -1, out = -1, err = -1, chan = -1;
};
/// Finds the program, makes its pipes, spawns it in its own group and closes the child's ends.
/// Returns "" or why it could not start; every fd it opened is closed then.
std::string spawn_with_pipes(const process_spec& spec, child_ends& c);

}  // namespace hotkernel::spawn_detail
