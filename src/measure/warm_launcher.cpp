// The warm launcher: which runner a measured run goes to, and why, in words.
#include "measure/warm_launcher.h"

#include <fmt/format.h>

#include "python/interpreter.h"
#include "util/strings.h"
#include "util/words.h"

namespace hotkernel {

warm_launcher::warm_launcher(std::unique_ptr<run_launcher> inner, bool enabled, fork_server_pool* pool)
    : m_inner(std::move(inner)), m_enabled(enabled), m_pool(pool) {}

warm_launcher::~warm_launcher() = default;  // the fork_server_runner pools or ends its servers

fork_server_runner& warm_launcher::forking(process_runner& runner) {
    if (!m_fork) {
        fork_server_runner::options opts;
        // Written out when a server is first started (python/hotkernel_forkserver.py).
        opts.server_script = [] { return embedded_python_dir() / "hotkernel_forkserver.py"; };
        opts.pool = m_pool;
        // The server checks the bytes of the contract it preloads against the binary's.
        opts.server_env["HOTKERNEL_PY_SHA256"] = dump_line(json(embedded_python_hashes()));
        m_fork = std::make_unique<fork_server_runner>(runner, std::move(opts));
    }
    return *m_fork;
}

fork_server_stats warm_launcher::stats() const {
    if (m_fork) return m_fork->stats();
    fork_server_stats st;
    st.fresh_runs = m_plain_runs;
    return st;
}

std::string warm_launcher::name() const {
    const fork_server_stats st = stats();
    const bool no_runs = st.warm_runs == 0 && st.fresh_runs == 0;
    const bool warm = m_enabled && (no_runs ? st.disabled_reason.empty() : st.last_warm);
    if (!warm) return m_inner->name();
    const std::string inner = m_inner->name();
    return inner == "fresh-process" ? "warm-fork" : inner + "+warm-fork";
}

std::string warm_launcher::reason() const {
    if (!m_enabled) return words::param("warm", false) + " was given: each run is a fresh process";
    const fork_server_stats st = stats();
    if (!st.disabled_reason.empty()) {
        std::string s = "fell back to fresh processes";
        if (st.warm_runs > 0) s += fmt::format(" after {} warm run(s)", st.warm_runs);
        return s + ": " + st.disabled_reason;
    }
    if (!st.last_warm && !st.last_fresh_reason.empty()) return "this run was a fresh process: " + st.last_fresh_reason;
    if (st.warm_runs == 0) return "no run has been launched yet";
    const json& info = st.server_info;
    std::string what;
    if (info.contains("torch") && info["torch"].is_string()) {
        what = "torch " + info["torch"].get<std::string>();
        if (info.contains("triton") && info["triton"].is_string()) what += " and triton " + info["triton"].get<std::string>();
    } else if (info.value("light", false)) {
        what = "no torch (the script names neither torch, triton nor the contract, so only Python itself is kept warm)";
    } else {
        what = "no torch (there is none in this interpreter)";
    }
    std::string s = fmt::format("each run was forked from a fork server that imported {} once, without initialising CUDA "
                                "(imports took {:.1f} s, paid once per bench/verify)",
                                what, info.value("import_s", 0.0));
    if (st.server_kept && st.server_reused)
        s = fmt::format("each run was forked from a kept fork server (started {:.0f} s before by an earlier hotkernel; it "
                        "imported {} once, in {:.1f} s, and nothing this time)",
                        st.server_age_s, what, info.value("import_s", 0.0));
    else if (st.server_kept)
        s = fmt::format("each run was forked from a fork server that imported {} once, without initialising CUDA "
                        "(imports took {:.1f} s); it is kept for the next bench/verify until idle for {:.0f} s "
                        "(HOTKERNEL_KEEP_WARM_S)",
                        what, info.value("import_s", 0.0), keep_warm_s());
    else if (st.server_reused)
        s = fmt::format("each run was forked from a fork server this MCP session pooled from an earlier call (started "
                        "{:.0f} s before; it imported {} once, in {:.1f} s, and nothing this time)",
                        st.server_age_s, what, info.value("import_s", 0.0));
    if (!st.server_kept && !st.kept_note.empty()) s += "; not a kept server: " + st.kept_note;
    if (st.fresh_runs > 0) s += fmt::format("; {} run(s) were fresh processes", st.fresh_runs);
    return s;
}

json warm_launcher::describe() const {
    const fork_server_stats st = stats();
    json j{{"launcher", name()},
           {"launcher_reason", reason()},
           {"warm_runs", st.warm_runs},
           {"fresh_runs", st.fresh_runs}};
    if (!st.server_info.is_null()) {
        const json& i = st.server_info;
        j["fork_server"] = json{{"python", i.value("python", "")},
                                {"import_s", i.value("import_s", 0.0)},
                                {"torch", i.value("torch", json())},
                                {"triton", i.value("triton", json())},
                                {"reused", st.server_reused},
                                {"kept", st.server_kept},
                                // a child of the server keeps the GPU's driver up between runs
                                {"gpu_held", i.value("gpu_held", false)}};
        if (st.server_reused) j["fork_server"]["age_s"] = st.server_age_s;
    }
    return j;
}

namespace {
/// Whether the runs of this launcher start `python -I` (the harness's, unless isolate=false).
bool runs_isolated(const run_launcher& inner, const std::string& python, const std::filesystem::path& script) {
    const auto argv = inner.command(run_request{.script = script, .python = python});
    return argv.size() > 2 && argv[1] == "-I";
}
}  // namespace

void warm_launcher::prestart(const std::string& python, const std::filesystem::path& script, process_runner& runner) {
    if (m_enabled) forking(runner).prestart(python, script, runs_isolated(*m_inner, python, script));
}

json warm_launcher::prewarm(const std::string& python, const std::filesystem::path& script, process_runner& runner,
                            bool isolated) {
    auto no = [](const std::string& why) { return json{{"started", false}, {"reason", why}}; };
    if (!m_enabled) return no(words::param("warm", false) + " was given");
    std::string bad;
    const bool pooled = m_pool != nullptr;
    if (!pooled && keep_warm_s(&bad) <= 0)
        return no(bad.empty() ? "HOTKERNEL_KEEP_WARM_S=0: no fork server outlives a command, so each bench and "
                                "verify starts its own"
                              : bad);
    fork_server_runner& fork = forking(runner);
    // A launcher made for this call holds no other server than the one prestart files.
    fork_server* srv = fork.prestart(python, script, isolated);
    const fork_server_stats& st = fork.stats();
    if (srv == nullptr)
        return no(!st.disabled_reason.empty() ? st.disabled_reason
                                              : (st.kept_note.empty() ? "the fork server was not started" : st.kept_note));
    if (srv->kept) {
        // Connected before this command leaves: a hotkernel right after it then finds the
        // server listening (while it imports) instead of starting a second one.
        if (!srv->connection->wait_listening(10.0)) {
            std::string why = "the kept fork server did not start listening: " +
                              tail_text(trim(srv->connection->stderr_tail()), 300);
            fork.end_servers();
            return no(why);
        }
        // pid 0: it was listening already (an earlier command's), so nothing was started.
        const bool running = srv->connection->pid() == 0;
        return json{{"started", !running}, {"kept", true}, {"already_running", running},
                    {"note", fmt::format("{} for the next bench/verify until idle for {:.0f} s "
                                         "(HOTKERNEL_KEEP_WARM_S)",
                                         running ? "one kept from an earlier command is there" : "kept",
                                         keep_warm_s())}};
    }
    if (pooled)
        return json{{"started", true}, {"pooled", true},
                    {"note", "pooled in this MCP session for the next bench/verify of this interpreter"}};
    // A private server would end with this command: not worth its imports.
    std::string why = st.kept_note.empty() ? "no kept fork server could be had" : st.kept_note;
    fork.end_servers();
    return no(why);
}

run_answer warm_launcher::launch(const run_request& req, process_runner& runner, const cancel_token& cancel) {
    if (!m_enabled) {
        run_answer a = m_inner->launch(req, runner, cancel);
        ++m_plain_runs;
        return a;
    }
    fork_server_runner& fork = forking(runner);
    const std::size_t died_before = fork.stats().died_during_run.size();
    run_answer a = m_inner->launch(req, fork, cancel);
    const auto& died = fork.stats().died_during_run;
    if (died.size() > died_before) {
        m_restarts.push_back(findings::fork_server_restarted(run_label(req), died.back()));
        // Only a run can have killed it, and what that run started may have escaped every sweep
        // with it (re-parented to init): this run's answer is not trusted.
        a.voided.push_back(fmt::format("the fork server {} during this run (a process the run started may have "
                                       "escaped with it); the run was repeated as a fresh process, and its answer is "
                                       "not trusted",
                                       died.back()));
    }
    if (!a.process.server_changed.empty())
        // Every later run forked from it would have run under what this one set (a low priority
        // for the baseline's runs, say): put back by the server, and this run is not trusted.
        a.voided.push_back(a.process.server_changed + "; the run is not trusted");
    return a;
}

std::vector<finding> warm_launcher::warnings() const { return m_restarts; }

std::unique_ptr<warm_launcher> make_warm_launcher(std::unique_ptr<run_launcher> inner, bool warm,
                                                  fork_server_pool* pool) {
    return std::make_unique<warm_launcher>(std::move(inner), warm, pool);
}

}  // namespace hotkernel
