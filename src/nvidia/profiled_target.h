// How `profile` runs a target script (one `new` wrote) under ncu or nsys: the script found in
// the command, whether the contract beside it has a profile mode (python/hotkernel_contract.py,
// "Profile mode"), and what a profiler run that ran out of time was waiting for.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scaffold/target_spec.h"

namespace hotkernel {

/// The contract's names for its profile mode (python/hotkernel_contract.py: PROFILE_ENV,
/// PROFILE_RANGE, PROFILE_STAGE_PREFIX); a unit test reads them back from the embedded copy.
inline constexpr std::string_view profile_mode_env = "HOTKERNEL_PROFILE";
inline constexpr std::string_view profile_mode_range = "hotkernel.profile";
inline constexpr std::string_view profile_stage_prefix = "hotkernel-profile: ";
/// PROFILE_WORKLOAD_ENV: the workload a profiled target with several runs ("" or unset: the first).
inline constexpr std::string_view workload_env = "HOTKERNEL_WORKLOAD";

/// The profile mode a contract's text declares (`PROFILE_MODE = N` at the start of a line), 0 if none.
int parse_profile_mode(std::string_view contract_text);

struct profiled_target {
    std::filesystem::path script;    ///< the target script the command runs
    std::filesystem::path contract;  ///< hotkernel_contract.py beside it (what its import finds first)
    int profile_mode = 0;            ///< that contract's PROFILE_MODE; 0: missing or older than profile mode
};

/// The first `*.py` argument of `command` (argv, after the program) that is a target script,
/// resolved against `cwd`; nullopt when the command runs none.
std::optional<profiled_target> find_profiled_target(const std::vector<std::string>& command,
                                                    const std::filesystem::path& cwd);

/// The last stage a profile-mode run wrote to its output (a "hotkernel-profile: ..." line), empty if none.
std::string last_profile_stage(std::string_view output);

/// What an ncu run was doing when it was stopped, from its output: ncu's replay of a kernel, the
/// target's stage, the command before its first profiled kernel, ... One short phrase.
std::string ncu_waiting_for(std::string_view output);

/// The same for `nsys profile`: the command (and the target's stage) or nsys's export of its trace.
std::string nsys_waiting_for(std::string_view output);

}  // namespace hotkernel
