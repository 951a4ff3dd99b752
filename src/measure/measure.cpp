// Launching and checking one measured run.
#include "measure/measure.h"
#include "measure/clock_check.h"
#include "measure/sandbox.h"
#include "nvidia/profiled_target.h"
#include "process/strays.h"
#include "report/findings.h"
#include "util/file_lock.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "util/errors.h"
#include "util/strings.h"
#include "util/words.h"

namespace hotkernel {

std::string run_label(const run_request& req) {
    std::string s = req.warmup ? "warm-up " : "";
    if (req.role != "bench") s += req.role + " ";
    s += fmt::format("run {} of {}", req.index, req.total);
    return s;
}

std::string_view to_string(line_source s) { return s == line_source::channel ? "channel" : "stdout"; }

std::string_view to_string(run_status s) {
    switch (s) {
        case run_status::ok: return "ok";
        case run_status::incorrect: return "incorrect";
        case run_status::invalid: return "invalid";
        case run_status::error: return "error";
        case run_status::unstated: break;
    }
    return "";
}

run_status parse_run_status(const json& status) {
    if (!status.is_string()) return run_status::unstated;
    for (auto s : {run_status::ok, run_status::incorrect, run_status::invalid, run_status::error})
        if (status.get_ref<const std::string&>() == to_string(s)) return s;
    return run_status::unstated;
}

json run_record::to_json() const {
    json j{{"role", role},           {"index", index},     {"warmup", warmup}, {"ms", ms},
           {"ok", ok ? json(*ok) : json(nullptr)},         {"wall_s", wall_s}, {"exit_code", exit_code},
           {"source", to_string(source)}, {"line", line}};
    if (status != run_status::unstated) j["status"] = to_string(status);
    if (!reason.empty()) j["reason"] = reason;
    if (!stderr_tail.empty()) j["stderr_tail"] = stderr_tail;
    if (had_invalid_utf8) j["invalid_utf8"] = true;
    if (result_lines > 1) j["result_lines"] = result_lines;
    if (!strays.empty()) j["strays_killed"] = strays;
    if (!shm_removed.empty()) j["shared_memory_removed"] = shm_removed;
    if (lock_wait_s >= 0.01) j["waited_for_gpu_s"] = lock_wait_s;
    if (!lock_note.empty()) j["gpu_lock"] = lock_note;
    if (!sandbox.is_null()) j["sandbox"] = sandbox;
    if (!rerun_of.empty()) j["rerun_of"] = rerun_of;
    return j;
}

std::filesystem::path measure_lock_path() {
    const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
    std::string key = env && *env ? env : "all";
    for (char& c : key)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != ',' && c != '-') c = '_';
    if (key.size() > 64) key.resize(64);
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
    if (ec) dir = "/tmp";
    return dir / ("hotkernel-measure-gpu-" + key + ".lock");
}

namespace {

std::optional<finding> lock_wait_warning(const std::vector<const run_record*>& runs) {
    double total = 0;
    std::size_t waited = 0;
    for (const run_record* r : runs)
        if (r != nullptr && r->lock_wait_s >= 0.01) {
            total += r->lock_wait_s;
            ++waited;
        }
    for (const run_record* r : runs)
        if (r != nullptr && !r->lock_note.empty())
            return findings::measured_without_lock(r->lock_note);
    if (total < 1.0) return std::nullopt;
    return findings::lock_waited(waited, total, measure_lock_path().string());
}

std::vector<finding> stray_warnings(const std::vector<const run_record*>& runs) {
    std::vector<finding> out;
    for (const run_record* r : runs)
        if (r != nullptr && !r->shm_removed.empty())
            out.push_back(findings::stray_shared_memory(
                fmt::format("{}{} {}", r->warmup ? "warm-up " : "", r->role, r->index), r->shm_removed.size(),
                join(r->shm_removed, "; ")));
    for (const run_record* r : runs) {
        if (r == nullptr || r->strays.empty()) continue;
        std::string cmds;
        for (const auto& c : r->strays) cmds += (cmds.empty() ? "" : "; ") + c;
        out.push_back(findings::stray_processes(fmt::format("{}{} {}", r->warmup ? "warm-up " : "", r->role, r->index),
                                                r->strays.size(), cmds));
    }
    return out;
}

}  // namespace

void report_run_findings(const std::vector<const run_record*>& runs, double max_sm_clock_mhz, json& result,
                         json& warnings) {
    json clocks = check_sample_clocks(runs, max_sm_clock_mhz);
    if (auto w = throttle_warning(clocks)) warnings.push_back(*w);
    if (!clocks.is_null()) result["sample_clocks"] = clocks;
    for (auto& w : stray_warnings(runs)) warnings.push_back(std::move(w));
    for (const run_record* r : runs)
        if (r != nullptr && !r->ended_after_result.empty()) {
            warnings.push_back(findings::runner_exit_after_result(
                fmt::format("of {}{} run {} {}", r->warmup ? "warm-up " : "", r->role, r->index, r->ended_after_result),
                "runs[].stderr_tail"));
            break;
        }
    if (auto w = lock_wait_warning(runs)) warnings.push_back(*w);
    describe_sandbox(runs, result, warnings);
}

std::string shell_join(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                       "_-./:=,+@%") == std::string::npos;
        if (plain) {
            out += a;
        } else {
            out += '\'';
            for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
            out += '\'';
        }
    }
    return out;
}

std::vector<std::string> fresh_process_launcher::command(const run_request& req) const {
    std::vector<std::string> argv{req.python, req.script.string()};
    argv.insert(argv.end(), req.args.begin(), req.args.end());
    return argv;
}

run_answer fresh_process_launcher::launch(const run_request& req, process_runner& runner, const cancel_token& cancel) {
    process_spec spec;
    spec.argv = command(req);
    spec.env_set = req.env;
    spec.env_set["HOTKERNEL_ROLE"] = req.role;
    spec.env_set["HOTKERNEL_RUN_INDEX"] = std::to_string(req.index);
    spec.env_set["HOTKERNEL_WARMUP"] = req.warmup ? "1" : "0";
    // A measured run is never a target's profile mode, whatever the caller's environment says.
    spec.env_unset.emplace_back(profile_mode_env);
    // Unbuffered so a run killed by its timeout still shows what it printed last.
    spec.env_set["PYTHONUNBUFFERED"] = "1";
    spec.timeout_s = req.timeout_s;
    spec.max_capture_bytes = 4u << 20;
    run_answer a{.process = runner.run(spec, cancel), .line = {}, .source = line_source::stdout_text, .voided = {}};
    a.line = parse_run_line(a.process.stdout_text);
    return a;
}

std::unique_ptr<run_launcher> make_launcher() { return std::make_unique<fresh_process_launcher>(); }

bool run_failed(const run_answer& answer) {
    const process_result& res = answer.process;
    if (res.ok()) return false;
    // The harness's result stands on its own: it came with the run's nonce, and its exit (a CUDA
    // context's teardown) comes after it, if a fork server waits for it at all.
    if (answer.source == line_source::channel) return !answer.line.valid();
    return !(answer.line.valid() && answer.line.ok == false);
}

namespace {
std::string stderr_part(const process_result& res) {
    std::string tail = trim(tail_text(res.stderr_text, 2000));
    if (tail.empty()) return "; it wrote nothing to stderr";
    return "; stderr tail:\n" + tail;
}
}  // namespace

run_record run_once(const run_request& req, process_runner& runner, const cancel_token& cancel,
                    run_launcher& launcher) {
    const std::string label = run_label(req);
    const std::string cmd = shell_join(launcher.command(req));
    if (cancel.cancelled()) throw tool_error(fmt::format("{} was cancelled before it started", label));
    run_answer answer;
    std::set<int> shm_before;
    double lock_wait_s = 0;
    std::string lock_note;  ///< why the run went unlocked, if it did
    {
        // One measured run at a time per GPU set, across every hotkernel process on the machine:
        // two verifies sharing a card would time each other's kernels.
        file_lock gpu(measure_lock_path(), {.timeout_s = std::max(600.0, 2 * req.timeout_s),
                                            .holder_what = "another hotkernel bench or verify on this GPU",
                                            .cancelled = [&] { return cancel.cancelled(); },
                                            .mode = 0666,
                                            .optional = true});
        lock_wait_s = gpu.waited_s();
        lock_note = gpu.not_held();
        const scheduling before = own_scheduling();
        shm_before = sysv_shm_ids();
        answer = launcher.launch(req, runner, cancel);
        // Every later run started from this process would inherit what the run set of it.
        if (const std::string changed = restore_scheduling(before); !changed.empty())
            answer.voided.push_back("the run changed hotkernel's own scheduling (" + changed +
                                    "), which every later run would inherit; put back, and the run is not trusted");
    }
    const process_result& res = answer.process;
    // Before anything can throw: nothing a run started may outlive it.
    std::vector<std::string> strays;
    for (const auto& s : sweep_strays()) strays.push_back(fmt::format("pid {}: {}", s.pid, s.command));
    strays.insert(strays.end(), res.strays.begin(), res.strays.end());  // killed by a kept fork server
    std::vector<std::string> shm_left = remove_new_shm(shm_before, res.pid);  // its others are gone now
    if (res.spawn_failed)
        throw tool_error(fmt::format("{} ({}) {}; check the interpreter ({})", label, cmd,
                                     res.describe(req.timeout_s), words::python_setting()));
    if (res.cancelled) throw tool_error(fmt::format("{} ({}) was cancelled", label, cmd));
    if (res.timed_out)
        throw tool_error(fmt::format("{} ({}) {}; fix the hang or raise {} (now {} s){}", label, cmd,
                                     res.describe(req.timeout_s), words::param("timeout_s"), req.timeout_s,
                                     stderr_part(res)));

    const run_line& parsed = answer.line;
    // What the script itself said went wrong (protocol 3: "reason"; others may print "error").
    std::string said;
    if (parsed.line.is_object())
        for (const char* key : {"reason", "error"})
            if (parsed.line.contains(key) && !parsed.line[key].is_null()) {
                const json& v = parsed.line[key];
                said = fmt::format("; it reported {}: {}", key, v.is_string() ? v.get<std::string>() : dump_line(v));
                break;
            }
    if (run_failed(answer))
        throw tool_error(fmt::format("{} ({}) {}{}; nothing is averaged over a failed run{}", label, cmd,
                                     res.describe(req.timeout_s), said, stderr_part(res)));
    if (!parsed.valid()) {
        const bool channel = answer.source == line_source::channel;
        std::string out = trim(tail_text(res.stdout_text, 600));
        std::string msg = fmt::format("{} ({}) {}{}", label, cmd,
                                      channel && parsed.error == run_line_error::no_line
                                          ? "sent no result over the harness's private channel"
                                          : parsed.message,
                                      said);
        if (!channel) msg += out.empty() ? "; stdout was empty" : "; stdout tail:\n" + out;
        msg += stderr_part(res);
        throw tool_error(msg);
    }

    run_record r;
    r.strays = std::move(strays);
    r.shm_removed = std::move(shm_left);
    r.lock_wait_s = lock_wait_s;
    r.lock_note = lock_note;
    r.role = req.role;
    r.index = req.index;
    r.warmup = req.warmup;
    r.ms = parsed.ms;
    r.ok = parsed.ok;
    r.line = parsed.line;
    r.source = answer.source;
    r.wall_s = res.wall_s;
    r.exit_code = res.exit_code;
    r.stderr_tail = trim(tail_text(res.stderr_text, 800));
    r.command = launcher.command(req);
    r.launcher = launcher.name();
    r.had_invalid_utf8 = parsed.had_invalid_utf8;
    r.result_lines = parsed.candidates;
    if (r.line.is_object()) {
        if (r.line.contains("status")) r.status = parse_run_status(r.line["status"]);
        if (r.line.contains("reason") && r.line["reason"].is_string()) r.reason = r.line["reason"];
        if (r.line.contains("sandbox") && r.line["sandbox"].is_object()) r.sandbox = r.line["sandbox"];
        if (r.line.contains("flags") && r.line["flags"].is_array())
            for (const auto& f : r.line["flags"]) {
                if (!f.is_object()) continue;
                // The runner says what it saw; the catalogue adds what to do about it.
                const auto g = findings::runner_flag(f.value("id", ""), f.value("message", ""));
                r.contract_flags.push_back(g ? json(*g) : f);
            }
    }
    if (answer.source == line_source::channel && !res.ok()) r.ended_after_result = res.describe(req.timeout_s);
    // hotkernel's own findings on the run, folded in once, here: whatever its line says, it is void.
    if (!answer.voided.empty()) {
        r.status = run_status::invalid;
        r.ok = false;
        r.reason = join(answer.voided, "; ");
    }
    return r;
}

}  // namespace hotkernel
