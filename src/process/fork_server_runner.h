// The C++ half of the fork server: a process_runner that serves `python <file> ...` specs by
// forking each run from a warm interpreter that has already imported torch, and runs every
// other spec (and every fallback) on the runner it wraps. The other half is
// python/hotkernel_forkserver.py; the wire between them is fork_protocol.h.
//
// One server per (interpreter, cwd): a private one over pipes that ends with this runner (or
// is pooled, when its owner has a fork_server_pool), or a kept one over a Unix socket that
// outlives this process (HOTKERNEL_KEEP_WARM_S). The forked child runs the file as `__main__`
// with the spec's argv, env, cwd, stdin and result fd, so what runs is what the spec asked for.
// Forking is given up, saying why, when the server cannot fork safely (CUDA initialised,
// threads, no os.fork), cannot be started, dies, or the fallback runner cannot hold server connections;
// a spec a fork cannot honour (interpreter options, PYTHON*/LD_* set for it) runs fresh.
#pragma once
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "process/runner.h"
#include "util/json.h"

namespace hotkernel {

/// (interpreter, cwd, isolated): the runs one fork server can serve. An isolated server was
/// started `python -I` and serves `python -I <file>` specs; its forks inherit the isolation.
struct fork_server_key {
    std::string python;
    std::string cwd;
    bool isolated = false;
    auto operator<=>(const fork_server_key&) const = default;
};

/// One fork server: its connection and the ready line it sent.
struct fork_server {
    std::unique_ptr<server_connection> connection;
    json ready;
    bool light = false;
    bool kept = false;  ///< a kept server (over a socket): it outlives this process
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

/// Fork servers pooled between the calls of one long-lived process: in an MCP session one
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
    std::unique_ptr<fork_server> take(const fork_server_key& key, bool heavy);
    /// Files a live server for the next call (a dead one is dropped).
    void give(const fork_server_key& key, std::unique_ptr<fork_server> srv);

private:
    struct impl;
    std::unique_ptr<impl> m;
};

/// What a fork_server_runner did so far, for its owner's account of the runs.
struct fork_server_stats {
    std::string disabled_reason;   ///< set once forking is given up for this runner
    std::string last_fresh_reason; ///< why the last run (only) went fresh
    bool last_warm = false;
    std::size_t warm_runs = 0, fresh_runs = 0;
    json server_info;              ///< the ready line of the last server started
    bool server_kept = false;      ///< the last server is a kept one (outlives this process)
    std::string kept_note;         ///< why the last server is not a kept one ("" when it is, or off)
    bool server_reused = false;    ///< the last server came from the pool or an earlier hotkernel
    double server_age_s = 0;       ///< how long before this call it had been started
    /// How each server that died during a run ended ("was killed by signal 9 (SIGKILL)"), in
    /// order: that run was repeated as a fresh process and the next run got a new private server.
    std::vector<std::string> died_during_run;
};

/// Seconds a kept fork server waits for the next connection before it ends
/// (HOTKERNEL_KEEP_WARM_S, default 600, at most a week); 0 when off: set to 0, or not a number
/// (then *bad, when given, says so).
double keep_warm_s(std::string* bad = nullptr);

class fork_server_runner final : public process_runner {
public:
    struct options {
        /// The fork server's script (python/hotkernel_forkserver.py, written out by the owner);
        /// asked for when a server is started. If it throws, forking is given up, saying why.
        std::function<std::filesystem::path()> server_script;
        /// Where private servers go when this runner ends (an MCP session's pool); with a
        /// pool, kept servers are off. nullptr: they end with the runner.
        fork_server_pool* pool = nullptr;
        /// Set in every server's environment (hotkernel's Python hashes, HOTKERNEL_PY_SHA256).
        std::map<std::string, std::string> server_env;
    };

    /// `fallback` runs what is not forked, and starts the servers.
    fork_server_runner(process_runner& fallback, options opts);
    ~fork_server_runner() override;
    fork_server_runner(const fork_server_runner&) = delete;
    fork_server_runner& operator=(const fork_server_runner&) = delete;

    using process_runner::run;
    process_result run(const process_spec& spec, const cancel_token& cancel) override;
    std::unique_ptr<server_connection> start(const process_spec& spec, std::string* error) override;

    /// Starts the server a run of `script` in `python` will need, without waiting for it to be
    /// ready: its imports overlap whatever the caller does before the first run. Returns the
    /// server filed for it (nullptr when none could be had; stats() says why).
    /// `isolated`: for `python -I` runs (the server is started so, see fork_server_key).
    fork_server* prestart(const std::string& python, const std::filesystem::path& script, bool isolated = false);
    /// Ends every server this runner holds (destroying a connection kills a private server's group;
    /// a kept server lives on).
    void end_servers();

    [[nodiscard]] const fork_server_stats& stats() const { return m_stats; }
    [[nodiscard]] process_runner& fallback() const { return m_real; }

private:
    process_result fresh(const process_spec& spec, const cancel_token& cancel, const std::string& why);
    void give_up(const std::string& why);
    fork_server* get_server(const process_spec& spec, const cancel_token& cancel);
    fork_server* adopt(const fork_server_key& key, std::unique_ptr<fork_server> pooled);
    bool spawn(const fork_server_key& key, bool heavy);
    std::unique_ptr<server_connection> connect_kept(const process_spec& private_spec, bool heavy);
    fork_server* await_ready(const fork_server_key& key, const cancel_token& cancel);
    process_result forked(fork_server& srv, const process_spec& spec, const cancel_token& cancel);
    /// Asks the server to stop run `id` (cancelled) and waits for its answer; nullopt when the
    /// server cannot (then it must be ended).
    std::optional<process_result> cancel_run(fork_server& srv, std::size_t id, const process_spec& spec);

    process_runner& m_real;
    options m_opts;
    fork_server_stats m_stats;
    std::map<fork_server_key, std::unique_ptr<fork_server>> m_servers;
    std::size_t m_next_id = 1;
    std::size_t m_server_starts = 0;
    bool m_no_kept = false;  ///< a kept server failed this runner once: private ones from now
};

}  // namespace hotkernel
