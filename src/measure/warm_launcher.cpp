// The warm launcher: measured runs forked from a warm fork server, with an honest fallback.
#include "measure/warm_launcher.h"

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "process/fork_protocol.h"
#include "python/interpreter.h"
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

/// Empty when a fork can run `spec` exactly as a new process would; else why not.
std::string ineligible(const process_spec& spec) {
    namespace fs = std::filesystem;
    if (spec.argv.size() < 2 || spec.argv[1].empty() || spec.argv[1][0] == '-')
        return "the run is not `python <file> ...` (interpreter options cannot be applied to a forked child)";
    std::error_code ec;
    const fs::path script = fs::path(spec.argv[1]).is_absolute() || spec.cwd.empty() ? fs::path(spec.argv[1])
                                                                                      : spec.cwd / spec.argv[1];
    if (!fs::is_regular_file(script, ec)) return "'" + spec.argv[1] + "' is not a regular file";
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

/// Seconds a kept fork server waits for the next connection before it ends
/// (HOTKERNEL_KEEP_WARM_S, default 600, at most a week); 0 when off: set to 0, or not a number
/// (then *bad, when given, says so).
double keep_warm_s(std::string* bad = nullptr) {
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

/// The environment a kept server must have been started with to serve this process: what the
/// interpreter, torch, triton and CUDA read when they load (the rest is sent with each run).
std::string import_env_digest() {
    std::string all;  // environment_now() is sorted by name
    for (const auto& [k, v] : environment_now()) {
        const std::string s = k + "=" + v;
        for (const char* p : {"PYTHON", "LD_", "CUDA", "TORCH", "PYTORCH", "TRITON", "NCCL", "OMP_", "MKL_",
                              "VIRTUAL_ENV=", "CONDA_PREFIX=", "PATH=", "HOTKERNEL_FORKSERVER_PRELOAD="})
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

}  // namespace

struct warm_launcher::server {
    std::unique_ptr<process_session> session;
    json ready;
    bool light = false;
    bool kept = false;  ///< a kept server (over a socket): it outlives this process
    steady::time_point started = steady::now();
};

struct warm_launcher::state {
    bool enabled = true;
    std::string disabled_reason;   ///< set once forking is given up for this launcher
    std::string last_fresh_reason; ///< why the last run (only) went fresh
    bool last_warm = false;
    std::size_t warm_runs = 0, fresh_runs = 0;
    std::size_t next_id = 1;
    std::size_t server_starts = 0;
    json server_info;              ///< the ready line of the last server started
    bool server_kept = false;      ///< the last server is a kept one (outlives this process)
    bool no_kept = false;          ///< a kept server failed this launcher once: private ones from now
    std::string kept_note;         ///< why the last server is not a kept one ("" when it is, or off)
    bool server_reused = false;    ///< the last server came from the pool (an earlier call)
    double server_age_s = 0;       ///< how long before this call it had been started
    std::map<std::pair<std::string, std::string>, std::unique_ptr<server>> servers;
    fork_server_pool* pool = nullptr;  ///< where servers go between calls (an MCP session's); null: ended
};

/// One caller at a time owns a server; a server idle past the limit is ended.
struct fork_server_pool::impl {
    using key_type = std::pair<std::string, std::string>;
    struct entry {
        key_type key;
        std::unique_ptr<warm_launcher::server> srv;
        steady::time_point since;
    };
    std::mutex m;
    double idle_limit_s = 600;
    std::vector<entry> idle;

    void expire_locked() {
        std::erase_if(idle, [&](const entry& e) {
            return seconds_since(e.since) > idle_limit_s || !e.srv->session->alive();
        });
    }
};

fork_server_pool::fork_server_pool(double idle_limit_s) : m(std::make_unique<impl>()) {
    m->idle_limit_s = idle_limit_s;
}

fork_server_pool::~fork_server_pool() = default;  // destroying a server's session kills its group

std::unique_ptr<warm_launcher::server> fork_server_pool::take(const std::pair<std::string, std::string>& key,
                                                              bool heavy) {
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

void fork_server_pool::give(const std::pair<std::string, std::string>& key, std::unique_ptr<warm_launcher::server> srv) {
    std::lock_guard lock(m->m);
    if (!srv || !srv->session->alive()) return;
    m->idle.push_back({key, std::move(srv), steady::now()});
    m->expire_locked();
}

namespace {

/// The process_runner handed to the wrapped launcher: serves `python <file>` specs from a
/// fork server and passes everything else (and every fallback) to the real runner.
class forking_runner final : public process_runner {
public:
    forking_runner(warm_launcher::state& st, process_runner& real) : m_st(st), m_real(real) {}
    using process_runner::run;

    process_result run(const process_spec& spec, const cancel_token& cancel) override {
        if (!m_st.enabled || !m_st.disabled_reason.empty()) return fresh(spec, cancel, "");
        if (std::string why = ineligible(spec); !why.empty()) return fresh(spec, cancel, why);
        warm_launcher::server* srv = get_server(spec, cancel);
        if (!srv) return fresh(spec, cancel, "");
        return forked(*srv, spec, cancel);
    }

    std::unique_ptr<process_session> start(const process_spec& spec, std::string* error) override {
        return m_real.start(spec, error);
    }

private:
    process_result fresh(const process_spec& spec, const cancel_token& cancel, const std::string& why) {
        m_st.last_warm = false;
        m_st.last_fresh_reason = why;
        ++m_st.fresh_runs;
        return m_real.run(spec, cancel);
    }

    static std::string script_path(const process_spec& spec) {
        std::filesystem::path p(spec.argv[1]);
        return (p.is_absolute() || spec.cwd.empty() ? p : spec.cwd / p).string();
    }

    static std::string key_cwd(const process_spec& spec) {
        std::error_code ec;
        return spec.cwd.empty() ? std::filesystem::current_path(ec).string() : spec.cwd.string();
    }

    void give_up(const std::string& why) {
        if (m_st.disabled_reason.empty()) m_st.disabled_reason = why;
    }

    static std::string stderr_part(process_session& s) {
        std::string t = trim(tail_text(s.stderr_tail(), 1500));
        return t.empty() ? "" : "; its stderr: " + t;
    }

public:
    /// Starts the server a run of `script` in `python` will need, without waiting for it to be
    /// ready: its imports overlap whatever the caller does before the first run.
    void prestart(const std::string& python, const std::filesystem::path& script) {
        if (!m_st.enabled || !m_st.disabled_reason.empty()) return;
        process_spec spec;  // what the first run's spec will say: `python script`, no cwd of its own
        spec.argv = {python, script.string()};
        const auto key = std::make_pair(python, key_cwd(spec));
        const bool heavy = wants_heavy_imports(script_path(spec));
        if (m_st.servers.contains(key)) return;
        if (auto kept = m_st.pool ? m_st.pool->take(key, heavy) : nullptr) {
            adopt(key, std::move(kept));
            return;
        }
        spawn(key, heavy);
    }

    warm_launcher::server* get_server(const process_spec& spec, const cancel_token& cancel) {
        const auto key = std::make_pair(spec.argv[0], key_cwd(spec));
        const bool heavy = wants_heavy_imports(script_path(spec));
        if (auto it = m_st.servers.find(key); it != m_st.servers.end()) {
            warm_launcher::server& srv = *it->second;
            // A light server serving a script that needs torch: replace it by one that imports it.
            if (!(srv.light && heavy)) {
                if (srv.ready.is_null()) return await_ready(key, cancel);  // prestarted: ready, or why it died
                if (srv.session->alive()) return &srv;
            }
            m_st.servers.erase(it);  // died between runs (or too light): start another (bounded below)
        }
        if (auto kept = m_st.pool ? m_st.pool->take(key, heavy) : nullptr) return adopt(key, std::move(kept));
        if (!spawn(key, heavy)) return nullptr;
        return await_ready(key, cancel);
    }

private:
    warm_launcher::server* adopt(const std::pair<std::string, std::string>& key,
                                 std::unique_ptr<warm_launcher::server> kept) {
        m_st.server_info = kept->ready;
        m_st.server_reused = true;
        m_st.server_age_s = seconds_since(kept->started);
        auto* raw = kept.get();
        m_st.servers[key] = std::move(kept);
        return raw;
    }

    /// Starts a server (its ready line not yet read) and files it under `key`; false when it
    /// could not be started (forking is then given up, with the reason).
    bool spawn(const std::pair<std::string, std::string>& key, bool heavy) {
        if (m_st.server_starts >= 3) {
            give_up("the fork server had to be started 3 times; it keeps dying");
            return false;
        }
        ++m_st.server_starts;
        m_st.server_reused = false;
        process_spec sp;
        try {
            sp.argv = {key.first, (embedded_python_dir() / "hotkernel_forkserver.py").string()};
        } catch (const std::exception& ex) {
            give_up(std::string("the fork server's file could not be written: ") + ex.what());
            return false;
        }
        sp.cwd = key.second;
        sp.timeout_s = 0;  // lives as long as this launcher; every read from it has a limit
        sp.result_channel = true;
        sp.max_capture_bytes = 256u << 10;
        sp.kill_grace_s = 2.0;
        if (!heavy) sp.env_set["HOTKERNEL_FORKSERVER_LIGHT"] = "1";
        auto srv = std::make_unique<warm_launcher::server>();
        srv->light = !heavy;
        std::string err;
        if (auto kept = connect_kept(sp, heavy)) {
            srv->session = std::move(kept);
            srv->kept = true;
        } else if (auto session = m_real.start(sp, &err)) {
            srv->session = std::move(session);
        } else {
            give_up("the fork server could not be started: " + err);
            return false;
        }
        m_st.servers[key] = std::move(srv);
        return true;
    }

    /// A session with the kept server for this interpreter and import environment (started
    /// detached when none runs); nullptr, with state.kept_note saying why, when kept servers
    /// are off (HOTKERNEL_KEEP_WARM_S=0, the MCP server's own pool) or one cannot be used.
    std::unique_ptr<process_session> connect_kept(const process_spec& private_spec, bool heavy) {
        std::string bad;
        const double idle_s = keep_warm_s(&bad);
        if (!bad.empty()) m_st.kept_note = bad;
        if (idle_s <= 0 || m_st.pool != nullptr || m_st.no_kept) return nullptr;
        m_st.kept_note.clear();
        std::string why;
        const auto dir = kept_dir(&why);
        if (dir.empty()) {
            m_st.kept_note = "no private folder for a kept fork server: " + why;
            return nullptr;
        }
        std::error_code ec;
        const std::string id = sha256_hex(fmt::format("{}\n{}\n{}\n{}\n{}", private_spec.argv[0],
                                                      std::filesystem::canonical(private_spec.argv[0], ec).string(),
                                                      private_spec.argv[1], heavy ? "heavy" : "light",
                                                      import_env_digest()))
                                   .substr(0, 16);
        const auto socket = dir / ("fs-" + id + ".sock");
        process_spec sp = private_spec;
        sp.cwd.clear();
        sp.result_channel = false;
        sp.env_set["HOTKERNEL_FORKSERVER_SOCKET"] = socket.string();
        sp.env_set["HOTKERNEL_FORKSERVER_IDLE_S"] = fmt::format("{}", idle_s);
        std::string err;
        auto session = m_real.connect_kept(sp, socket, dir / ("fs-" + id + ".log"), &err);
        if (!session) m_st.kept_note = err;
        return session;
    }

    /// Reads the ready line of the server filed under `key`; nullptr (and forking given up)
    /// when it cannot fork, dies or is not ready in time.
    warm_launcher::server* await_ready(const std::pair<std::string, std::string>& key, const cancel_token& cancel) {
        warm_launcher::server& srv = *m_st.servers.at(key);
        process_session* session = srv.session.get();
        auto fail = [&](const std::string& why) -> warm_launcher::server* {
            if (srv.kept && !m_st.no_kept) {
                // A kept server that went away before it was ready (reinstalled packages, idled
                // out as we came): one private server instead, not fresh processes.
                m_st.no_kept = true;
                m_st.kept_note = "a kept one failed: " + why;
                const bool heavy = !srv.light;
                m_st.servers.erase(key);
                if (!spawn(key, heavy)) return nullptr;
                return await_ready(key, cancel);
            }
            give_up(why);
            m_st.servers.erase(key);  // destroying it kills its group
            return nullptr;
        };
        const auto t0 = srv.started;
        while (true) {
            auto line = session->read_line(0.25, cancel);
            if (line && line->from_channel) {
                json ready = json::parse(line->text, nullptr, false);
                if (!ready.is_object() || ready.value("event", "") != "ready")
                    return fail("the fork server sent an unexpected first line: " + tail_text(line->text, 200));
                if (!ready.value("forkable", false)) {
                    m_st.server_info = ready;
                    return fail("the fork server cannot fork safely: " +
                                ready.value("reason", std::string("unknown reason")));
                }
                m_st.server_info = ready;
                m_st.server_kept = srv.kept;
                // A kept server this command did not start (a pid of 0: it was listening already, as
                // one `new` started), or that served an earlier connection: its imports were paid then.
                // (One from the MCP session's pool was marked reused when adopted: it may be a server
                // an earlier `new` started that finished its imports just now.)
                m_st.server_reused = m_st.server_reused ||
                                     (srv.kept && (ready.value("connection", 1) > 1 || session->pid() == 0));
                m_st.server_age_s = ready.value("age_s", 0.0);
                srv.ready = std::move(ready);
                return &srv;
            }
            if (cancel.cancelled()) return nullptr;  // the fresh path sees the cancellation too
            if (!line && !session->alive())
                return fail("the fork server " + session->describe_exit() + " before it was ready" +
                            stderr_part(*session));
            if (seconds_since(t0) > server_start_limit_s)
                return fail(fmt::format("the fork server was not ready after {:.0f} s", server_start_limit_s) +
                            stderr_part(*session));
        }
    }

    process_result forked(warm_launcher::server& srv, const process_spec& spec, const cancel_token& cancel) {
        const std::size_t id = m_st.next_id++;
        // A kept server was started by another process: the run gets this one's environment.
        const std::map<std::string, std::string> env_now = srv.kept ? environment_now() : std::map<std::string, std::string>{};
        const json req = encode_fork_request(id, spec, key_cwd(spec), srv.kept ? &env_now : nullptr);
        const auto key = std::make_pair(spec.argv[0], key_cwd(spec));
        auto drop_server = [&] { m_st.servers.erase(key); };  // destroying it kills its group
        if (!srv.session->write_line(dump_line(req))) {
            give_up("the fork server " + srv.session->describe_exit() + stderr_part(*srv.session));
            drop_server();
            return fresh(spec, cancel, "");
        }
        const auto t0 = steady::now();
        const double limit_s = spec.timeout_s > 0 ? spec.timeout_s + spec.kill_grace_s + answer_slack_s : 7 * 86400.0;
        while (true) {
            auto line = srv.session->read_line(0.25, cancel);
            if (line && line->from_channel) {
                json ans = json::parse(line->text, nullptr, false);
                if (!ans.is_object() || ans.value("id", json()) != json(id)) continue;  // stale or foreign
                const std::string ev = ans.value("event", "");
                if (ev == "refused") {
                    give_up("the fork server refused to fork: " + ans.value("reason", std::string("no reason given")));
                    return fresh(spec, cancel, "");
                }
                if (ev != "done") continue;
                process_result res = decode_fork_done(ans, seconds_since(t0));
                m_st.last_warm = true;
                m_st.last_fresh_reason.clear();
                ++m_st.warm_runs;
                return res;
            }
            if (cancel.cancelled()) {
                drop_server();  // takes the run in flight with it
                process_result res;
                res.cancelled = true;
                res.wall_s = seconds_since(t0);
                return res;
            }
            if (!line && !srv.session->alive()) {
                give_up("the fork server " + srv.session->describe_exit() + " during a run" + stderr_part(*srv.session));
                drop_server();
                return fresh(spec, cancel, "");  // the run is repeated as its own process
            }
            if (seconds_since(t0) > limit_s) {
                // The server did not kill its child in time: kill both, report the timeout.
                drop_server();
                process_result res;
                res.timed_out = true;
                res.wall_s = seconds_since(t0);
                res.stderr_text = "(the fork server did not answer within the run's timeout; both were killed)";
                m_st.last_warm = true;
                ++m_st.warm_runs;
                return res;
            }
        }
    }

    warm_launcher::state& m_st;
    process_runner& m_real;
};

}  // namespace

warm_launcher::warm_launcher(std::unique_ptr<run_launcher> inner, bool enabled, fork_server_pool* pool)
    : m_inner(std::move(inner)), m_state(std::make_shared<state>()) {
    m_state->enabled = enabled;
    m_state->pool = pool;
}

warm_launcher::~warm_launcher() {
    // Kept for the next call when there is a pool (an MCP session's); otherwise ended here.
    if (m_state->pool != nullptr)
        for (auto& [key, srv] : m_state->servers)
            if (!srv->kept) m_state->pool->give(key, std::move(srv));  // a kept one is there for the next caller anyway
}

std::string warm_launcher::name() const {
    const auto& st = *m_state;
    const bool no_runs = st.warm_runs == 0 && st.fresh_runs == 0;
    const bool warm = st.enabled && (no_runs ? st.disabled_reason.empty() : st.last_warm);
    if (!warm) return m_inner->name();
    const std::string inner = m_inner->name();
    return inner == "fresh-process" ? "warm-fork" : inner + "+warm-fork";
}

std::string warm_launcher::reason() const {
    const auto& st = *m_state;
    if (!st.enabled) return "warm=false (--no-warm) was given: each run is a fresh process";
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
        s = fmt::format("each run was forked from a fork server kept from an earlier call of this session (started "
                        "{:.0f} s before; it imported {} once, in {:.1f} s, and nothing this time)",
                        st.server_age_s, what, info.value("import_s", 0.0));
    if (!st.server_kept && !st.kept_note.empty()) s += "; not a kept server: " + st.kept_note;
    if (st.fresh_runs > 0) s += fmt::format("; {} run(s) were fresh processes", st.fresh_runs);
    return s;
}

json warm_launcher::describe() const {
    json j{{"launcher", name()},
           {"launcher_reason", reason()},
           {"warm_runs", m_state->warm_runs},
           {"fresh_runs", m_state->fresh_runs}};
    if (!m_state->server_info.is_null()) {
        const json& i = m_state->server_info;
        j["fork_server"] = json{{"python", i.value("python", "")},
                                {"import_s", i.value("import_s", 0.0)},
                                {"torch", i.value("torch", json())},
                                {"triton", i.value("triton", json())},
                                {"reused", m_state->server_reused},
                                {"kept", m_state->server_kept}};
        if (m_state->server_reused) j["fork_server"]["age_s"] = m_state->server_age_s;
    }
    return j;
}

void warm_launcher::prestart(const std::string& python, const std::filesystem::path& script, process_runner& runner) {
    forking_runner(*m_state, runner).prestart(python, script);
}

json warm_launcher::prewarm(const std::string& python, const std::filesystem::path& script, process_runner& runner) {
    auto& st = *m_state;
    auto no = [](const std::string& why) { return json{{"started", false}, {"reason", why}}; };
    if (!st.enabled) return no("warm=false was given");
    std::string bad;
    const bool pooled = st.pool != nullptr;
    if (!pooled && keep_warm_s(&bad) <= 0)
        return no(bad.empty() ? "HOTKERNEL_KEEP_WARM_S=0: no fork server outlives a command, so each bench and "
                                "verify starts its own"
                              : bad);
    forking_runner(st, runner).prestart(python, script);
    // prestart files at most one server (a launcher made for this call has no other).
    if (st.servers.empty())
        return no(!st.disabled_reason.empty() ? st.disabled_reason
                                              : (st.kept_note.empty() ? "the fork server was not started" : st.kept_note));
    auto it = st.servers.begin();
    if (it->second->kept) {
        // Connected before this command leaves: a hotkernel right after it then finds the
        // server listening (while it imports) instead of starting a second one.
        if (!it->second->session->wait_listening(10.0)) {
            std::string why = "the kept fork server did not start listening: " +
                              tail_text(trim(it->second->session->stderr_tail()), 300);
            st.servers.erase(it);
            return no(why);
        }
        // pid 0: it was listening already (an earlier command's), so nothing was started.
        const bool running = it->second->session->pid() == 0;
        return json{{"started", !running}, {"kept", true}, {"already_running", running},
                    {"note", fmt::format("{} for the next bench/verify until idle for {:.0f} s "
                                         "(HOTKERNEL_KEEP_WARM_S)",
                                         running ? "one kept from an earlier command is there" : "kept",
                                         keep_warm_s())}};
    }
    if (pooled)
        return json{{"started", true}, {"pooled", true},
                    {"note", "kept in this MCP session for the next bench/verify of this interpreter"}};
    // A private server would end with this command: not worth its imports.
    std::string why = st.kept_note.empty() ? "no kept fork server could be had" : st.kept_note;
    st.servers.erase(it);
    return no(why);
}

run_answer warm_launcher::launch(const run_request& req, process_runner& runner, const cancel_token& cancel) {
    forking_runner fr(*m_state, runner);
    return m_inner->launch(req, fr, cancel);
}

std::unique_ptr<warm_launcher> make_warm_launcher(std::unique_ptr<run_launcher> inner, bool warm,
                                                  fork_server_pool* pool) {
    return std::make_unique<warm_launcher>(std::move(inner), warm, pool);
}

}  // namespace hotkernel
