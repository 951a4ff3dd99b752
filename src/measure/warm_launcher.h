// The warm launcher: launch policy for runs forked from a warm interpreter that has already
// imported torch, instead of a new process each.
//
// It wraps another run_launcher (the fresh one, or the trusted launcher): that launcher builds
// the process_spec it always builds (`python <file> args...`, env, stdin, result channel), and
// the warm launcher decides which process_runner runs it: a fork_server_runner
// (process/fork_server_runner.h), which forks it from a fork server, one per (interpreter,
// cwd), reused for every run of a bench/verify; or, with warm=false, the runner it was given.
// What runs is exactly what the wrapped launcher asked for, minus ~4 s of importing torch.
//
// The fork_server_runner falls back to fresh processes, and the launcher says why, when forking
// is unsafe (CUDA already initialised in the server, Python threads, no os.fork), when the
// server cannot be started, when the runner cannot hold server connections, or when a spec cannot be
// honoured by a fork (interpreter options, PYTHON*/LD_* variables set for the run).
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "measure/measure.h"
#include "report/findings.h"
#include "process/fork_server_runner.h"
#include "util/json.h"

namespace hotkernel {

class warm_launcher final : public run_launcher {
public:
    /// `inner` builds each spec. enabled=false: every run goes to the runner launch() is given,
    /// with launcher_reason saying it was asked for. With a pool, the fork servers are taken from
    /// it and handed back when the launcher is destroyed (and kept servers, the ones over a
    /// socket that outlive a CLI command, are off). Every call must pass the same runner.
    warm_launcher(std::unique_ptr<run_launcher> inner, bool enabled, fork_server_pool* pool = nullptr);
    ~warm_launcher() override;

    /// "warm-fork" when the last run was forked ("<inner>+warm-fork" over a non-fresh inner
    /// launcher); the inner name ("fresh-process") when it ran as its own process.
    [[nodiscard]] std::string name() const override;
    [[nodiscard]] std::vector<std::string> command(const run_request& req) const override { return m_inner->command(req); }
    [[nodiscard]] bool trusted() const override { return m_inner->trusted(); }
    run_answer launch(const run_request& req, process_runner& runner, const cancel_token& cancel) override;
    /// Starts the fork server the runs of `script` will use, without waiting: its imports overlap
    /// what the caller does before the first run (nvidia-smi queries). A no-op when not warm.
    void prestart(const std::string& python, const std::filesystem::path& script, process_runner& runner);

    /// For a command that runs nothing itself (`new`): starts the fork server a later bench or
    /// verify of `script` will fork from, when one can outlive this command (kept across CLI
    /// calls, or in the MCP session's pool), without waiting for its imports. Returns
    /// {"started": bool, "kept"/"pooled"/"already_running": bool, "reason"/"note": why}; starts
    /// nothing when warm is off, keeping is off (HOTKERNEL_KEEP_WARM_S=0), a kept one is already
    /// running, or only a private server could be had.
    /// `isolated`: for runs that start `python -I` (the harness's default).
    json prewarm(const std::string& python, const std::filesystem::path& script, process_runner& runner,
                 bool isolated = true);

    /// Findings for the result: a fork server that died during a run (fork_server_restarted),
    /// once per death. That run's line is made `invalid`, saying so.
    [[nodiscard]] std::vector<finding> warnings() const;

    /// Why the runs went the way they did, in one sentence (for `launcher_reason`).
    [[nodiscard]] std::string reason() const;
    /// {"launcher", "launcher_reason", "warm_runs", "fresh_runs", "fork_server": {...}} for a result.
    [[nodiscard]] json describe() const;

private:
    /// The runner the runs go to while warm, made over `runner` at the first call.
    fork_server_runner& forking(process_runner& runner);
    [[nodiscard]] fork_server_stats stats() const;

    std::unique_ptr<run_launcher> m_inner;
    bool m_enabled = true;
    fork_server_pool* m_pool = nullptr;
    std::unique_ptr<fork_server_runner> m_fork;
    std::size_t m_plain_runs = 0;  ///< runs given to the caller's runner (warm=false)
    std::vector<finding> m_restarts;
};

/// Wraps `inner` in a warm_launcher (bench and verify call this with their `warm` param and
/// their context's pool).
std::unique_ptr<warm_launcher> make_warm_launcher(std::unique_ptr<run_launcher> inner, bool warm,
                                                  fork_server_pool* pool = nullptr);

}  // namespace hotkernel
