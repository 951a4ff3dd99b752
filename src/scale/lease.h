// A GPU lease: an exclusive flock on <lease_dir>/<uuid>.lock, held while one job runs on that
// card, so that every hotkernel process and MCP session on the host that spreads work books each
// card for one job at a time. The kernel drops a flock when its holder dies, however it dies, so
// a crashed holder's lease frees itself; the file keeps a note of the last holder for messages.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "process/runner.h"

namespace hotkernel::scale {

/// HOTKERNEL_GPU_LEASE_DIR, else <temp dir>/hotkernel-gpu-leases (created mode 1777, like /tmp,
/// so that every user's processes share it).
std::filesystem::path lease_dir();

class gpu_lease {
public:
    /// Takes the lease of `uuid` if it is free, without waiting; nullopt when another holder has
    /// it. `what` is written into the file for whoever waits ("verify b.py (pid 42)"). Throws
    /// tool_error naming the folder when the lock file cannot be created.
    static std::optional<gpu_lease> try_take(const std::string& uuid, const std::string& what);
    gpu_lease(gpu_lease&& other) noexcept;
    gpu_lease& operator=(gpu_lease&& other) noexcept;
    gpu_lease(const gpu_lease&) = delete;
    gpu_lease& operator=(const gpu_lease&) = delete;
    ~gpu_lease();

    [[nodiscard]] const std::string& uuid() const { return m_uuid; }

private:
    gpu_lease(int fd, std::string uuid) : m_fd(fd), m_uuid(std::move(uuid)) {}
    int m_fd = -1;
    std::string m_uuid;
};

/// The lease a run outside any spread takes on the card it measures on (`uuid`, nvidia-smi's,
/// where it has one), so that it and a pool's jobs take turns: waits (polling, cancellable)
/// until the card is free, at most `wait_s`, then a tool_error naming the holder; a tool_error
/// too when cancelled while waiting. `waiting` is called once when it has to wait. nullopt, and
/// no waiting, without a uuid, inside a pool's own job (HOTKERNEL_GPU_LEASE is set: its parent
/// holds the lease), or when the lease folder cannot be made (the run then measures as the
/// per-host measurement lock allows).
std::optional<gpu_lease> lease_card_for_run(const std::optional<std::string>& uuid, const std::string& what,
                                            double wait_s, const std::function<bool()>& cancelled,
                                            const std::function<void(const std::string&)>& waiting);

/// lease_card_for_run for the card a plain run measures on when it has not asked nvidia-smi
/// already (bench, profile, torch_profile): the first card CUDA_VISIBLE_DEVICES leaves visible,
/// through `runner`. Asks nothing inside a pool's job; nullopt without a driver or a GPU.
std::optional<gpu_lease> lease_visible_card(process_runner& runner, const cancel_token& cancel,
                                            const std::string& what, double wait_s,
                                            const std::function<void(const std::string&)>& waiting);

/// The note the current (or last) holder of `uuid`'s lease left: "pid 42 on host: verify b.py
/// since 2026-…Z"; "" when there is none.
std::string lease_note(const std::string& uuid);

/// The lock file of `uuid` (its characters outside [A-Za-z0-9-] replaced).
std::filesystem::path lease_path(const std::string& uuid);

}  // namespace hotkernel::scale
