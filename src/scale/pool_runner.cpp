// gpu_pool_runner::run: lease, pin, run, free.
#include "scale/pool_runner.h"

#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "scale/gpu_set.h"
#include "scale/lease.h"
#include "util/strings.h"

namespace hotkernel::scale {
namespace {
using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

process_result not_run(bool cancelled, const std::string& why) {
    process_result r;
    r.cancelled = cancelled;
    r.spawn_failed = !cancelled;
    r.spawn_error = why;
    return r;
}

}  // namespace

process_result gpu_pool_runner::run(const process_spec& spec, const cancel_token& cancel) {
    const auto t0 = steady::now();
    if (m_opts.cards.empty()) {  // no GPU: one job at a time on the host
        {
            std::unique_lock lock(m_mutex);
            while (m_host_busy) {
                if (cancel.cancelled()) return not_run(true, "cancelled while waiting for the previous job");
                m_freed.wait_for(lock, std::chrono::milliseconds(100));
            }
            m_host_busy = true;
        }
        process_result r = m_inner.run(spec, cancel);
        {
            std::lock_guard lock(m_mutex);
            m_host_busy = false;
        }
        m_freed.notify_all();
        return r;
    }

    std::optional<gpu_lease> lease;
    std::size_t card = 0;
    bool said_waiting = false;
    double foreign_s = 0;  // waiting while cards this call does not run were leased by others
    {
        std::unique_lock lock(m_mutex);
        while (true) {
            for (std::size_t i = 0; i < m_opts.cards.size() && !lease; ++i) {
                if (m_busy.count(i) != 0) continue;
                try {
                    lease = gpu_lease::try_take(*m_opts.cards[i].gpu.uuid, m_opts.what(spec));
                } catch (const std::exception& e) {
                    return not_run(false, e.what());
                }
                if (lease) card = i;
            }
            if (lease) break;
            if (cancel.cancelled()) return not_run(true, "cancelled while waiting for a free GPU");
            std::vector<std::string> held;
            for (std::size_t i = 0; i < m_opts.cards.size(); ++i) {
                const std::string& uuid = *m_opts.cards[i].gpu.uuid;
                const std::string who = m_busy.count(i) != 0 ? "another job of this call" : lease_note(uuid);
                held.push_back(fmt::format("{} ({})", uuid, who.empty() ? "held" : who));
            }
            if (seconds_since(t0) > m_opts.lease_wait_s)
                return not_run(false, fmt::format("no GPU became free within {:g} s: {}; wait for those jobs, or "
                                                  "name other cards",
                                                  m_opts.lease_wait_s, join(held, "; ")));
            if (!said_waiting) {
                said_waiting = true;
                lock.unlock();
                m_opts.note(spec, "waiting for a free GPU: " + shorten(join(held, "; "), 400));
                lock.lock();
                continue;
            }
            const auto w0 = steady::now();
            const bool others_hold = m_busy.size() < m_opts.cards.size();  // a card we do not run is leased elsewhere
            m_freed.wait_for(lock, std::chrono::milliseconds(200));  // other processes free theirs unannounced
            if (others_hold) foreign_s += seconds_since(w0);
        }
        m_busy.insert(card);
    }
    const double waited_s = seconds_since(t0);
    const pool_card& c = m_opts.cards[card];
    const std::string uuid = *c.gpu.uuid;
    process_spec pinned = spec;
    pinned.env_set["CUDA_VISIBLE_DEVICES"] = uuid;  // a UUID: no index order to get wrong
    pinned.env_set["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    pinned.env_set["HOTKERNEL_GPU_LEASE"] = uuid;
    const std::string cpus = cpu_list_text(c.cpus);
    if (!c.cpus.empty()) {
        pinned.cpus = c.cpus;
        pinned.env_set["HOTKERNEL_CPUS"] = cpus;  // in the kept fork server's key: its forks inherit its mask
    }
    m_opts.note(spec, fmt::format("on GPU {} {} ({}){}", c.gpu.index ? std::to_string(*c.gpu.index) : "?", uuid,
                                  c.gpu.name, cpus.empty() ? "" : ", cores " + cpus));
    process_result r = m_inner.run(pinned, cancel);
    lease.reset();
    {
        std::lock_guard lock(m_mutex);
        m_busy.erase(card);
    }
    m_freed.notify_all();
    r.placement["gpu_uuid"] = uuid;
    r.placement["gpu_name"] = c.gpu.name;
    if (c.gpu.index) r.placement["gpu_index"] = std::to_string(*c.gpu.index);
    if (!cpus.empty()) r.placement["cpus"] = cpus;
    if (waited_s >= 0.5) r.placement["waited_s"] = fmt::format("{:.1f}", waited_s);
    if (foreign_s >= 0.5) r.placement["waited_for_others_s"] = fmt::format("{:.1f}", foreign_s);
    return r;
}

}  // namespace hotkernel::scale
