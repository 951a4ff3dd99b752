// The scripted process_runner (see fake_runner.h).
#include "process/fake_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <thread>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include "process/posix_io.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"

namespace hotkernel {
namespace fs = std::filesystem;

namespace {

std::string env_of(const process_spec& spec, const std::string& key) {
    auto it = spec.env_set.find(key);
    return it == spec.env_set.end() ? "" : it->second;
}

std::string arg_after(const std::vector<std::string>& argv, const std::string& flag) {
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == flag) return argv[i + 1];
    return "";
}

/// Two uniforms in (0, 1) from a SHA-256 of `key`, then one standard normal (Box-Muller):
/// the same key gives the same draw on every machine and build.
double normal_of(const std::string& key) {
    const std::string h = sha256_hex(key);
    const double u1 = (static_cast<double>(std::stoull(h.substr(0, 13), nullptr, 16)) + 0.5) / 4503599627370496.0;
    const double u2 = (static_cast<double>(std::stoull(h.substr(13, 13), nullptr, 16)) + 0.5) / 4503599627370496.0;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// `over`'s keys replace `base`'s; "line" objects are merged key by key.
void overlay(json& base, const json& over) {
    if (!over.is_object()) return;
    for (const auto& [k, v] : over.items()) {
        if (k == "runs") continue;
        if (k == "line" && v.is_object() && base.contains("line") && base["line"].is_object())
            for (const auto& [lk, lv] : v.items()) base["line"][lk] = lv;
        else
            base[k] = v;
    }
}

/// Waits `seconds` unless cancelled first; true when cancelled.
bool wait_cancellable(double seconds, const cancel_token& cancel) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, seconds));
    while (std::chrono::steady_clock::now() < until) {
        if (cancel.cancelled()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return cancel.cancelled();
}

}  // namespace

fake_runner::fake_runner(json script) : m_script(std::move(script)) {
    if (!m_script.is_object())
        throw tool_error("the fake runner's script is not a JSON object; give {\"scripts\": {...}, \"programs\": {...}}");
    for (const char* k : {"scripts", "programs"})
        if (m_script.contains(k) && !m_script[k].is_object())
            throw tool_error(fmt::format("the fake runner's script: \"{}\" is not an object of outcomes by file name", k));
}

std::unique_ptr<fake_runner> fake_runner::from_file(const fs::path& path) {
    std::string text;
    try {
        text = read_file(path);
    } catch (const std::exception& e) {
        throw tool_error(fmt::format("HOTKERNEL_FAKE_RUNNER='{}' cannot be read ({}); name a JSON script of outcomes",
                                     path.string(), e.what()));
    }
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded())
        throw tool_error(fmt::format("HOTKERNEL_FAKE_RUNNER='{}' is not valid JSON; name a JSON script of outcomes",
                                     path.string()));
    return std::make_unique<fake_runner>(std::move(j));
}

std::vector<process_spec> fake_runner::calls() const {
    std::lock_guard lock(m_mutex);
    return m_calls;
}

namespace {
// The harness's side of the parent's clock (src/measure/parent_clock.h), as a trusted run
// plays it: one empty sample, then one released window per sample, each `window_ms` long.
void play_parent_clock(const std::string& address, std::size_t samples, long calls, double window_ms) {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (fd < 0 || address.size() >= sizeof addr.sun_path) {
        if (fd >= 0) ::close(fd);
        return;
    }
    std::copy(address.begin(), address.end(), addr.sun_path);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return;
    }
    auto await_go = [fd] {  // one message: the release
        char buf[64];
        [[maybe_unused]] const ssize_t n = ::read(fd, buf, sizeof buf);
    };
    write_all(fd, "hello 1\nready empty 0\n");
    await_go();
    write_all(fd, "done 0 0\nimport\n");
    for (std::size_t i = 0; i < samples; ++i) {
        write_all(fd, fmt::format("ready timed {}\n", calls));
        await_go();
        if (window_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(window_ms));
        write_all(fd, "done 0 0\n");
    }
    write_all(fd, "end\n");
    ::close(fd);
}
}  // namespace

process_result fake_runner::run(const process_spec& spec, const cancel_token& cancel) {
    process_result res;
    const auto t0 = std::chrono::steady_clock::now();
    if (spec.argv.empty()) {
        res.spawn_failed = true;
        res.spawn_error = "empty argv";
        return res;
    }
    const bool trusted = spec.result_channel && arg_after(spec.argv, "--run") != "";
    const std::string file = trusted ? arg_after(spec.argv, "--run") : (spec.argv.size() > 1 ? spec.argv[1] : "");
    const std::string program = fs::path(spec.argv[0]).filename().string();
    const std::string name = fs::path(file).filename().string();

    json outcome;  // what this run does
    std::string role, index_key;
    std::size_t index = 0;
    bool warmup = false;
    {
        std::lock_guard lock(m_mutex);
        m_calls.push_back(spec);
        const json& programs = m_script.contains("programs") ? m_script["programs"] : json::object();
        const json& scripts = m_script.contains("scripts") ? m_script["scripts"] : json::object();
        if (programs.contains(program)) {
            outcome = programs[program];
        } else if (!name.empty() && scripts.contains(name)) {
            outcome = json{{"line", json::object()}};
            overlay(outcome, scripts[name]);
            role = trusted ? arg_after(spec.argv, "--role") : env_of(spec, "HOTKERNEL_ROLE");
            if (role.empty()) role = "bench";
            warmup = !trusted && env_of(spec, "HOTKERNEL_WARMUP") == "1";
            if (trusted || env_of(spec, "HOTKERNEL_RUN_INDEX").empty())
                index = ++m_counts[name + "\n" + role];
            else
                index = std::stoul(env_of(spec, "HOTKERNEL_RUN_INDEX"));
            index_key = (warmup ? "warmup " : "") + std::to_string(index);
            const json& per_run = scripts[name].contains("runs") ? scripts[name]["runs"] : json::object();
            if (per_run.is_object() && per_run.contains(index_key)) {
                // A list: the run's first launch takes the first entry, a rerun of it the next (the last repeats).
                const json& o = per_run[index_key];
                const std::size_t seen = m_counts[name + "\n" + role + "\n#" + index_key]++;
                overlay(outcome, o.is_array() ? (o.empty() ? json::object() : o[std::min(seen, o.size() - 1)]) : o);
            }
        } else {
            outcome = json{{"spawn_failed", true}};
        }
    }
    if (outcome.value("spawn_failed", false)) {
        res.spawn_failed = true;
        res.spawn_error = fmt::format("{}: not found (the fake runner's script has no entry for it)", spec.argv[0]);
        return res;
    }
    if (wait_cancellable(outcome.value("sleep_s", 0.0), cancel)) {
        res.cancelled = true;
        return res;
    }
    res.stderr_text = outcome.value("stderr", "");
    const std::string before = outcome.value("stdout_before", "");
    if (outcome.value("hang", false)) {
        res.stdout_text = before;
        if (wait_cancellable(spec.timeout_s > 0 ? spec.timeout_s : 86400.0, cancel)) res.cancelled = true;
        else res.timed_out = true;
        res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return res;
    }

    json line = outcome.contains("line") && outcome["line"].is_object() ? outcome["line"] : json::object();
    if (!role.empty() && !line.contains("ms")) {
        const json& ms = outcome.contains("ms") ? outcome["ms"] : json(1.0);
        double v = ms.is_number() ? ms.get<double>() : 1.0;
        if (ms.is_object()) {
            const std::string key = fmt::format("{}:{}:{}:{}:{}", m_script.value("seed", 0), name, role, index, warmup);
            v = std::max(ms.value("mean", 1.0) + ms.value("sd", 0.0) * normal_of(key), 1e-6);
        }
        line["ms"] = v;
    }
    const double iters = line.contains("iters") && line["iters"].is_number() ? line["iters"].get<double>() : 1.0;
    res.wall_s = outcome.value("wall_s", 0.1 + (line["ms"].is_number() ? line["ms"].get<double>() : 0.0) * iters / 1000.0);
    res.term_signal = outcome.value("signal", 0);
    if (trusted) {
        const json secret = json::parse(spec.stdin_data, nullptr, false);
        if (secret.is_object() && secret.contains("nonce")) line["nonce"] = secret["nonce"];
        if (!line.contains("protocol")) line["protocol"] = 3;
        if (!line.contains("status")) line["status"] = line.value("ok", true) ? "ok" : "incorrect";
        if (!line.contains("samples_ms") && line["ms"].is_number()) line["samples_ms"] = json::array({line["ms"]});
        if (!line.contains("calls_per_sample")) line["calls_per_sample"] = 1;
        const json& samples = line["samples_ms"];
        const long calls = line["calls_per_sample"].is_number() ? line["calls_per_sample"].get<long>() : 1;
        if (secret.is_object() && secret.contains("clock") && secret["clock"].is_string() &&
            outcome.value("clock", "") != "absent")
            play_parent_clock(secret["clock"].get<std::string>(), samples.is_array() ? samples.size() : 0,
                              std::max(calls, 1L), outcome.value("clock_window_ms", 0.0));
        res.stdout_text = outcome.contains("stdout") ? outcome.value("stdout", "") : before;
        if (!outcome.contains("channel") || outcome["channel"] != false) res.channel_text = dump_line(line) + "\n";
        res.exit_code = outcome.value("exit_code", 0);
    } else {
        res.stdout_text = outcome.contains("stdout") ? outcome.value("stdout", "")
                                                     : before + (line.empty() ? "" : dump_line(line) + "\n");
        res.exit_code = outcome.value("exit_code", 0);
    }
    if (res.term_signal != 0) res.exit_code = -1;
    return res;
}

std::unique_ptr<process_runner> fake_runner_from_env() {
    const char* p = std::getenv("HOTKERNEL_FAKE_RUNNER");
    if (p == nullptr || *p == '\0') return nullptr;
    return fake_runner::from_file(p);
}

}  // namespace hotkernel
