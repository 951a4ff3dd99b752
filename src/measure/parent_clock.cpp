// The parent's clock: the bound (pure) and the server that times the windows (a thread).
#include "measure/parent_clock.h"
#include "measure/workloads.h"

#include <poll.h>
#include <sys/uio.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "process/posix_io.h"
#include "util/errors.h"
#include "util/hash.h"
#include "util/strings.h"

namespace hotkernel {
namespace fs = std::filesystem;

namespace {
// Nanoseconds a thread has spent runnable but waiting for a CPU (schedstat's run_delay); -1
// where the kernel does not say.
double run_delay_ns(const std::string& schedstat) {
    std::FILE* f = std::fopen(schedstat.c_str(), "re");
    if (!f) return -1;
    unsigned long long on_cpu = 0, delay = 0;
    const int got = std::fscanf(f, "%llu %llu", &on_cpu, &delay);
    std::fclose(f);
    return got == 2 ? static_cast<double>(delay) : -1;
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A message quoted in an error, cut short: the other end may send anything.
std::string quoted(const std::string& text) {
    std::string s = text.substr(0, 60);
    for (auto& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    return "\"" + s + (text.size() > 60 ? "...\"" : "\"");
}

double ms_of(const timespec& ts) { return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6; }

double realtime_ms() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return ms_of(ts);
}

bool all_digits(const std::string& w) { return w.find_first_not_of("0123456789") == std::string::npos; }

// Digits only, at most 9 of them: a count the wire may carry.
bool is_count(const std::string& w) { return !w.empty() && w.size() <= 9 && all_digits(w); }

double num(const json& j, const char* key, double fallback) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}
}  // namespace

json clock_bound::to_json() const {
    auto r = [](double x) { return std::round(x * 1e4) / 1e4; };
    json j{{"bound", held ? (lower ? "held" : "not applied") : "broken"},
           {"samples", samples},
           {"stamped", stamped},
           {"fixed_ms", r(fixed_ms)},
           {"fixed_spread_ms", r(fixed_spread_ms)},
           {"window_ms", r(window_ms)},
           {"reported_ms", r(reported_ms)},
           {"excess_ms", r(excess_ms)},
           {"allowed_ms", r(allowance_ms)}};
    if (waited_ms > 0) j["waited_ms"] = r(waited_ms);  // taken out of the windows: CPU waits, all samples
    if (loop_ms_per_call > 0) j["loop_ms_per_call"] = std::round(loop_ms_per_call * 1e6) / 1e6;
    if (copy_ms > 0) {
        j["copies_ms"] = r(copy_ms);         // the spot copies' time taken out of a window (median)
        j["copy_cap_ms"] = r(copy_cap_ms);  // the most one copy may take out
    }
    if (gap_ms_per_op > 0) j["gap_ms_per_op"] = std::round(gap_ms_per_op * 1e6) / 1e6;
    return j;
}

clock_bound check_clock_bound(const parent_clock_log& log, const json& line, const clock_bound_limits& lim) {
    clock_bound b;
    auto broken = [&](std::string why) {
        b.applies = true;
        b.held = false;
        b.reason = std::move(why);
        return b;
    };
    if (!log.error.empty())
        return broken("the parent's clock saw the run break its protocol (" + log.error +
                      "): something other than the harness wrote to it");
    if (!line.is_object() || line.value("status", "") != "ok") return b;
    if (!log.connected)
        return broken("the harness never connected to the parent's clock, so nothing outside the candidate's "
                      "process bounds its times");
    const json samples = line.contains("samples_ms") ? line["samples_ms"] : json();
    const double calls = num(line, "calls_per_sample", 0);
    if (!samples.is_array() || samples.empty() || calls <= 0)
        return broken("the result has no samples_ms or calls_per_sample for the parent's clock to bound");
    if (samples.size() != log.timed.size())
        return broken(fmt::format("the result reports {} sample(s) but the parent released {}", samples.size(),
                                  log.timed.size()));
    std::vector<double> fixed, looped, per_copy;
    long loop_calls = 0;
    // The first empty samples of a run pay for first uses (CUPTI's first start, cold code): left out.
    const std::size_t skip = log.empty.size() >= 12 ? 3 : 0;
    for (std::size_t i = skip; i < log.empty.size(); ++i)
        if (log.empty[i].copies > 0) per_copy.push_back(log.empty[i].copy_ms / static_cast<double>(log.empty[i].copies));
    // A spot copy's time comes out of its window, up to a cap from what a copy took in the empty
    // samples: the harness's clock says what its copies took, but not more than copies can.
    b.copy_cap_ms = lim.copy_abs_ms + lim.copy_factor * median_of(per_copy);
    auto copies_ms = [&](long copies, double copy_ms, double window_ms) {
        const double n = static_cast<double>(std::clamp(copies, 0L, lim.max_copies));
        return std::min(std::clamp(copy_ms, 0.0, n * b.copy_cap_ms), lim.copy_max_share * std::max(0.0, window_ms));
    };
    // A timed sample's copies: where the harness marks them, no more than the parent stamped.
    auto timed_copies_ms = [&](const parent_clock_log::window& w) {
        const double said = copies_ms(w.copies, w.copy_ms, w.ms);
        if (log.copy_steps_ms < 0) return said;
        const double n = static_cast<double>(std::clamp(w.pauses, 0L, lim.max_copies));
        const double stamped = std::min(std::max(0.0, w.paused_ms), n * b.copy_cap_ms) + n * log.copy_steps_ms;
        return std::min(said, stamped);
    };
    for (std::size_t i = skip; i < log.empty.size(); ++i) {
        const auto& e = log.empty[i];
        const double ms = e.ms - copies_ms(e.copies, e.copy_ms, e.ms);
        if (e.calls == 0) fixed.push_back(ms);
        else if (e.calls >= loop_calls) {
            if (e.calls > loop_calls) looped.clear();
            loop_calls = e.calls;
            looped.push_back(ms);
        }
    }
    if (fixed.empty()) return broken("the harness timed no empty sample before the candidate was imported");
    const std::string timer = line.value("timer", "");
    b.applies = true;
    b.samples = samples.size();
    b.stamped = log.stamped;
    b.waited_ms = log.waited_ms;
    b.fixed_ms = median_of(fixed);
    {  // how much a sample's fixed cost moves (CUPTI's start does, on a GPU): its upper quartile's lead
        std::vector<double> f = fixed;
        std::sort(f.begin(), f.end());
        b.fixed_spread_ms = std::max(0.0, f[std::min(f.size() - 1, f.size() * 3 / 4)] - b.fixed_ms);
    }
    if (!looped.empty()) b.loop_ms_per_call = std::max(0.0, (median_of(looped) - b.fixed_ms) / loop_calls);
    b.lower = timer != "cuda_events";
    std::vector<double> windows, reported, excess, copied;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const auto& w = log.timed[i];
        if (!samples[i].is_number())
            return broken(fmt::format("sample {} of the result is not a number", i + 1));
        if (static_cast<double>(w.calls) != calls)
            return broken(fmt::format("sample {} was released for {} call(s) but the result says {} a sample", i + 1,
                                      w.calls, calls));
        if (w.pauses > w.copies)
            return broken(fmt::format("sample {} marked {} copies' pauses but the harness says it made {}: something "
                                      "other than the harness wrote to the parent's clock", i + 1, w.pauses, w.copies));
        const double rep = samples[i].get<double>() * calls;
        const double copy = timed_copies_ms(w);
        windows.push_back(w.ms);
        reported.push_back(rep);
        copied.push_back(copy);
        excess.push_back(w.ms - copy - b.fixed_ms - rep);
    }
    // The run's time is the median of its samples (which the line rounds to 1e-6 ms): a result
    // whose ms is not is not the harness's.
    const double ms = num(line, "ms", -1);
    const double med = median_of(reported) / calls;
    if (!(std::fabs(ms - med) <= 1e-6 + 1e-6 * std::fabs(med)))
        return broken(fmt::format("the result's ms ({:.6g}) is not the median of its samples ({:.6g})", ms, med));
    b.window_ms = median_of(windows);
    b.reported_ms = median_of(reported);
    b.excess_ms = median_of(excess);
    b.copy_ms = median_of(copied);
    const bool kernel_clock = timer == "cupti";
    const auto [abs_ms, frac] = kernel_clock ? std::pair{lim.cupti_abs_ms, lim.cupti_frac} : std::pair{lim.abs_ms, lim.frac};
    b.allowance_ms = abs_ms + frac * b.window_ms + calls * b.loop_ms_per_call + 2 * b.fixed_spread_ms +
                     lim.wait_share * log.waited_ms / static_cast<double>(b.samples);
    // CUPTI reads each kernel's own time, not what a graph's nodes cost around it: those are
    // allowed as the gap probe measured them before the import, one per GPU operation of a call,
    // under either kernel_time_rule. The probe's figure is a node's whole cost outside its kernel
    // (the graph's launch of it and its dependency, not only a gap), which a call's every node
    // pays even where "span" reports the gaps inside a call: one a call voided 2 of 5 honest
    // bench runs of the bundled rmsnorm (8 kernels a call, 0.13-0.19 ms a sample unexplained) on
    // an H100 (bench/runs/2026-12-06-gpu-main-checks, call F).
    if (kernel_clock && log.gap_nodes > 0 && log.gap_window_ms >= 0 && log.gap_busy_ms >= 0) {
        const double extra = std::max(0.0, log.gap_window_ms - b.fixed_ms - log.gap_busy_ms);
        b.gap_ms_per_op = extra / static_cast<double>(log.gap_nodes);
        const double ops = std::clamp(num(line, "gpu_ops_per_call", 1), 1.0, lim.max_ops_per_call);
        b.allowance_ms += calls * ops * b.gap_ms_per_op * lim.gap_factor;
    }
    if (b.lower && b.excess_ms > b.allowance_ms) {
        b.held = false;
        b.overshoot = true;
        b.reason = fmt::format(
            "the run reports samples of {:.4g} ms ({:g} calls) but the parent saw each take {:.4g} ms, of which "
            "{:.4g} ms is the fixed cost of a sample (timed before the candidate was imported) and {:.4g} ms the "
            "harness's copies of outputs: {:.4g} ms a sample is missing from the reported times, more than the "
            "{:.4g} ms allowed; the times were not the harness's clock, or another process's work shared the device "
            "inside the samples (verify with the device to itself)",
            b.reported_ms, calls, b.window_ms, b.fixed_ms, b.copy_ms, b.excess_ms, b.allowance_ms);
    }
    return b;
}

void apply_clock_bound(json& line, const clock_bound& bound) {
    if (!line.is_object()) return;
    if (bound.applies) line["parent_clock"] = bound.to_json();
    if (bound.held) return;
    const bool was_ok = line.value("status", "") == "ok";
    const std::string before = was_ok ? "" : line.value("reason", "");
    line["status"] = "invalid";
    line["ok"] = false;
    line["reason"] = before.empty() ? bound.reason : bound.reason + "; " + before;
    if (was_ok && bound.overshoot && bound.applies) line["parent_clock"]["only_cause"] = true;
}

bool parent_clock_only_cause(const json& line) {
    // Lines are the runner's words: any field may be missing or of another type.
    auto status_is = [](const json& x, const char* s) {
        const auto it = x.find("status");
        return it != x.end() && it->is_string() && it->get<std::string>() == s;
    };
    auto alone = [](const json& x) {
        const auto pc = x.find("parent_clock");
        if (pc == x.end() || !pc->is_object()) return false;
        const auto only = pc->find("only_cause");
        return only != pc->end() && only->is_boolean() && only->get<bool>();
    };
    if (!line.is_object() || !status_is(line, "invalid")) return false;
    if (!has_workloads(line)) return alone(line);
    bool any = false;
    for (const auto& w : line["workloads"]) {
        if (!w.is_object()) return false;
        if (status_is(w, "ok")) continue;
        if (!alone(w)) return false;
        any = true;
    }
    return any;
}

void apply_clock_bounds(json& line, const parent_clock_log& log, const clock_bound_limits& lim) {
    if (!has_workloads(line)) {
        apply_clock_bound(line, check_clock_bound(log, line, lim));
        return;
    }
    std::size_t total = 0;
    for (const auto& w : line["workloads"])
        if (w.is_object() && w.contains("samples_ms") && w["samples_ms"].is_array()) total += w["samples_ms"].size();
    if (!log.error.empty() || !log.connected) {  // the run as a whole: broken protocol, or no clock
        apply_clock_bound(line, check_clock_bound(log, line, lim));
        return;
    }
    if (total != log.timed.size()) {
        if (line.value("status", "") != "ok") return;  // a failed run gains nothing from its times
        clock_bound b;
        b.applies = true;
        b.held = false;
        b.reason = fmt::format("the workloads report {} sample(s) in all but the parent released {}", total,
                               log.timed.size());
        apply_clock_bound(line, b);
        return;
    }
    std::size_t at = 0;
    for (auto& w : line["workloads"]) {
        if (!w.is_object()) continue;
        const std::size_t n = w.contains("samples_ms") && w["samples_ms"].is_array() ? w["samples_ms"].size() : 0;
        parent_clock_log part = log;
        part.timed.assign(log.timed.begin() + static_cast<std::ptrdiff_t>(at),
                          log.timed.begin() + static_cast<std::ptrdiff_t>(at + n));
        part.waited_ms = total > 0 ? log.waited_ms * static_cast<double>(n) / static_cast<double>(total) : 0;
        at += n;
        apply_clock_bound(w, check_clock_bound(part, w, lim));
    }
    restate_run_status(line);
}

// ---- the server -----------------------------------------------------------------------------

struct parent_clock::impl {
    fs::path dir;
    std::string path;
    int listen_fd = -1;
    int conn = -1;
    std::atomic<bool> stop{false};
    std::thread thread;
    parent_clock_log log;

    // Per-connection state, touched by the thread only.
    bool said_hello = false;
    bool pending = false;
    std::string pending_kind;
    long pending_n = 0;
    bool paused = false;        // between a copy's "pause" and its "resume"
    double pause_at_ms = 0;     // the pause, in ms since the release
    long pauses = 0;            // this window's marked copies
    double paused_ms = 0;       // and their time
    std::chrono::steady_clock::time_point t0;
    double t0_real_ms = 0;  // CLOCK_REALTIME at the release: the kernel's stamps are on that clock
    std::string peer_schedstat, own_schedstat;
    double peer_delay0 = 0, own_delay0 = 0;

    // A side's waiting-for-a-CPU so far, in ns (what is unknown counts as 0).
    static double delay_of(const std::string& schedstat) {
        if (schedstat.empty()) return 0;
        const double v = run_delay_ns(schedstat);
        return v > 0 ? v : 0;
    }

    bool fail(const std::string& why) {  // false: the connection ends
        if (log.error.empty()) log.error = why;
        return false;
    }

    // The kernel's stamp of a message, in ms since the release, where it is usable: it is on the
    // realtime clock, which a step could move, so not after the read and not before the release.
    std::optional<double> stamped_since_release(double sent_real_ms, double read_ms) const {
        const double stamped = sent_real_ms - t0_real_ms;
        if (sent_real_ms >= 0 && stamped >= 0 && stamped <= read_ms) return stamped;
        return std::nullopt;
    }

    // When a message was sent, in ms since the release: its stamp where usable, else the read.
    double since_release(std::chrono::steady_clock::time_point at, double sent_real_ms) const {
        const double read = std::chrono::duration<double, std::milli>(at - t0).count();
        return stamped_since_release(sent_real_ms, read).value_or(read);
    }

    // One message; false ends the connection. `sent_real_ms` is the kernel's stamp of the record
    // that carried it (CLOCK_REALTIME ms; < 0: none).
    bool on_line(const std::string& text, std::chrono::steady_clock::time_point at, double sent_real_ms) {
        const auto words = split(text, ' ');
        const std::string verb = words.empty() ? "" : words[0];
        if (log.ended) return fail("a message after \"end\"");
        if (!said_hello) {
            if (verb != "hello" || words.size() != 2 || words[1] != "1")
                return fail("the first message was not \"hello 1\": " + quoted(text));
            said_hello = true;
            return true;
        }
        if (verb == "ready") {
            if (pending) return fail("\"ready\" while a sample was out");
            const std::string kind = words.size() > 1 ? words[1] : "";
            long n = 0;
            if (words.size() > 2) n = std::strtol(words[2].c_str(), nullptr, 10);
            const bool early = kind == "empty" || kind == "gap";
            const bool well_formed = (kind == "empty" || kind == "gap" || kind == "timed") && words.size() == 3 &&
                                     (kind == "empty" ? n >= 0 : n > 0) && all_digits(words[2]);
            if (!well_formed) return fail("a malformed \"ready\": " + quoted(text));
            if (early && log.imported) return fail("an uncounted sample after the candidate was imported");
            pending = true;
            pending_kind = kind;
            pending_n = n;
            paused = false;
            pauses = 0;
            paused_ms = 0;
            const std::string go = "go " + random_hex(8) + "\n";
            peer_delay0 = delay_of(peer_schedstat);
            own_delay0 = delay_of(own_schedstat);
            t0 = std::chrono::steady_clock::now();
            t0_real_ms = realtime_ms();
            if (!write_all(conn, go)) return false;
            return true;
        }
        if ((verb == "pause" || verb == "resume") && words.size() == 1) {
            if (!pending) return fail("\"" + verb + "\" with no sample out");
            if ((verb == "pause") == paused) return fail("\"" + verb + "\" out of turn");
            const double now = since_release(at, sent_real_ms);
            if (verb == "pause") pause_at_ms = now;
            else paused_ms += std::max(0.0, now - pause_at_ms), ++pauses;
            paused = verb == "pause";
            return true;
        }
        if (verb == "done") {
            if (!pending) return fail("\"done\" with no sample out");
            if (paused) return fail("\"done\" inside a copy's pause");
            if ((words.size() != 3 && words.size() != 4) || !is_count(words[1]) || !is_count(words[2]) ||
                (words.size() == 4 && !is_count(words[3])))
                return fail("a malformed \"done\": " + quoted(text));
            // The copies the harness marked: every pause seen must be one of them, and each of them
            // must have paused (marks of anyone else's would cover its own time).
            if (words.size() == 4 && std::strtol(words[3].c_str(), nullptr, 10) != pauses)
                return fail(fmt::format("the harness marked {} copies but the parent saw {} pauses: something other "
                                        "than the harness wrote to the parent's clock", words[3], pauses));
            const long copies = std::strtol(words[1].c_str(), nullptr, 10);
            const long copy_us = std::strtol(words[2].c_str(), nullptr, 10);
            pending = false;
            const double peer_waited = std::max(0.0, (delay_of(peer_schedstat) - peer_delay0) / 1e6);
            const double own_waited = std::max(0.0, (delay_of(own_schedstat) - own_delay0) / 1e6);
            const double read_window = std::chrono::duration<double, std::milli>(at - t0).count();
            double window = read_window;
            double waited = peer_waited + own_waited;
            // The kernel's stamp of "done" ends the window where it is usable. This thread slept
            // from the release to the send, so its waits came after the window; the harness's,
            // read at the read, are counted in the share of the time to the read that the window is.
            if (const auto stamped = stamped_since_release(sent_real_ms, read_window)) {
                window = *stamped;
                waited = read_window > 0 ? peer_waited * (*stamped / read_window) : 0;
                if (pending_kind == "timed") ++log.stamped;
            }
            const double ms = std::max(0.0, window - std::min(waited, window));
            if (pending_kind == "timed") log.waited_ms += std::min(waited, window);
            const double copy_ms = static_cast<double>(copy_us) / 1e3;
            if (pending_kind == "empty") log.empty.push_back({ms, pending_n, copies, copy_ms, pauses, paused_ms});
            else if (pending_kind == "gap") {
                log.gap_windows.push_back(ms);
                log.gap_window_ms = median_of(log.gap_windows);
                log.gap_nodes = pending_n;
            }
            else log.timed.push_back({ms, pending_n, copies, copy_ms, pauses, paused_ms});
            return true;
        }
        if (verb == "note") {
            if (log.imported || pending || words.size() != 3 ||
                (words[1] != "gap_busy_ms" && words[1] != "copy_steps_ms"))
                return fail("a malformed or late note: " + quoted(text));
            char* end = nullptr;
            const double v = std::strtod(words[2].c_str(), &end);
            if (!end || *end || !std::isfinite(v) || v < 0) return fail("a note that is not a time");
            if (words[1] == "copy_steps_ms") {
                log.copy_steps_ms = v;
                return true;
            }
            log.gap_busies.push_back(v);
            log.gap_busy_ms = median_of(log.gap_busies);
            return true;
        }
        if (verb == "import" && words.size() == 1) {
            if (pending || log.imported) return fail("\"import\" out of turn");
            log.imported = true;
            return true;
        }
        if (verb == "end" && words.size() == 1) {
            if (pending) return fail("\"end\" while a sample was out");
            log.ended = true;
            return true;
        }
        return fail("an unknown message: " + quoted(text));
    }

    void serve() {
        // One connection: the harness's, made before the candidate exists.
        while (!stop.load()) {
            pollfd p{listen_fd, POLLIN, 0};
            const int r = ::poll(&p, 1, 50);
            if (r < 0 && errno != EINTR) return;
            if (r <= 0) continue;
            conn = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
            if (conn >= 0) break;
        }
        ::close(listen_fd);
        listen_fd = -1;
        std::error_code ec;
        fs::remove(path, ec);
        if (conn < 0) return;
        log.connected = true;
        // The harness's main thread (the one that connected and times the calls) and this thread.
        ucred peer{};
        socklen_t len = sizeof peer;
        if (::getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.pid > 0)
            peer_schedstat = fmt::format("/proc/{}/task/{}/schedstat", peer.pid, peer.pid);
        own_schedstat = "/proc/thread-self/schedstat";
        const int on = 1;
        ::setsockopt(conn, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);  // stamps of later sends
        std::string buf;
        char chunk[4096];
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec)) * 2];
        // After stop, what is already readable is still read: the run's last messages.
        for (;;) {
            pollfd p{conn, POLLIN, 0};
            const int r = ::poll(&p, 1, 50);
            if (r < 0 && errno != EINTR) break;
            if (r <= 0) {
                if (stop.load()) break;
                continue;
            }
            iovec iov{chunk, sizeof chunk};
            msghdr msg{};
            msg.msg_iov = &iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control;
            msg.msg_controllen = sizeof control;
            const ssize_t n = ::recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
            const auto at = std::chrono::steady_clock::now();
            if (n <= 0) break;
            if (msg.msg_flags & MSG_TRUNC) {
                fail("a message of over 4096 bytes");
                break;
            }
            double sent_real_ms = -1;
            for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
                    c->cmsg_len >= CMSG_LEN(sizeof(timespec))) {
                    timespec ts{};
                    std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
                    sent_real_ms = ms_of(ts);
                }
            buf.append(chunk, static_cast<std::size_t>(n));
            bool go_on = true;
            for (std::size_t nl; go_on && (nl = buf.find('\n')) != std::string::npos;) {
                go_on = on_line(buf.substr(0, nl), at, sent_real_ms);
                buf.erase(0, nl + 1);
            }
            if (!go_on) break;
            if (buf.size() > 512) {
                fail("a message of over 512 bytes");
                break;
            }
        }
        ::close(conn);
        conn = -1;
    }
};

parent_clock::parent_clock() : m(std::make_unique<impl>()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp && std::strlen(tmp) < 60 ? tmp : "/tmp") + "/hotkernel-clock-XXXXXX";
    if (!::mkdtemp(tmpl.data()))
        throw tool_error(fmt::format("could not make a folder for the parent's clock under {}: {}; set TMPDIR to a "
                                     "writable folder with a short path",
                                     fs::path(tmpl).parent_path().string(), std::strerror(errno)));
    m->dir = tmpl;
    m->path = (m->dir / "c").string();
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (m->path.size() >= sizeof addr.sun_path) throw tool_error("the parent's clock socket path is too long: " + m->path);
    std::memcpy(addr.sun_path, m->path.c_str(), m->path.size() + 1);
    m->listen_fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (m->listen_fd < 0 || ::bind(m->listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(m->listen_fd, 1) != 0) {
        const std::string why = std::strerror(errno);
        if (m->listen_fd >= 0) ::close(m->listen_fd);
        std::error_code ec;
        fs::remove_all(m->dir, ec);
        throw tool_error("could not listen for the harness on " + m->path + ": " + why);
    }
    m->thread = std::thread([this] { m->serve(); });
}

parent_clock::~parent_clock() {
    if (m->thread.joinable()) {
        m->stop = true;
        m->thread.join();
    }
    std::error_code ec;
    fs::remove_all(m->dir, ec);
}

const std::string& parent_clock::address() const { return m->path; }

parent_clock_log parent_clock::finish() {
    if (m->thread.joinable()) {
        m->stop = true;
        m->thread.join();
    }
    m->log.ended_in_copy = m->pending && m->paused;
    return m->log;
}

}  // namespace hotkernel
