// The fork server's C++ half: a process_runner that forks `python <file>` runs from a warm server.
#include "process/fork_server_runner.h"

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "process/fork_protocol.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/strings.h"

namespace hotkernel {

namespace {

using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

/// Waiting for the server's imports (torch takes ~4.5 s on the H200; a cold file cache or a
/// network home can take far longer). Past this the server is given up and runs go fresh.
constexpr double server_start_limit_s = 180;
/// Extra time over a run's own timeout for the server to kill it and answer.
constexpr double answer_slack_s = 30;

/// `python -I <file> ...`: the one interpreter option a fork honours (its server starts so).
bool is_isolated(const process_spec& spec) { return spec.argv.size() > 2 && spec.argv[1] == "-I"; }
/// Where the file is in argv: 2 after -I, else 1.
std::size_t script_at(const process_spec& spec) { return is_isolated(spec) ? 2 : 1; }

/// Empty when a fork can run `spec` exactly as a new process would; else why not.
std::string why_not_forkable(const process_spec& spec) {
    namespace fs = std::filesystem;
    const std::size_t at = script_at(spec);
    if (spec.argv.size() <= at || spec.argv[at].empty() || spec.argv[at][0] == '-')
        return "the run is not `python [-I] <file> ...` (other interpreter options cannot be applied to a forked child)";
    std::error_code ec;
    const fs::path script = fs::path(spec.argv[at]).is_absolute() || spec.cwd.empty() ? fs::path(spec.argv[at])
                                                                                       : spec.cwd / spec.argv[at];
    if (!fs::is_regular_file(script, ec)) return "'" + spec.argv[at] + "' is not a regular file";
    auto startup_only = [](const std::string& k) {
        return (k.rfind("PYTHON", 0) == 0 && k != "PYTHONUNBUFFERED") || k.rfind("LD_", 0) == 0;
    };
    for (const auto& [k, v] : spec.env_set)
        if (startup_only(k)) return "the run sets " + k + ", which the interpreter reads only when it starts";
    for (const auto& k : spec.env_unset)
        if (startup_only(k)) return "the run unsets " + k + ", which the interpreter reads only when it starts";
    return {};
}

/// True when the script's text names torch, triton or the contract: then the server should
/// import them once. A script that names none starts in ~0.05 s as a fresh interpreter, and a
/// server that imported torch for it would only cost time ("light" server).
bool wants_heavy_imports(const std::string& script) {
    std::ifstream in(script, std::ios::binary);
    std::string text(1u << 20, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    for (const char* word : {"torch", "triton", "hotkernel_contract"})
        if (text.find(word) != std::string::npos) return true;
    return false;
}

/// The environment a kept server must have been started with to serve this process: what the
/// interpreter, torch, triton and CUDA read when they load (the rest is sent with each run), and
/// the core slice a GPU pool pinned this process to (HOTKERNEL_CPUS: forks inherit the server's).
std::string import_env_digest() {
    std::string all;  // environment_now() is sorted by name
    for (const auto& [k, v] : environment_now()) {
        const std::string s = k + "=" + v;
        for (const char* p : {"PYTHON", "LD_", "CUDA", "TORCH", "PYTORCH", "TRITON", "NCCL", "OMP_", "MKL_",
                              "VIRTUAL_ENV=", "CONDA_PREFIX=", "PATH=", "HOTKERNEL_FORKSERVER_PRELOAD=",
                              "HOTKERNEL_CPUS="})
            if (s.rfind(p, 0) == 0) {
                all += s + '\n';
                break;
            }
    }
    return all;
}

/// The folder for kept servers' sockets, private to this user; empty with *why set when there
/// is no safe one ($XDG_RUNTIME_DIR/hotkernel, else run/ in hotkernel's cache folder when the
/// user has one, else /tmp/hotkernel-<uid>).
std::filesystem::path kept_dir(std::string* why) {
    namespace fs = std::filesystem;
    auto has_env = [](const char* name) {
        const char* v = std::getenv(name);
        return v != nullptr && *v != '\0';
    };
    std::vector<fs::path> tries;
    if (has_env("XDG_RUNTIME_DIR")) tries.push_back(fs::path(std::getenv("XDG_RUNTIME_DIR")) / "hotkernel");
    // cache_dir() ($XDG_CACHE_HOME/hotkernel, else ~/.cache/hotkernel), where the embedded Python
    // files and calibrations live too; not its shared /tmp fallback.
    if (has_env("XDG_CACHE_HOME") || has_env("HOME")) tries.push_back(cache_dir() / "run");
    tries.push_back(fs::path("/tmp") / fmt::format("hotkernel-{}", ::getuid()));
    for (const auto& d : tries) {
        std::error_code ec;
        fs::create_directories(d, ec);
        ::chmod(d.c_str(), 0700);
        struct stat st {};
        if (::lstat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        if (st.st_uid != ::getuid() || (st.st_mode & 077) != 0) {
            *why = d.string() + " is not private to this user";
            continue;
        }
        if ((d / "fs-0123456789abcdef.sock").string().size() >= sizeof(sockaddr_un::sun_path)) {
            *why = d.string() + " is too long a path for a Unix socket";
            continue;
        }
        return d;
    }
    return {};
}

std::string script_path(const process_spec& spec) {
    std::filesystem::path p(spec.argv[script_at(spec)]);
    return (p.is_absolute() || spec.cwd.empty() ? p : spec.cwd / p).string();
}

std::string key_cwd(const process_spec& spec) {
    std::error_code ec;
    return spec.cwd.empty() ? std::filesystem::current_path(ec).string() : spec.cwd.string();
}

fork_server_key key_of(const process_spec& spec) { return {spec.argv[0], key_cwd(spec), is_isolated(spec)}; }

/// The server's arguments after the interpreter, for the kept server's id.
std::string shell_args(const std::vector<std::string>& argv) {
    std::string out;
    for (std::size_t i = 1; i < argv.size(); ++i) out += (i > 1 ? " " : "") + argv[i];
    return out;
}

std::string stderr_part(server_connection& s) {
    std::string t = trim(tail_text(s.stderr_tail(), 1500));
    return t.empty() ? "" : "; its stderr: " + t;
}

}  // namespace

/// Seconds a kept fork server waits for the next connection before it ends
/// (HOTKERNEL_KEEP_WARM_S, default 600, at most a week); 0 when off: set to 0, or not a number
/// (then *bad, when given, says so).
double keep_warm_s(std::string* bad) {
    const char* v = std::getenv("HOTKERNEL_KEEP_WARM_S");
    if (!v || !*v) return 600;
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (!end || *end != '\0' || !(s >= 0)) {
        if (bad)
            *bad = fmt::format("HOTKERNEL_KEEP_WARM_S='{}' is not a number of seconds (600 keeps the server 10 "
                               "minutes, 0 not at all), so it was not kept",
                               v);
        return 0;
    }
    return std::min(s, 7 * 86400.0);
}

/// One caller at a time owns a server; a server idle past the limit is ended.
struct fork_server_pool::impl {
    struct entry {
        fork_server_key key;
        std::unique_ptr<fork_server> srv;
        steady::time_point since;
    };
    std::mutex m;
    double idle_limit_s = 600;
    std::vector<entry> idle;

    void expire_locked() {
        std::erase_if(idle, [&](const entry& e) {
            return seconds_since(e.since) > idle_limit_s || !e.srv->connection->alive();
        });
    }
};

fork_server_pool::fork_server_pool(double idle_limit_s) : m(std::make_unique<impl>()) {
    m->idle_limit_s = idle_limit_s;
}

fork_server_pool::~fork_server_pool() = default;  // destroying a server's connection kills its group

std::unique_ptr<fork_server> fork_server_pool::take(const fork_server_key& key, bool heavy) {
    std::lock_guard lock(m->m);
    m->expire_locked();
    for (auto it = m->idle.begin(); it != m->idle.end(); ++it)
        if (it->key == key && !(it->srv->light && heavy)) {
            auto srv = std::move(it->srv);
            m->idle.erase(it);
            return srv;
        }
    return nullptr;
}

void fork_server_pool::give(const fork_server_key& key, std::unique_ptr<fork_server> srv) {
    std::lock_guard lock(m->m);
    if (!srv || !srv->connection->alive()) return;
    m->idle.push_back({key, std::move(srv), steady::now()});
    m->expire_locked();
}

fork_server_runner::fork_server_runner(process_runner& fallback, options opts)
    : m_real(fallback), m_opts(std::move(opts)) {}

fork_server_runner::~fork_server_runner() {
    // Pooled for the next call when there is a pool (an MCP session's); otherwise ended here.
    if (m_opts.pool != nullptr)
        for (auto& [key, srv] : m_servers)
            if (!srv->kept) m_opts.pool->give(key, std::move(srv));  // a kept one is there for the next caller anyway
}

void fork_server_runner::end_servers() { m_servers.clear(); }  // destroying a connection kills its group

process_result fork_server_runner::run(const process_spec& spec, const cancel_token& cancel) {
    if (!m_stats.disabled_reason.empty()) return fresh(spec, cancel, "");
    if (std::string why = why_not_forkable(spec); !why.empty()) return fresh(spec, cancel, why);
    fork_server* srv = get_server(spec, cancel);
    if (!srv) return fresh(spec, cancel, "");
    return forked(*srv, spec, cancel);
}

std::unique_ptr<server_connection> fork_server_runner::start(const process_spec& spec, std::string* error) {
    return m_real.start(spec, error);
}

process_result fork_server_runner::fresh(const process_spec& spec, const cancel_token& cancel, const std::string& why) {
    m_stats.last_warm = false;
    m_stats.last_fresh_reason = why;
    ++m_stats.fresh_runs;
    return m_real.run(spec, cancel);
}

void fork_server_runner::give_up(const std::string& why) {
    if (m_stats.disabled_reason.empty()) m_stats.disabled_reason = why;
}

fork_server* fork_server_runner::prestart(const std::string& python, const std::filesystem::path& script,
                                          bool isolated) {
    if (!m_stats.disabled_reason.empty()) return nullptr;
    process_spec spec;  // what the first run's spec will say: `python [-I] script`, no cwd of its own
    spec.argv = {python, script.string()};
    if (isolated) spec.argv.insert(spec.argv.begin() + 1, "-I");
    const auto key = key_of(spec);
    const bool heavy = wants_heavy_imports(script_path(spec));
    if (auto it = m_servers.find(key); it != m_servers.end()) return it->second.get();
    if (auto pooled = m_opts.pool ? m_opts.pool->take(key, heavy) : nullptr) return adopt(key, std::move(pooled));
    if (!spawn(key, heavy)) return nullptr;
    return m_servers.at(key).get();
}

fork_server* fork_server_runner::get_server(const process_spec& spec, const cancel_token& cancel) {
    const auto key = key_of(spec);
    const bool heavy = wants_heavy_imports(script_path(spec));
    if (auto it = m_servers.find(key); it != m_servers.end()) {
        fork_server& srv = *it->second;
        // A light server serving a script that needs torch: replace it by one that imports it.
        if (!(srv.light && heavy)) {
            if (srv.ready.is_null()) return await_ready(key, cancel);  // prestarted: ready, or why it died
            if (srv.connection->alive()) return &srv;
        }
        m_servers.erase(it);  // died between runs (or too light): start another (bounded below)
    }
    if (auto pooled = m_opts.pool ? m_opts.pool->take(key, heavy) : nullptr) return adopt(key, std::move(pooled));
    if (!spawn(key, heavy)) return nullptr;
    return await_ready(key, cancel);
}

fork_server* fork_server_runner::adopt(const fork_server_key& key, std::unique_ptr<fork_server> pooled) {
    m_stats.server_info = pooled->ready;
    m_stats.server_reused = true;
    m_stats.server_age_s = seconds_since(pooled->started);
    auto* raw = pooled.get();
    m_servers[key] = std::move(pooled);
    return raw;
}

/// Starts a server (its ready line not yet read) and files it under `key`; false when it
/// could not be started (forking is then given up, with the reason).
bool fork_server_runner::spawn(const fork_server_key& key, bool heavy) {
    if (m_server_starts >= 3) {
        give_up("the fork server had to be started 3 times; it keeps dying");
        return false;
    }
    ++m_server_starts;
    m_stats.server_reused = false;
    process_spec sp;
    try {
        if (!m_opts.server_script) throw std::runtime_error("no fork server script was given");
        sp.argv = {key.python, m_opts.server_script().string()};
        // Isolated from the user's start-up files (user site, PYTHON* variables): so is every fork.
        if (key.isolated) sp.argv.insert(sp.argv.begin() + 1, "-I");
    } catch (const std::exception& ex) {
        give_up(std::string("the fork server's file could not be written: ") + ex.what());
        return false;
    }
    sp.cwd = key.cwd;
    for (const auto& [k, v] : m_opts.server_env) sp.env_set[k] = v;
    sp.timeout_s = 0;  // lives as long as this runner; every read from it has a limit
    sp.result_channel = true;
    sp.max_capture_bytes = 256u << 10;
    sp.kill_grace_s = 2.0;
    if (!heavy) sp.env_set["HOTKERNEL_FORKSERVER_LIGHT"] = "1";
    auto srv = std::make_unique<fork_server>();
    srv->light = !heavy;
    std::string err;
    if (auto kept = connect_kept(sp, heavy)) {
        srv->connection = std::move(kept);
        srv->kept = true;
    } else if (auto conn = m_real.start(sp, &err)) {
        srv->connection = std::move(conn);
    } else {
        give_up("the fork server could not be started: " + err);
        return false;
    }
    m_servers[key] = std::move(srv);
    return true;
}

/// A connection to the kept server for this interpreter and import environment (started
/// detached when none runs); nullptr, with stats().kept_note saying why, when kept servers
/// are off (HOTKERNEL_KEEP_WARM_S=0, the MCP server's own pool) or one cannot be used.
std::unique_ptr<server_connection> fork_server_runner::connect_kept(const process_spec& private_spec, bool heavy) {
    std::string bad;
    const double idle_s = keep_warm_s(&bad);
    if (!bad.empty()) m_stats.kept_note = bad;
    if (idle_s <= 0 || m_opts.pool != nullptr || m_no_kept) return nullptr;
    m_stats.kept_note.clear();
    std::string why;
    const auto dir = kept_dir(&why);
    if (dir.empty()) {
        m_stats.kept_note = "no private folder for a kept fork server: " + why;
        return nullptr;
    }
    std::error_code ec;
    const std::string id = sha256_hex(fmt::format("{}\n{}\n{}\n{}\n{}", private_spec.argv[0],
                                                  std::filesystem::canonical(private_spec.argv[0], ec).string(),
                                                  shell_args(private_spec.argv), heavy ? "heavy" : "light",
                                                  import_env_digest()))
                               .substr(0, 16);
    const auto socket = dir / ("fs-" + id + ".sock");
    process_spec sp = private_spec;
    sp.cwd.clear();
    sp.result_channel = false;
    sp.env_set["HOTKERNEL_FORKSERVER_SOCKET"] = socket.string();
    sp.env_set["HOTKERNEL_FORKSERVER_IDLE_S"] = fmt::format("{}", idle_s);
    std::string err;
    auto conn = m_real.connect_kept(sp, socket, dir / ("fs-" + id + ".log"), &err);
    if (!conn) m_stats.kept_note = err;
    return conn;
}

/// Reads the ready line of the server filed under `key`; nullptr (and forking given up)
/// when it cannot fork, dies or is not ready in time.
fork_server* fork_server_runner::await_ready(const fork_server_key& key, const cancel_token& cancel) {
    fork_server& srv = *m_servers.at(key);
    server_connection* connection = srv.connection.get();
    auto fail = [&](const std::string& why) -> fork_server* {
        if (srv.kept && !m_no_kept) {
            // A kept server that went away before it was ready (reinstalled packages, idled
            // out as we came): one private server instead, not fresh processes.
            m_no_kept = true;
            m_stats.kept_note = "a kept one failed: " + why;
            const bool heavy = !srv.light;
            m_servers.erase(key);
            if (!spawn(key, heavy)) return nullptr;
            return await_ready(key, cancel);
        }
        give_up(why);
        m_servers.erase(key);  // destroying it kills its group
        return nullptr;
    };
    const auto t0 = srv.started;
    while (true) {
        auto line = connection->read_line(0.25, cancel);
        if (line && line->from_channel) {
            fork_answer ready = decode_fork_answer(line->text);
            if (ready.what != fork_answer::kind::ready)
                return fail("the fork server sent an unexpected first line: " + tail_text(line->text, 200));
            m_stats.server_info = ready.line;
            if (!ready.forkable)
                return fail("the fork server cannot fork safely: " +
                            (ready.reason.empty() ? std::string("unknown reason") : ready.reason));
            m_stats.server_kept = srv.kept;
            // A kept server this command did not start (a pid of 0: it was listening already, as
            // one `new` started), or that served an earlier connection: its imports were paid then.
            // (One from the MCP session's pool was marked reused when adopted: it may be a server
            // an earlier `new` started that finished its imports just now.)
            m_stats.server_reused = m_stats.server_reused ||
                                 (srv.kept && (ready.line.value("connection", 1) > 1 || connection->pid() == 0));
            m_stats.server_age_s = ready.line.value("age_s", 0.0);
            srv.ready = std::move(ready.line);
            return &srv;
        }
        if (cancel.cancelled()) return nullptr;  // the fresh path sees the cancellation too
        if (!line && !connection->alive())
            return fail("the fork server " + connection->describe_exit() + " before it was ready" +
                        stderr_part(*connection));
        if (seconds_since(t0) > server_start_limit_s)
            return fail(fmt::format("the fork server was not ready after {:.0f} s", server_start_limit_s) +
                        stderr_part(*connection));
    }
}

std::optional<process_result> fork_server_runner::cancel_run(fork_server& srv, std::size_t id, const process_spec& spec) {
    if (!srv.connection->write_line(dump_line(encode_fork_cancel(id)))) return std::nullopt;
    const auto t0 = steady::now();
    const cancel_token uncancelled;  // the call's own token is set: wait on one that is not
    // SIGTERM, the grace, SIGKILL, then up to 2 s draining pipes a stray holds.
    const double limit_s = spec.kill_grace_s + 2.0 + 5.0;
    while (seconds_since(t0) < limit_s) {
        auto line = srv.connection->read_line(0.25, uncancelled);
        if (line && line->from_channel) {
            const fork_answer ans = decode_fork_answer(line->text);
            if (ans.id != id) continue;
            if (ans.what != fork_answer::kind::done) return std::nullopt;
            return decode_fork_done(ans.line, seconds_since(t0));
        }
        if (!line && !srv.connection->alive()) return std::nullopt;
    }
    return std::nullopt;
}

process_result fork_server_runner::forked(fork_server& srv, const process_spec& spec, const cancel_token& cancel) {
    const std::size_t id = m_next_id++;
    // A kept server was started by another process: the run gets this one's environment.
    const std::map<std::string, std::string> env_now = srv.kept ? environment_now() : std::map<std::string, std::string>{};
    process_spec as_forked = spec;  // the server was started -I: the fork is `python <file> ...` of it
    if (is_isolated(spec)) as_forked.argv.erase(as_forked.argv.begin() + 1);
    const json req = encode_fork_request(id, as_forked, key_cwd(spec), srv.kept ? &env_now : nullptr);
    const auto key = key_of(spec);
    auto drop_server = [&] { m_servers.erase(key); };  // destroying it kills its group
    if (!srv.connection->write_line(dump_line(req))) {
        give_up("the fork server " + srv.connection->describe_exit() + stderr_part(*srv.connection));
        drop_server();
        return fresh(spec, cancel, "");
    }
    const auto t0 = steady::now();
    const double limit_s = spec.timeout_s > 0 ? spec.timeout_s + spec.kill_grace_s + answer_slack_s : 7 * 86400.0;
    while (true) {
        auto line = srv.connection->read_line(0.25, cancel);
        if (line && line->from_channel) {
            const fork_answer ans = decode_fork_answer(line->text);
            if (ans.id != id) continue;  // stale or foreign
            if (ans.what == fork_answer::kind::refused) {
                give_up("the fork server refused to fork: " + (ans.reason.empty() ? "no reason given" : ans.reason));
                return fresh(spec, cancel, "");
            }
            if (ans.what != fork_answer::kind::done) continue;
            process_result res = decode_fork_done(ans.line, seconds_since(t0));
            m_stats.last_warm = true;
            m_stats.last_fresh_reason.clear();
            ++m_stats.warm_runs;
            return res;
        }
        if (cancel.cancelled()) {
            // Only this run stops: the server kills its group and answers, and stays warm for
            // the next call. A server that cannot is ended, taking the run with it.
            std::optional<process_result> done = cancel_run(srv, id, spec);
            if (!done) drop_server();
            process_result res = done ? std::move(*done) : process_result{};
            res.cancelled = true;
            res.timed_out = false;
            res.wall_s = seconds_since(t0);
            return res;
        }
        if (!line && !srv.connection->alive()) {
            // Killed during a run (by the run?): what it ran may have escaped with it. The run is
            // repeated as its own process, and the next one gets a new server started from
            // scratch, a private one: a child of this process, so its runs' orphans come back here.
            m_stats.died_during_run.push_back(srv.connection->describe_exit());
            drop_server();
            m_no_kept = true;
            return fresh(spec, cancel, "the fork server died during this run; it was repeated as a fresh process");
        }
        if (seconds_since(t0) > limit_s) {
            // The server did not kill its child in time: kill both, report the timeout.
            drop_server();
            process_result res;
            res.timed_out = true;
            res.wall_s = seconds_since(t0);
            res.stderr_text = "(the fork server did not answer within the run's timeout; both were killed)";
            m_stats.last_warm = true;
            ++m_stats.warm_runs;
            return res;
        }
    }
}

}  // namespace hotkernel
