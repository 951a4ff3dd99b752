// The `workload` parameter, declared once for the tools that profile a target at one shape
// (profile, torch_profile): which of a target's workloads its profile mode runs.
#pragma once
#include "nvidia/profiled_target.h"
#include "registry/tool.h"

namespace hotkernel {

inline param_spec workload_param() {
    param_spec p = make_param("workload", param_type::string, "Which workload to profile");
    p.details = "of a target with workloads, by the name bench and verify give it (e.g. 'M=16'); without it, "
                "HOTKERNEL_WORKLOAD from the environment, else the first. A target with one shape ignores it.";
    return p;
}

}  // namespace hotkernel
