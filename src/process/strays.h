// No process outlives its run. A run can leave work behind that escapes its process group (a
// `setsid` daemon, a double fork): running on, it could load the GPU while the other side of a
// verify is timed. hotkernel makes itself the child subreaper, so such orphans are re-parented
// to it rather than to init, and after every run it kills each child of its own that the
// process runner did not start.
#pragma once
#include <string>
#include <vector>

namespace hotkernel {

/// prctl(PR_SET_CHILD_SUBREAPER) for this process (Linux; a no-op elsewhere). main() calls it.
void become_subreaper();

struct stray_process {
    int pid = 0;
    std::string command;  ///< its command line, for the warning
};

/// Kills (SIGKILL, with its process group) and reaps every child of this process that the
/// runner does not know, repeating while killing them re-parents more. Returns what it killed.
std::vector<stray_process> sweep_strays();

}  // namespace hotkernel
