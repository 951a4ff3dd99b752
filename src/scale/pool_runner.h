// The GPU pool of one host: a process_runner that runs each spec on one card it leases (lease.h),
// pinned by UUID (CUDA_VISIBLE_DEVICES=GPU-…) and to that card's slice of the CPU cores, on the
// runner it wraps. Jobs wait for a free card; a card another process leased is skipped until it
// is free. Without cards (no GPU on the host) it runs one job at a time, unpinned.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "parsers/nvidia_smi.h"
#include "process/runner.h"

namespace hotkernel::scale {

struct pool_card {
    gpu_record gpu;         ///< uuid set
    std::vector<int> cpus;  ///< its core slice; empty: unpinned
};

class gpu_pool_runner final : public process_runner {
public:
    struct options {
        std::vector<pool_card> cards;
        /// Longest wait for a free card [s]; then the job fails saying who holds them.
        double lease_wait_s = 24 * 3600;
        /// What the lease file says the holder is doing ("verify b.py").
        std::function<std::string(const process_spec&)> what = [](const process_spec&) { return std::string(); };
        /// A job got a card, or waits for one (its spec's first argv word is not enough: the caller says).
        std::function<void(const process_spec&, const std::string&)> note = [](const process_spec&, const std::string&) {};
    };

    gpu_pool_runner(process_runner& inner, options opts) : m_inner(inner), m_opts(std::move(opts)) {}

    using process_runner::run;
    /// Waits for a card, runs `spec` on it, frees it. placement: gpu_uuid, gpu_name, gpu_index,
    /// cpus, waited_s and waited_for_others_s (when it waited; the second while cards were leased
    /// by other processes). A job that got no card is spawn_failed, saying why.
    process_result run(const process_spec& spec, const cancel_token& cancel) override;

private:
    process_runner& m_inner;
    options m_opts;
    std::mutex m_mutex;
    std::condition_variable m_freed;
    std::set<std::size_t> m_busy;  ///< cards this process runs a job on
    bool m_host_busy = false;      ///< no cards: the one host slot
};

}  // namespace hotkernel::scale
