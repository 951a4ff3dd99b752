#include "process/strays.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "process/runner.h"

namespace hotkernel {
namespace {

struct proc_stat {
    char state = '?';
    int ppid = -1;
};

/// State and parent pid from /proc/<pid>/stat (fields 3 and 4, after the parenthesised command,
/// which may itself hold spaces and parentheses).
proc_stat stat_of(const std::string& pid) {
    std::ifstream f("/proc/" + pid + "/stat");
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    proc_stat out;
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return out;
    std::istringstream rest(stat.substr(close + 1));
    rest >> out.state >> out.ppid;
    return out;
}

std::string command_of(int pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline");
    std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (char& c : raw)
        if (c == '\0') c = ' ';
    while (!raw.empty() && raw.back() == ' ') raw.pop_back();
    if (raw.size() > 200) raw = raw.substr(0, 197) + "...";
    return raw.empty() ? "(exited)" : raw;
}

struct child {
    int pid;
    bool zombie;  ///< already exited: only to be reaped
};

std::vector<child> unknown_children() {
    std::vector<child> out;
    const int self = static_cast<int>(::getpid());
    const std::set<int> known = live_children();
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const proc_stat st = stat_of(name);
        if (st.ppid != self) continue;
        const int pid = std::stoi(name);
        if (!known.contains(pid)) out.push_back({pid, st.state == 'Z'});
    }
    return out;
}

}  // namespace

void become_subreaper() {
#ifdef __linux__
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
}

std::vector<stray_process> sweep_strays() {
    std::vector<stray_process> killed;
#ifdef __linux__
    for (int round = 0; round < 5; ++round) {
        const std::vector<child> found = unknown_children();
        if (found.empty()) break;
        for (const child& c : found) {
            const int pid = c.pid;
            stray_process s{pid, command_of(pid)};
            if (!c.zombie) {
                ::kill(-pid, SIGKILL);  // its group, when it leads one (a setsid daemon does)
                ::kill(pid, SIGKILL);
            }
            // Reap it: a zombie would be found again. SIGKILL is not ignorable, so this is quick;
            // the bound keeps a process stuck in the kernel (D state) from holding us.
            for (int i = 0; i < 200; ++i) {
                const pid_t w = ::waitpid(pid, nullptr, WNOHANG);
                if (w == pid || (w < 0 && errno == ECHILD)) break;
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            if (!c.zombie) killed.push_back(std::move(s));  // an orphan that ended by itself is only reaped
        }
    }
#endif
    return killed;
}

}  // namespace hotkernel
