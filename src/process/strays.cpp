#include "process/strays.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/resource.h>
#endif

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "process/runner.h"

namespace hotkernel {
namespace {

struct proc_stat {
    char state = '?';
    int ppid = -1;
};

/// A /proc file's contents; "" once its process is gone. A process that exits between the open
/// and the read fails the read with ESRCH, which libstdc++'s file buffer throws as an exception.
std::string proc_file(const std::string& path) {
    std::ifstream f(path);
    try {
        return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    } catch (const std::ios_base::failure&) {
        return "";
    }
}

/// State and parent pid from /proc/<pid>/stat (fields 3 and 4, after the parenthesised command,
/// which may itself hold spaces and parentheses).
proc_stat stat_of(const std::string& pid) {
    const std::string stat = proc_file("/proc/" + pid + "/stat");
    proc_stat out;
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return out;
    std::istringstream rest(stat.substr(close + 1));
    rest >> out.state >> out.ppid;
    return out;
}

std::string command_of(int pid) {
    std::string raw = proc_file("/proc/" + std::to_string(pid) + "/cmdline");
    for (char& c : raw)
        if (c == '\0') c = ' ';
    while (!raw.empty() && raw.back() == ' ') raw.pop_back();
    if (raw.size() > 200) raw = raw.substr(0, 197) + "...";
    return raw.empty() ? "(exited)" : raw;
}

/// {pid: parent pid, state} of every process, from /proc.
std::map<int, proc_stat> process_table() {
    std::map<int, proc_stat> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const proc_stat st = stat_of(name);
        if (st.ppid >= 0) out[std::stoi(name)] = st;
    }
    return out;
}

}  // namespace

std::vector<int> stray_tree(int self, const std::map<int, int>& parent_of, const std::set<int>& known) {
    std::map<int, std::vector<int>> kids;
    for (const auto& [pid, ppid] : parent_of) kids[ppid].push_back(pid);
    // Every descendant of `self` not at or below a known child (a fork server, or a process
    // another call of this session is running), parents before children.
    std::vector<int> out;
    std::vector<int> todo;
    for (int c : kids[self])
        if (!known.contains(c)) todo.push_back(c);
    for (std::size_t i = 0; i < todo.size(); ++i) {
        out.push_back(todo[i]);
        for (int c : kids[todo[i]]) todo.push_back(c);
    }
    return out;
}

namespace {

/// What strays are under this process now: each descendant's pid and whether it is a zombie.
std::vector<std::pair<int, bool>> current_strays() {
    const auto table = process_table();
    std::map<int, int> parent_of;
    for (const auto& [pid, st] : table) parent_of[pid] = st.ppid;
    std::vector<std::pair<int, bool>> out;
    for (int pid : stray_tree(static_cast<int>(::getpid()), parent_of, live_children()))
        out.emplace_back(pid, table.at(pid).state == 'Z');
    return out;
}

}  // namespace

void become_subreaper() {
#ifdef __linux__
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
}

namespace {
struct shm_segment {
    int id = 0;
    unsigned long size = 0;
    long cpid = 0;
    long cuid = -1;
};

std::vector<shm_segment> shm_segments() {
    std::vector<shm_segment> out;
    std::ifstream in("/proc/sysvipc/shm");
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
        // key shmid perms size cpid lpid nattch uid gid cuid cgid ...
        std::istringstream f(line);
        long long key = 0;
        shm_segment s;
        std::string perms;
        long lpid = 0, nattch = 0, uid = 0, gid = 0;
        if (f >> key >> s.id >> perms >> s.size >> s.cpid >> lpid >> nattch >> uid >> gid >> s.cuid) out.push_back(s);
    }
    return out;
}
}  // namespace

std::set<int> sysv_shm_ids() {
    std::set<int> ids;
    for (const auto& s : shm_segments()) ids.insert(s.id);
    return ids;
}

std::vector<std::string> remove_new_shm(const std::set<int>& before, long run_pid) {
    std::vector<std::string> removed;
#ifdef __linux__
    const long uid = static_cast<long>(::getuid());
    for (const auto& s : shm_segments()) {
        if (before.contains(s.id) || s.cuid != uid) continue;
        if (s.cpid != run_pid && s.cpid > 0 && ::kill(static_cast<pid_t>(s.cpid), 0) == 0)
            continue;  // its maker lives, and is not the run: not the run's
        if (::shmctl(s.id, IPC_RMID, nullptr) == 0)
            removed.push_back("segment " + std::to_string(s.id) + " (" + std::to_string(s.size) + " bytes)");
    }
#else
    (void)before;
    (void)run_pid;
#endif
    return removed;
}

scheduling own_scheduling() {
    scheduling s;
#ifdef __linux__
    s.policy = ::sched_getscheduler(0);
    sched_param param{};
    if (::sched_getparam(0, &param) == 0) s.priority = param.sched_priority;
    errno = 0;
    s.nice = ::getpriority(PRIO_PROCESS, 0);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) s.cpus.push_back(c);
#endif
    return s;
}

std::string restore_scheduling(const scheduling& was) {
    const scheduling now = own_scheduling();
    if (now == was) return "";
    std::string what;
    auto add = [&](const std::string& part) { what += (what.empty() ? "" : "; ") + part; };
    if (now.policy != was.policy || now.priority != was.priority)
        add("scheduling policy " + std::to_string(now.policy) + ", was " + std::to_string(was.policy));
    if (now.nice != was.nice) add("nice " + std::to_string(now.nice) + ", was " + std::to_string(was.nice));
    if (now.cpus != was.cpus)
        add("CPUs " + std::to_string(now.cpus.size()) + ", was " + std::to_string(was.cpus.size()));
#ifdef __linux__
    sched_param param{};
    param.sched_priority = was.priority;
    (void)::sched_setscheduler(0, was.policy, &param);
    (void)::setpriority(PRIO_PROCESS, 0, was.nice);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : was.cpus) CPU_SET(c, &set);
    if (!was.cpus.empty()) (void)::sched_setaffinity(0, sizeof set, &set);
#endif
    if (own_scheduling() != was) add("not undone");
    return what;
}

std::vector<stray_process> sweep_strays() {
    std::vector<stray_process> killed;
#ifdef __linux__
    const int self = static_cast<int>(::getpid());
    std::set<int> said;
    // Bounded: a process stuck in the kernel (D state) must not hold us; SIGKILL is quick otherwise.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < until) {
        const auto found = current_strays();
        if (found.empty()) break;
        // Stopped first, the whole tree: nothing in it can fork a new process while it is killed.
        for (const auto& [pid, zombie] : found)
            if (!zombie) ::kill(pid, SIGSTOP);
        for (const auto& [pid, zombie] : found) {
            if (zombie) continue;
            if (!said.contains(pid)) killed.push_back({pid, command_of(pid)});
            said.insert(pid);
            ::kill(-pid, SIGKILL);  // its group, when it leads one (a setsid daemon does)
            ::kill(pid, SIGKILL);
        }
        // Reap our own children (the rest come back to us, the subreaper, as their parents die).
        bool any_child = false;
        for (const auto& [pid, zombie] : found) {
            if (stat_of(std::to_string(pid)).ppid != self) continue;
            any_child = true;
            ::waitpid(pid, nullptr, WNOHANG);
        }
        if (!any_child) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        else std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
#endif
    return killed;
}

}  // namespace hotkernel
