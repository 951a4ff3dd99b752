// mcp_session: JSON-RPC dispatch for MCP (legacy initialize lifecycle and the stateless
// 2026-07-28 path), tools/call on worker threads, progress throttling and cancellation.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "mcp/plot_image.h"
#include "mcp/framing.h"
#include "mcp/server.h"
#include "process/fake_runner.h"
#include "process/fork_server_runner.h"
#include "render/render.h"
#include "util/strings.h"
#include "util/schema_version.h"

namespace hotkernel {
namespace {

constexpr const char* meta_version_key = "io.modelcontextprotocol/protocolVersion";
constexpr const char* meta_server_info_key = "io.modelcontextprotocol/serverInfo";
constexpr int max_nesting = 128;
constexpr long long tools_ttl_ms = 3600000;  // the tool list is static for the life of a binary

std::mutex g_log_mutex;

void log_stderr(const std::string& line) {
    std::lock_guard lock(g_log_mutex);
    std::cerr << "hotkernel mcp: " << line << "\n" << std::flush;
}

/// The longest string any parameter of these tools takes (its maxLength): a longer string in
/// a message is refused before the message is parsed.
std::size_t longest_string_taken(const std::vector<tool_spec>& tools) {
    std::size_t most = default_max_length;
    for (const auto& t : tools)
        for (const auto& p : t.params) most = std::max(most, p.max_length.value_or(default_max_length));
    return most;
}

bool valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

/// The id of a line that is not a valid message, where it can be read; null where not.
json recovered_id(std::string_view line) {
    auto id = scan_request_id(line);
    return id ? *id : json();
}

std::string short_text(const json& v) {
    std::string s = dump_line(v);
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}

json text_result(const std::string& text, bool is_error) {
    json r = {{"content", json::array({json{{"type", "text"}, {"text", text}}})}};
    if (is_error) r["isError"] = true;
    return r;
}

}  // namespace

const std::string& mcp_instructions() {
    static const std::string text =
        "hotkernel measures GPU kernels written in Python (PyTorch, Triton, CUDA extensions) in the user's own "
        "interpreter and keeps an honest record. Every result is one JSON object (structuredContent; the text is a "
        "short summary); bench and verify answer lean, with full_record, the file holding the whole record "
        "(detail: \"full\" returns it inline). Read `flags` (the result looks implausible) and `warnings` (read "
        "it with care): {id, message} items, the id stable, the message ending with what to do. The loop:\n"
        "1. gpu_info: which card this is. new: scaffold <name>_baseline.py and <name>_candidate.py from the user's "
        "PyTorch function.\n"
        "2. bench the baseline; verify baseline vs the untouched candidate (expect 'inconclusive': that is the noise "
        "floor).\n"
        "3. Edit only the candidate. Look before guessing: torch_profile (no Nsight needed), profile (nsys/ncu) and "
        "top_kernels, disassemble (SASS/PTX: tensor-core use, spills, load width).\n"
        "4. verify baseline vs candidate, then record the result (lean or full, or its full_record file), win or "
        "lose (never edit LEADERBOARD.md).\n"
        "5. roofline with bench/verify's roofline_inputs gives attainable_ms, the floor: stop when within ~10% of it.\n"
        "Long calls send progress and honour cancellation; pass timeout_s for slow scripts. A failed call returns "
        "isError with text saying what to fix. A string argument is at most 4096 bytes unless its schema gives "
        "another maxLength. Every result carries schema_version and hotkernel_version.";
    return text;
}

struct mcp_session::call_job {
    json id;
    std::string key;
    bool modern = false;
    std::optional<json> progress_token;
    cancel_token cancel;
    // Guarded by m_write_mutex: once either is set, nothing more is written for this call.
    bool suppressed = false;
    bool finished = false;
    bool sent_progress = false;
    double last_progress = 0;
    std::chrono::steady_clock::time_point last_progress_at{};
    // Guarded by m_jobs_mutex.
    std::thread thread;
    bool done = false;
};

mcp_session::mcp_session(mcp_session_options opts, writer_fn writer)
    : m_opts(std::move(opts)), m_writer(std::move(writer)), m_fork_servers(std::make_unique<fork_server_pool>(600)) {
    if (m_opts.runner != nullptr) {
        m_runner = m_opts.runner;
    } else {
        // HOTKERNEL_FAKE_RUNNER: a scripted runner instead of real processes (tests; process/fake_runner.h).
        m_own_runner = fake_runner_from_env();
        if (!m_own_runner) m_own_runner = std::make_unique<posix_runner>();
        m_runner = m_own_runner.get();
    }
}

mcp_session::~mcp_session() {
    shutdown(std::chrono::seconds(10));
    // Whatever is still running has been cancelled; a worker must not outlive `this`.
    std::map<std::uint64_t, std::shared_ptr<call_job>> rest;
    {
        std::lock_guard lock(m_jobs_mutex);
        rest.swap(m_jobs);
    }
    for (auto& [key, job] : rest)
        if (job->thread.joinable()) job->thread.join();
}

std::string mcp_session::negotiated_version() const {
    std::lock_guard lock(m_version_mutex);
    return m_version;
}

std::size_t mcp_session::running_calls() const {
    std::lock_guard lock(m_jobs_mutex);
    std::size_t n = 0;
    for (const auto& [key, job] : m_jobs) n += job->done ? 0 : 1;
    return n;
}

bool mcp_session::wait_idle(std::chrono::milliseconds wait) {
    std::unique_lock lock(m_jobs_mutex);
    const bool idle = m_jobs_cv.wait_for(lock, wait, [&] {
        return std::all_of(m_jobs.begin(), m_jobs.end(), [](const auto& kv) { return kv.second->done; });
    });
    lock.unlock();
    reap_finished();
    return idle;
}

bool mcp_session::shutdown(std::chrono::milliseconds wait) {
    {
        std::lock_guard jobs_lock(m_jobs_mutex);
        std::lock_guard write_lock(m_write_mutex);
        for (auto& [key, job] : m_jobs) {
            job->suppressed = true;  // the client is gone or going; say nothing more
            job->cancel.cancel();
        }
    }
    return wait_idle(wait);
}

std::shared_ptr<mcp_session::call_job> mcp_session::unanswered(const std::string& key) const {
    for (const auto& [seq, job] : m_jobs)
        if (job->key == key && !job->finished && !job->suppressed) return job;
    return nullptr;
}

void mcp_session::reap_finished() {
    std::vector<std::shared_ptr<call_job>> finished;
    {
        std::lock_guard lock(m_jobs_mutex);
        for (auto it = m_jobs.begin(); it != m_jobs.end();) {
            if (it->second->done) {
                finished.push_back(it->second);
                it = m_jobs.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& job : finished)
        if (job->thread.joinable()) job->thread.join();
}

// ---- output ---------------------------------------------------------------------------

void mcp_session::send(const json& message) {
    std::lock_guard lock(m_write_mutex);
    try {
        m_writer(message);
    } catch (const std::exception& e) {
        log_stderr(fmt::format("could not write a message: {}", e.what()));
    }
}

json mcp_session::server_info() const {
    return json{{"name", "hotkernel"}, {"title", "hotkernel GPU kernel toolkit"}, {"version", hotkernel_version()}};
}

void mcp_session::send_result(const json& id, json result, bool modern) {
    if (modern) {
        result["resultType"] = "complete";
        result["_meta"][meta_server_info_key] = server_info();
    }
    send(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void mcp_session::send_error(const json& id, int code, const std::string& message, const json& data) {
    json err = {{"code", code}, {"message", message}};
    if (!data.is_null()) err["data"] = data;
    send(json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}});
}

// ---- input ----------------------------------------------------------------------------

void mcp_session::handle_line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) return;
    reap_finished();
    // nlohmann's parser is iterative but dumping and comparing are recursive, so absurd nesting
    // is refused before parsing; so is a string no parameter takes (parsing it alone would take
    // longer than the whole answer may).
    const line_shape shape = measure_line(line);
    if (shape.depth > max_nesting) {
        send_error(recovered_id(line), mcp_error::invalid_request,
                   fmt::format("Invalid Request: the message nests deeper than {} levels", max_nesting));
        return;
    }
    if (const std::size_t most = longest_string_taken(m_opts.tools.empty() ? all_tools() : m_opts.tools);
        shape.longest_string > most) {
        send_error(recovered_id(line), mcp_error::invalid_params,
                   fmt::format("Invalid params: a string in the message is {} bytes long, more than any parameter "
                               "takes (each says its maxLength: at most {} bytes, most {}); pass large inputs as "
                               "files (a path)",
                               shape.longest_string, most, default_max_length));
        return;
    }
    json msg = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    std::optional<std::string> mended;
    if (msg.is_discarded() && (mended = replace_lone_surrogates(line))) {
        // A JavaScript string cut inside a surrogate pair: served with U+FFFD in its place, as
        // a UTF-8 encoder would write it, rather than refused.
        msg = json::parse(mended->begin(), mended->end(), nullptr, /*allow_exceptions=*/false);
        if (!msg.is_discarded()) log_stderr("a message had a lone UTF-16 surrogate escape; it was read as U+FFFD");
    }
    if (msg.is_discarded()) {
        send_error(recovered_id(line), mcp_error::parse_error,
                   fmt::format("Parse error: {}; send one JSON-RPC message per line, as UTF-8 JSON",
                               parse_failure(mended ? std::string_view(*mended) : line)));
        return;
    }
    try {
        handle_message(msg);
    } catch (const std::exception& e) {
        // A bug in dispatch; answer it as one rather than dying.
        const json id = msg.is_object() && msg.contains("id") && valid_id(msg["id"]) ? msg["id"] : json();
        log_stderr(fmt::format("internal error while handling a message: {}", e.what()));
        send_error(id, mcp_error::internal_error, fmt::format("Internal error: {}", e.what()));
    }
}

void mcp_session::handle_oversized_line(std::string_view start, std::size_t limit) {
    send_error(recovered_id(start), mcp_error::invalid_request,
               fmt::format("Invalid Request: the message is longer than the {} MiB ({} bytes) a line may hold and was "
                           "dropped; pass large inputs as files (a path) rather than inline",
                           limit >> 20, limit));
}

void mcp_session::handle_message(const json& msg) {
    if (msg.is_array()) {
        send_error(nullptr, mcp_error::invalid_request,
                   "Invalid Request: JSON-RPC batches (arrays) are not supported; send one message per line");
        return;
    }
    if (!msg.is_object()) {
        send_error(nullptr, mcp_error::invalid_request, "Invalid Request: a message must be a JSON object");
        return;
    }
    const bool has_id = msg.contains("id");
    const json id = has_id && valid_id(msg["id"]) ? msg["id"] : json();
    if (!msg.contains("method")) {
        if (msg.contains("result") || msg.contains("error")) return;  // a response: this server sends no requests
        send_error(id, mcp_error::invalid_request, "Invalid Request: no \"method\"");
        return;
    }
    if (!has_id) {
        // A notification never gets a response, not even an error.
        if (msg["method"].is_string() && msg.value("jsonrpc", json()) == "2.0")
            handle_notification(msg["method"].get<std::string>(), msg.value("params", json()));
        return;
    }
    if (!valid_id(msg["id"])) {
        send_error(nullptr, mcp_error::invalid_request, "Invalid Request: \"id\" must be a string or an integer");
        return;
    }
    if (msg.value("jsonrpc", json()) != "2.0") {
        send_error(id, mcp_error::invalid_request, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
        return;
    }
    if (!msg["method"].is_string()) {
        send_error(id, mcp_error::invalid_request, "Invalid Request: \"method\" must be a string");
        return;
    }
    handle_request(id, msg["method"].get<std::string>(), msg.value("params", json()));
}

void mcp_session::handle_notification(const std::string& method, const json& params) {
    if (method == "notifications/cancelled") {
        if (!params.is_object() || !params.contains("requestId")) return;
        const std::string key = dump_line(params["requestId"]);
        std::lock_guard jobs_lock(m_jobs_mutex);
        std::lock_guard write_lock(m_write_mutex);
        auto job = unanswered(key);
        if (!job) return;  // unknown or already answered: ignore
        job->suppressed = true;
        job->cancel.cancel();
        log_stderr(fmt::format("call {} cancelled by the client", key));
    }
    // notifications/initialized and any other notification need no action.
}

void mcp_session::handle_request(const json& id, const std::string& method, const json& params) {
    static const std::vector<std::string> known = {"initialize", "ping", "server/discover", "tools/list",
                                                   "tools/call", "logging/setLevel"};
    if (std::find(known.begin(), known.end(), method) == known.end()) {
        send_error(id, mcp_error::method_not_found,
                   fmt::format("Method not found: '{}' (hotkernel serves tools only: tools/list, tools/call)",
                               method.size() > 80 ? method.substr(0, 80) + "..." : method));
        return;
    }
    if (!params.is_null() && !params.is_object()) {
        send_error(id, mcp_error::invalid_params, fmt::format("Invalid params: \"params\" of {} must be an object", method));
        return;
    }

    // The stateless revision: a request that names its version in _meta is served as such.
    bool modern = false;
    if (params.is_object() && params.contains("_meta") && params["_meta"].is_object() &&
        params["_meta"].contains(meta_version_key) && method != "initialize") {
        const json& v = params["_meta"][meta_version_key];
        if (!v.is_string() || v.get<std::string>() != mcp_modern_version) {
            json supported = json::array({mcp_modern_version});
            for (const auto& s : mcp_legacy_versions()) supported.push_back(s);
            send_error(id, mcp_error::unsupported_protocol_version, "Unsupported protocol version",
                       json{{"supported", supported}, {"requested", v.is_string()                  ? json(shorten(v.get<std::string>()))
                                     : dump_line(v).size() <= 200 ? v
                                                                  : json(short_text(v))}});
            return;
        }
        modern = true;
    }

    if (method == "initialize") {
        std::string chosen = mcp_legacy_versions().front();
        if (params.is_object() && params.contains("protocolVersion")) {
            const json& v = params["protocolVersion"];
            if (!v.is_string()) {
                send_error(id, mcp_error::invalid_params, "Invalid params: \"protocolVersion\" must be a string");
                return;
            }
            const auto& ok = mcp_legacy_versions();
            if (std::find(ok.begin(), ok.end(), v.get<std::string>()) != ok.end()) chosen = v.get<std::string>();
        }
        {
            std::lock_guard lock(m_version_mutex);
            m_version = chosen;
        }
        send_result(id,
                    json{{"protocolVersion", chosen},
                         {"capabilities", {{"tools", {{"listChanged", false}}}}},
                         {"serverInfo", server_info()},
                         {"instructions", mcp_instructions()}},
                    false);
    } else if (method == "ping") {
        send_result(id, json::object(), modern);
    } else if (method == "server/discover") {
        json r = {{"supportedVersions", json::array({mcp_modern_version})},
                  {"capabilities", {{"tools", json::object()}}},
                  {"instructions", mcp_instructions()},
                  {"ttlMs", tools_ttl_ms},
                  {"cacheScope", "public"}};
        send_result(id, std::move(r), true);
    } else if (method == "tools/list") {
        if (params.is_object() && params.contains("cursor") && !params["cursor"].is_null()) {
            // Every tool comes in one page (no nextCursor is ever sent), so no cursor is one of ours.
            send_error(id, mcp_error::invalid_params,
                       fmt::format("Invalid params: unknown cursor {}; tools/list returns every tool in one page, "
                                   "so call it without a cursor",
                                   short_text(params["cursor"])));
            return;
        }
        json r = {{"tools", tools_array()}};
        if (modern) {
            r["ttlMs"] = tools_ttl_ms;
            r["cacheScope"] = "public";
        }
        send_result(id, std::move(r), modern);
    } else if (method == "logging/setLevel") {
        if (modern) {  // removed in 2026-07-28
            send_error(id, mcp_error::method_not_found, "Method not found: logging/setLevel (removed in 2026-07-28)");
            return;
        }
        static const std::vector<std::string> levels = {"debug",    "info",  "notice",    "warning",
                                                        "error",    "critical", "alert", "emergency"};
        const json level = params.is_object() ? params.value("level", json()) : json();
        if (!level.is_string() || std::find(levels.begin(), levels.end(), level.get<std::string>()) == levels.end()) {
            send_error(id, mcp_error::invalid_params,
                       fmt::format("Invalid params: level must be one of {}", fmt::join(levels, ", ")));
            return;
        }
        send_result(id, json::object(), false);  // accepted; hotkernel logs to stderr only
    } else {  // tools/call
        start_call(id, params, modern);
    }
}

// ---- tools ----------------------------------------------------------------------------

json mcp_session::tools_array() const {
    if (!m_tools_cache) {
        json arr = json::array();
        for (const auto& t : m_opts.tools.empty() ? all_tools() : m_opts.tools) arr.push_back(tool_listing(t));
        m_tools_cache = std::move(arr);
    }
    return *m_tools_cache;
}

const tool_spec* mcp_session::find(std::string_view name) const {
    for (const auto& t : m_opts.tools.empty() ? all_tools() : m_opts.tools)
        if (t.name == name) return &t;
    return nullptr;
}

void mcp_session::start_call(const json& id, const json& params, bool modern) {
    if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
        send_error(id, mcp_error::invalid_params, "Invalid params: tools/call needs {\"name\": <tool name>, \"arguments\": {...}}");
        return;
    }
    const std::string name = params["name"].get<std::string>();
    json args = params.contains("arguments") ? params["arguments"] : json::object();
    if (args.is_null()) args = json::object();
    if (!args.is_object()) {
        send_error(id, mcp_error::invalid_params,
                   fmt::format("Invalid params: \"arguments\" of tools/call must be an object, got {}", short_text(args)));
        return;
    }
    const tool_spec* tool = find(name);
    if (tool == nullptr) {
        std::vector<std::string> names;
        for (const auto& t : m_opts.tools.empty() ? all_tools() : m_opts.tools) names.push_back(t.name);
        const auto close = closest_matches(name, names);
        const std::string shown = name.size() > 80 ? name.substr(0, 80) + "..." : name;
        send_error(id, mcp_error::invalid_params,
                   close.empty() ? fmt::format("Unknown tool: {} (tools/list shows the {} tools)", shown, names.size())
                                 : fmt::format("Unknown tool: {} (did you mean '{}'?)", shown, close.front()),
                   json{{"available", names}});
        return;
    }
    if (!m_opts.allow_tool_calls) {
        // Still validate, so the fuzzer exercises the argument checks, but never run a handler.
        try {
            validate_args(*tool, args, front_end::mcp);
            send_error(id, mcp_error::internal_error, "tools/call is disabled in this session");
        } catch (const tool_error& e) {
            send_result(id, text_result(e.what(), true), modern);
        }
        return;
    }

    auto job = std::make_shared<call_job>();
    job->id = id;
    job->key = dump_line(id);
    job->modern = modern;
    if (params.contains("_meta") && params["_meta"].is_object() && params["_meta"].contains("progressToken")) {
        const json& tok = params["_meta"]["progressToken"];
        if (valid_id(tok)) job->progress_token = tok;  // echoed verbatim, same JSON type
    }

    std::lock_guard lock(m_jobs_mutex);
    bool in_use = false;
    {
        std::lock_guard write_lock(m_write_mutex);
        in_use = unanswered(job->key) != nullptr;
    }
    if (in_use) {
        send_error(id, mcp_error::invalid_request,
                   fmt::format("Invalid Request: id {} is already in use by a running call", short_text(id)));
        return;
    }
    m_jobs[m_next_job++] = job;
    // Assigned under m_jobs_mutex: the worker marks itself done under the same lock, so a
    // reaper never sees a finished job whose thread object is not yet set.
    job->thread = std::thread([this, job, tool, args = std::move(args)]() mutable { run_call(job, tool, std::move(args)); });
}

void mcp_session::run_call(const std::shared_ptr<call_job>& job, const tool_spec* tool, json args) {
    tool_context ctx;
    ctx.runner = m_runner;
    ctx.fork_servers = m_fork_servers.get();
    ctx.python = m_opts.python;
    ctx.cancel = job->cancel;
    ctx.progress = [this, job](double done, double total, const std::string& msg) { send_progress(job, done, total, msg); };
    ctx.log = [name = tool->name](const std::string& line) { log_stderr(name + ": " + line); };
    ctx.words = front_end::mcp;

    json message = {{"jsonrpc", "2.0"}, {"id", job->id}};
    auto result_of = [&](json r) {
        if (job->modern) {
            r["resultType"] = "complete";
            r["_meta"][meta_server_info_key] = server_info();
        }
        message["result"] = std::move(r);
    };
    auto internal = [&](const std::string& what) {
        log_stderr(fmt::format("internal error in tool {}: {}", tool->name, what));
        message["error"] = {{"code", mcp_error::internal_error},
                            {"message", fmt::format("Internal error in tool '{}': {} (this is a bug in hotkernel)",
                                                    tool->name, what)}};
    };
    try {
        json r = call_tool(*tool, args, ctx);
        if (!r.is_object()) {
            internal(fmt::format("the tool returned {} instead of a JSON object", r.type_name()));
        } else {
            // The text block is a short summary, not the JSON again: structuredContent is the result.
            json out = text_result(render_words(tool->summarize ? tool->summarize(r) : render_summary(r), ctx.words),
                                   false);
            out["structuredContent"] = std::move(r);
            add_plot_image(out);
            result_of(std::move(out));
        }
    } catch (const tool_error& e) {  // also usage_error: the model can fix its call
        result_of(text_result(e.what(), true));
    } catch (const std::exception& e) {
        internal(e.what());
    } catch (...) {
        internal("unknown exception");
    }
    finish_call(job, message);

    std::lock_guard lock(m_jobs_mutex);
    job->done = true;
    m_jobs_cv.notify_all();
}

void mcp_session::send_progress(const std::shared_ptr<call_job>& job, double done, double total, const std::string& msg) {
    if (!job->progress_token || !std::isfinite(done)) return;
    // A terminal progress == total right before the result races the response in clients
    // (typescript-sdk#2580); the response itself says the call is complete.
    if (std::isfinite(total) && total > 0 && done >= total) return;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(m_write_mutex);
    if (job->suppressed || job->finished) return;
    if (job->sent_progress && (done <= job->last_progress || now - job->last_progress_at < m_opts.progress_interval))
        return;
    json p = {{"progressToken", *job->progress_token}, {"progress", done}};
    if (std::isfinite(total) && total > 0) p["total"] = total;
    if (!msg.empty()) p["message"] = msg;
    try {
        m_writer(json{{"jsonrpc", "2.0"}, {"method", "notifications/progress"}, {"params", std::move(p)}});
    } catch (const std::exception& e) {
        log_stderr(fmt::format("could not write progress: {}", e.what()));
    }
    job->sent_progress = true;
    job->last_progress = done;
    job->last_progress_at = now;
}

void mcp_session::finish_call(const std::shared_ptr<call_job>& job, const json& message) {
    std::lock_guard lock(m_write_mutex);
    if (!job->suppressed) {
        try {
            m_writer(message);
        } catch (const std::exception& e) {
            log_stderr(fmt::format("could not write a result: {}", e.what()));
        }
    }
    job->finished = true;
}

}  // namespace hotkernel
