// The trusted launcher: the binary's harness and contract own the clock, the check and the result channel.
#include "measure/trusted_launcher.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "measure/parent_clock.h"
#include "measure/sandbox.h"
#include "measure/workloads.h"
#include "nvidia/profiled_target.h"
#include "process/spawn.h"
#include "scaffold/target_spec.h"
#include "python/interpreter.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/strings.h"

namespace hotkernel {
namespace fs = std::filesystem;

namespace {
std::optional<std::string> read_text(const fs::path& p) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return std::nullopt;
    try {
        return read_file(p);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}
}  // namespace

bool is_protocol3_target(const fs::path& script) {
    auto text = read_text(script);
    return text && is_target_script_text(*text);
}

std::optional<finding> vendored_contract::warning() const {
    const std::string ours = contract_hash().substr(0, 12);
    if (status == "missing") return findings::vendored_contract_missing(path.string(), ours);
    if (status == "same") return std::nullopt;
    std::string what = status == "stale"
                           ? fmt::format("protocol {} vs {}", protocol ? std::to_string(*protocol) : "unknown",
                                         contract_protocol())
                           : "edited: same protocol, other bytes";
    return findings::vendored_contract_differs(sha256.substr(0, 12), ours, what,
                                               (embedded_python_dir() / "hotkernel_contract.py").string(),
                                               path.string());
}

json vendored_contract::to_json() const {
    json j{{"status", status}, {"path", path.string()}, {"protocol", protocol ? json(*protocol) : json(nullptr)},
           {"sha256", sha256.empty() ? json(nullptr) : json(sha256)}, {"binary_sha256", contract_hash()},
           {"binary_protocol", contract_protocol()}};
    return j;
}

vendored_contract inspect_vendored_contract(const fs::path& script) {
    vendored_contract v;
    v.path = fs::absolute(script).parent_path() / "hotkernel_contract.py";
    auto text = read_text(v.path);
    if (!text) {
        v.status = "missing";
        return v;
    }
    v.sha256 = sha256_hex(*text);
    if (const int p = parse_contract_protocol(*text); p > 0) v.protocol = p;
    if (v.sha256 == contract_hash()) v.status = "same";
    else if (v.protocol != contract_protocol()) v.status = "stale";
    else v.status = "edited";
    return v;
}

script_watch::script_watch(std::vector<fs::path> files) : m_files(std::move(files)) {}

std::string script_watch::check() {
    std::vector<std::string> now;
    for (const auto& f : m_files) {
        auto text = read_text(f);
        now.push_back(text ? sha256_hex(*text) : "");
    }
    if (!m_started) {
        m_started = true;
        m_first = std::move(now);
        return "";
    }
    std::vector<std::string> changed;
    for (std::size_t i = 0; i < m_files.size(); ++i)
        if (now[i] != m_first[i])
            changed.push_back(now[i].empty() ? fmt::format("{} can no longer be read", m_files[i].string())
                                             : fmt::format("{} changed (sha256 {}… at the first run, {}… now)",
                                                           m_files[i].string(), m_first[i].substr(0, 12),
                                                           now[i].substr(0, 12)));
    if (changed.empty()) return "";
    std::string all;
    for (const auto& c : changed) all += (all.empty() ? "" : "; ") + c;
    return "a script changed between runs of this bench/verify: " + all +
           "; the run is not measured against what the first run measured (leave the scripts alone while it runs)";
}

trusted_launcher::trusted_launcher(fs::path target_from, std::vector<fs::path> scripts, trust_options opts)
    : m_target_from(std::move(target_from)), m_watch([&] {
          std::vector<fs::path> all;
          for (auto p : scripts) all.push_back(fs::absolute(p));
          if (!m_target_from.empty() && std::find(all.begin(), all.end(), fs::absolute(m_target_from)) == all.end())
              all.push_back(fs::absolute(m_target_from));
          return all;
      }()),
      m_opts(opts) {}

std::vector<std::string> trusted_launcher::command(const run_request& req) const {
    std::vector<std::string> argv{req.python, (embedded_python_dir() / "hotkernel_harness.py").string(), "--run",
                                  fs::absolute(req.script).string(), "--role",
                                  req.role == "bench" ? "baseline" : req.role};
    // -I: no user site (its .pth files), no PYTHON* start-up variables; the runner puts its own
    // folder on sys.path and the contract puts the target's.
    if (m_opts.isolated) argv.insert(argv.begin() + 1, "-I");
    if (req.role == "candidate" && !m_target_from.empty())
        argv.insert(argv.end(), {"--target-from", fs::absolute(m_target_from).string()});
    return argv;
}

namespace {
/// Why a CPU result checked fewer of its calls than the harness must ("" when it did not, or when
/// the result is not the CPU timer's): every sample checks at least min_checked_calls of its held
/// calls and spot-checks min_spot_calls (python/hotkernel_harness.py checks more; fewer means its
/// settings were changed under it).
constexpr long min_checked_calls = 3, min_spot_calls = 2;
std::string too_few_checks(const json& r, const json& timer) {
    if (!r.is_object() || r.value("status", "") != "ok" || r.value("timer", timer) != "cpu") return "";
    const json& sc = r.contains("sampled_checks") ? r["sampled_checks"] : json();
    const long calls = sc.is_object() && sc.value("calls_per_sample", json()).is_number_integer()
                           ? sc["calls_per_sample"].get<long>()
                           : -1;
    if (calls < 1)
        return "the result does not say how many of each sample's calls were checked (sampled_checks); every CPU "
               "sample is checked, so the harness's account of it was changed";
    const long checked = sc.value("checked_per_sample", json(0)).is_number_integer() ? sc["checked_per_sample"].get<long>() : 0;
    const long spot = sc.value("spot_per_sample", json(0)).is_number_integer() ? sc["spot_per_sample"].get<long>() : 0;
    if (checked >= std::min(calls, min_checked_calls) && spot >= std::min(calls, min_spot_calls)) return "";
    return fmt::format("each sample checked {} of its {} calls and spot-checked {}, fewer than the harness always checks "
                       "({} and {}): its settings were changed under it",
                       checked, calls, spot, std::min(calls, min_checked_calls), std::min(calls, min_spot_calls));
}

void void_line(json& r, const std::string& why) {
    r["status"] = "invalid";
    r["ok"] = false;
    r["reason"] = why;
}
}  // namespace

void check_sampled_calls(json& line) {
    if (has_workloads(line)) {
        for (auto& w : line["workloads"])
            if (const std::string why = too_few_checks(w, line.value("timer", json())); !why.empty()) void_line(w, why);
        restate_run_status(line);
    } else if (const std::string why = too_few_checks(line, json()); !why.empty()) {
        void_line(line, why);
    }
}

namespace {
// An "invalid" line this side makes in place of the harness's (by_parent: trusted_launcher.h).
json parent_invalid_line(json ms, const std::string& why) {
    return json{{"ms", std::move(ms)}, {"ok", false}, {"status", "invalid"}, {"reason", why}, {"trusted", true},
                {"by_parent", true}};
}
}  // namespace

json accept_channel(const std::string& channel_text, const std::string& nonce) {
    std::vector<std::string> msgs;
    for (auto& l : split_lines(channel_text))
        if (!trim(l).empty()) msgs.push_back(l);
    if (msgs.empty()) return nullptr;
    std::vector<json> good;
    int foreign = 0;
    for (const auto& m : msgs) {
        json j = json::parse(m, nullptr, false);
        if (j.is_object() && j.contains("nonce") && j["nonce"].is_string() && j["nonce"].get<std::string>() == nonce)
            good.push_back(std::move(j));
        else
            ++foreign;
    }
    if (good.size() == 1 && foreign == 0) {
        json j = std::move(good.front());
        j.erase("nonce");
        return j;
    }
    json ms = good.empty() ? json(nullptr) : good.back().value("ms", json(nullptr));
    std::string why = fmt::format("the private result channel carried {} message(s), {} without this run's nonce: "
                                  "something other than the harness wrote to it; the run is not trusted",
                                  msgs.size(), foreign);
    // The harness's alarm goes first, at once, when it sees the candidate reach its secrets: what
    // it saw is why the rest followed.
    if (!good.empty() && good.front().value("status", "") == "invalid" && good.front().contains("reason") &&
        good.front()["reason"].is_string())
        why = good.front()["reason"].get<std::string>() + "; then " + why;
    return parent_invalid_line(ms.is_number() ? ms : json(0.0), why);
}

json died_in_copy_line(int term_signal, const parent_clock_log& seen) {
    if (term_signal == 0 || !seen.ended_in_copy) return nullptr;
    const std::string why = fmt::format(
        "the run was killed by signal {} ({}) while the harness copied an output of the candidate's as it "
        "returned: reading the output's memory faulted, which an honest kernel's output never does (its pages "
        "left protected for a handler of the candidate's to fill in the copy's time, which the parent takes out "
        "of the window); the run is not trusted",
        term_signal, spawn_detail::signal_name(term_signal));
    return parent_invalid_line(0.0, why);
}

run_answer trusted_launcher::launch(const run_request& req, process_runner& runner, const cancel_token& cancel) {
    process_spec spec;
    spec.argv = command(req);
    spec.env_set = req.env;
    // Unbuffered so a run killed by its timeout still shows what it printed last.
    spec.env_set["PYTHONUNBUFFERED"] = "1";
    // Nothing in the environment tells the script its role, run index or whether it is warm-up.
    spec.env_unset = {"HOTKERNEL_ROLE", "HOTKERNEL_RUN_INDEX", "HOTKERNEL_WARMUP", "HOTKERNEL_NONCE",
                      std::string(profile_mode_env)};
    spec.timeout_s = req.timeout_s;
    spec.max_capture_bytes = 4u << 20;
    spec.result_channel = true;
    spec.closes_before_exit = true;  // hotkernel_harness.py closes its pipes after the result
    const std::string nonce = random_hex(16);
    std::random_device rd;
    const std::uint32_t check_seed = rd() & 0x7fffffff;
    // The nonce and the hidden check seed go on stdin, which the harness reads and closes before
    // the candidate is imported; the environment is readable by anything in the process.
    // The parent's clock bounds every timed sample from outside the candidate's process.
    parent_clock clock;
    json secret{{"nonce", nonce}, {"check_seed", check_seed}, {"clock", clock.address()}};
    if (req.profile_check) secret["profile_check"] = true;
    // The only folders the sandboxed run may write: its scratch (removed when launch returns)
    // and its role's compiler caches (sandbox.h).
    const run_scratch scratch = run_scratch::make();
    secret["scratch"] = scratch.path().string();
    secret["caches"] = json::array();
    for (const char* k : {"TMPDIR", "TMP", "TEMP"}) spec.env_set[k] = scratch.path().string();
    for (const auto& [k, dir] : compiler_caches(req.role, req.script)) {
        spec.env_set[k] = dir.string();
        secret["caches"].push_back(dir.string());
    }
    if (m_opts.allow_unsandboxed) secret["allow_unsandboxed"] = true;
    // What the harness checks the bytes of every file of ours it loads against.
    secret["py_sha256"] = embedded_python_hashes();
    spec.stdin_data = dump_line(secret) + "\n";
    const std::string changed_before = m_watch.check();
    run_answer a{.process = runner.run(spec, cancel), .line = {}, .source = line_source::channel, .voided = {}};
    const parent_clock_log seen = clock.finish();
    const std::string changed = changed_before.empty() ? m_watch.check() : changed_before;  // during the run too
    process_result& res = a.process;
    // The script's stdout is not the result: keep its tail only as diagnostics on stderr.
    std::string script_out = trim(tail_text(res.stdout_text, 600));
    if (!script_out.empty()) res.stderr_text += "\n[script stdout, ignored by the harness]\n" + script_out + "\n";
    json line = accept_channel(res.channel_text, nonce);
    if (!line.is_object()) line = died_in_copy_line(res.term_signal, seen);
    if (line.is_object()) {
        apply_clock_bounds(line, seen);  // the parent's bound is part of taking the answer
        check_sampled_calls(line);        // and so are the checks every CPU sample must have had
        a.line = check_run_line(std::move(line));
    } else {
        a.line.message = "sent no result over the harness's private channel";
    }
    if (!changed.empty()) a.voided.push_back(changed);
    return a;
}

std::unique_ptr<run_launcher> make_launcher_for(const std::vector<fs::path>& scripts, trust_options opts) {
    bool all = !scripts.empty();
    for (const auto& s : scripts) all = all && is_protocol3_target(s);
    if (!all) return make_launcher();
    return std::make_unique<trusted_launcher>(scripts.size() > 1 ? scripts.front() : fs::path{}, scripts, opts);
}

void describe_trust(json& result, json& warnings, const run_launcher& launcher, const std::vector<fs::path>& scripts) {
    const bool trusted = launcher.trusted();
    result["trusted"] = trusted;
    std::string found;
    for (const auto& f : take_python_dir_findings()) found += (found.empty() ? "" : ", ") + f;
    if (!found.empty())
        warnings.push_back(findings::python_cache_tampered(embedded_python_dir().string(), tail_text(found, 400)));
    result["timing"] = trusted ? "harness" : "self-reported";
    if (!trusted) return;
    result["harness"] = json{{"contract_sha256", contract_hash()},
                            {"contract_protocol", contract_protocol()},
                            {"harness_sha256", sha256_hex(embedded_python("hotkernel_harness.py"))},
                            {"contract_path", (embedded_python_dir() / "hotkernel_contract.py").string()}};
    std::vector<fs::path> seen;
    for (std::size_t i = 0; i < scripts.size(); ++i) {
        const fs::path dir = fs::absolute(scripts[i]).parent_path();
        if (std::find(seen.begin(), seen.end(), dir) != seen.end()) continue;
        seen.push_back(dir);
        vendored_contract v = inspect_vendored_contract(scripts[i]);
        result[i == 0 ? "vendored_contract" : "candidate_vendored_contract"] = v.to_json();
        if (auto w = v.warning()) warnings.push_back(*w);
    }
}

}  // namespace hotkernel
