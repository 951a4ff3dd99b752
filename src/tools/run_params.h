// The parameters bench and verify both take, bound to a member of either tool's arguments.
#pragma once
#include "registry/tool.h"

namespace hotkernel {

/// `timeout_s`: the wall-clock limit of one run.
template <class Args>
bound_param<Args> run_timeout_arg(double Args::*member) {
    return param(member, {.name = "timeout_s",
                          .summary = "Limit per run in seconds",
                          .details = "Wall-clock limit per run in seconds (then killed with its process group).",
                          .default_value = 120,
                          .minimum = 1,
                          .maximum = 86400});
}

/// `warm`: fork each run from a warm interpreter.
template <class Args>
bound_param<Args> warm_arg(bool Args::*member) {
    return param(member, {.name = "warm",
                          .summary = "Fork runs from warm Python",
                          .details = "From the CLI that fork server is kept for the next command until idle for "
                                     "HOTKERNEL_KEEP_WARM_S seconds (600; 0: not kept).",
                          .default_value = true});
}

/// `allow_unsandboxed`: measure where the kernel sandbox could not be applied.
template <class Args>
bound_param<Args> allow_unsandboxed_arg(bool Args::*member) {
    return param(member, {.name = "allow_unsandboxed",
                          .summary = "Run without the kernel sandbox",
                          .details = "Without it such a run is refused. The sandbox is Landlock: writes only in the "
                                     "run's scratch folder and compiler caches. The result's sandbox says what was in "
                                     "force.",
                          .default_value = false});
}

/// `isolate`: start the harness's interpreter isolated from the user's start-up files.
template <class Args>
bound_param<Args> isolate_arg(bool Args::*member) {
    return param(member, {.name = "isolate",
                          .summary = "Harness as `python -I`",
                          .details = "-I also applies to its fork server: no user site-packages or their .pth files, "
                                     "no PYTHONPATH, PYTHONSTARTUP, PYTHONHOME, ...; the target's own folder stays "
                                     "importable. false is for a torch found only through them.",
                          .default_value = true});
}

}  // namespace hotkernel
