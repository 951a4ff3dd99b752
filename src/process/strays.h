// No process outlives its run. A run can leave work behind that escapes its process group (a
// `setsid` daemon, a double fork): running on, it could load the GPU while the other side of a
// verify is timed. hotkernel makes itself the child subreaper, so such orphans are re-parented
// to it rather than to init, and after every run it kills each child of its own that the
// process runner did not start.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

namespace hotkernel {

/// prctl(PR_SET_CHILD_SUBREAPER) for this process (Linux; a no-op elsewhere). main() calls it.
void become_subreaper();

struct stray_process {
    int pid = 0;
    std::string command;  ///< its command line, for the warning
};

/// Kills (SIGSTOP, then SIGKILL with its process group) and reaps every descendant of this
/// process that is not at or below a child the runner knows (a fork server, another call's
/// process), however deep it was started, repeating while killing them re-parents more (for
/// at most 3 s). Returns what it killed, each process once.
std::vector<stray_process> sweep_strays();

/// The ids of the SysV shared memory segments that exist now (/proc/sysvipc/shm).
std::set<int> sysv_shm_ids();
/// Removes (IPC_RMID) the segments not in `before` that this user created from the run's own
/// process (`run_pid`, still in its exit when a fork server answered first) or from one that is
/// gone (the run's others, swept): shared memory outlives every process, and a run could pin the
/// machine's memory with it. Returns "segment N (SIZE bytes)" for each.
std::vector<std::string> remove_new_shm(const std::set<int>& before, long run_pid);

/// This process's scheduling: what a child started (or forked) from it inherits, and what a run
/// could change of it (sched_setscheduler, setpriority, sched_setaffinity on its parent need no
/// signal): policy and priority, nice value, CPUs.
struct scheduling {
    int policy = 0, priority = 0, nice = 0;
    std::vector<int> cpus;
    bool operator==(const scheduling&) const = default;
};
scheduling own_scheduling();
/// Puts this process's scheduling back to `was`; "" when it was so, else what had changed (and
/// whether it could not be undone).
std::string restore_scheduling(const scheduling& was);

/// The pids sweep_strays() ends: every descendant of `self` in `parent_of` ({pid: parent pid})
/// that is not a `known` child or below one, parents before children. Pure, for tests.
std::vector<int> stray_tree(int self, const std::map<int, int>& parent_of, const std::set<int>& known);

}  // namespace hotkernel
