// The warm launcher: runs each measured run as a child forked from a warm interpreter that
// has already imported torch (python/hotkernel_forkserver.py), instead of a new process.
//
// It wraps another run_launcher (the fresh one, or the trusted runner): that launcher builds
// the process_spec it always builds (`python <file> args...`, env, stdin, result channel), and
// the warm launcher hands it a process_runner that serves such specs from a fork server, one
// server per (interpreter, cwd), reused for every run of a bench/verify. The child runs the
// file as `__main__` with the same argv, env, cwd, stdin and inherited result fd, so what runs
// is exactly what the wrapped launcher asked for, minus ~4 s of importing torch.
//
// It falls back to the wrapped launcher's own fresh processes, and says why, when forking is
// unsafe (CUDA already initialised in the server, Python threads, no os.fork), when the server
// cannot be started, when the runner cannot keep sessions, when a spec cannot be honoured by a
// fork (interpreter options, PYTHON*/LD_* variables set for the run), or when asked (warm=false).
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "measure/measure.h"
#include "util/json.h"

namespace hotkernel {

class fork_server_pool;

class warm_launcher final : public run_launcher {
public:
    /// `inner` builds and (when falling back) runs each spec. enabled=false: every run is
    /// inner's, with launcher_reason saying it was asked for. With a pool, the launcher takes
    /// a server from it and hands its servers back when destroyed (and kept servers, the ones
    /// over a socket that outlive a CLI command, are off).
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
    json prewarm(const std::string& python, const std::filesystem::path& script, process_runner& runner);

    /// Why the runs went the way they did, in one sentence (for `launcher_reason`).
    [[nodiscard]] std::string reason() const;
    /// {"launcher", "launcher_reason", "warm_runs", "fresh_runs", "fork_server": {...}} for a result.
    [[nodiscard]] json describe() const;

    struct server;   // one fork server session (defined in the .cpp)
    struct state;    // shared with the forking runner

private:
    std::unique_ptr<run_launcher> m_inner;
    std::shared_ptr<state> m_state;
};

/// Fork servers kept between the calls of one long-lived process: in an MCP session one
/// call's server serves the next call of the same interpreter and working directory. Owned by
/// whoever runs the tools (mcp_session) and handed to them in tool_context::fork_servers; a
/// server idle past idle_limit_s is ended, and destroying the pool ends the rest.
class fork_server_pool {
public:
    explicit fork_server_pool(double idle_limit_s = 600);
    ~fork_server_pool();
    fork_server_pool(const fork_server_pool&) = delete;
    fork_server_pool& operator=(const fork_server_pool&) = delete;

    /// An idle server for (interpreter, cwd) that can serve a heavy or light script; nullptr if none.
    std::unique_ptr<warm_launcher::server> take(const std::pair<std::string, std::string>& key, bool heavy);
    /// Files a live server for the next call (a dead one is dropped).
    void give(const std::pair<std::string, std::string>& key, std::unique_ptr<warm_launcher::server> srv);

private:
    struct impl;
    std::unique_ptr<impl> m;
};

/// Wraps `inner` in a warm_launcher (bench and verify call this with their `warm` param and
/// their context's pool).
std::unique_ptr<warm_launcher> make_warm_launcher(std::unique_ptr<run_launcher> inner, bool warm,
                                                  fork_server_pool* pool = nullptr);

}  // namespace hotkernel
