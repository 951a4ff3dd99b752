// The MCP server over stdio: newline-delimited JSON-RPC, tools/list and tools/call from the
// tool registry. No tool logic lives here. mcp_session is the transport-free core (one line
// in, messages out through a writer) so tests and the fuzzer drive it without pipes.
#pragma once
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "registry/tool.h"
#include "util/json.h"

namespace hotkernel {

class fork_server_pool;  // process/fork_server_runner.h

struct mcp_options {
    std::string python;  ///< --python, passed on to tools that run the user's interpreter
};

/// Serves until `in` reaches EOF (or SIGTERM/SIGINT). Only MCP messages are written to `out`;
/// logs go to stderr. When `out` is std::cout the server writes through a private dup of
/// fd 1 and points fd 1 at stderr, so a stray print from any library cannot corrupt the
/// stream; when `in` is std::cin it reads fd 0 directly. Returns the process exit code.
int run_mcp_server(std::istream& in, std::ostream& out, const mcp_options& opts);

/// Protocol revisions `initialize` accepts, newest first; anything else is answered with the first.
inline const std::vector<std::string>& mcp_legacy_versions() {
    static const std::vector<std::string> v = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
    return v;
}
/// The stateless revision served through per-request _meta and server/discover.
inline constexpr const char* mcp_modern_version = "2026-07-28";
/// The longest line `hotkernel mcp` reads (far above any real request, far below memory
/// trouble); of a longer one it keeps the first mcp_kept_line_start bytes, to find its id.
inline constexpr std::size_t mcp_max_line_bytes = 16u << 20;
inline constexpr std::size_t mcp_kept_line_start = 64u << 10;

/// JSON-RPC / MCP error codes the server emits.
namespace mcp_error {
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
inline constexpr int unsupported_protocol_version = -32022;
}  // namespace mcp_error

/// The model-facing `instructions` sent with initialize and server/discover.
const std::string& mcp_instructions();

struct mcp_session_options {
    std::string python;                     ///< ctx.python for every call
    /// Tools served; empty means all_tools(). Tests pass their own fakes here.
    std::vector<tool_spec> tools;
    /// Runner handed to tools; nullptr means a posix_runner owned by the session.
    process_runner* runner = nullptr;
    /// false: tools/call is refused (-32603 "disabled") before any tool runs; the fuzzer uses
    /// this so arbitrary input can never start a process.
    bool allow_tool_calls = true;
    /// Minimum gap between two progress notifications of one call.
    std::chrono::milliseconds progress_interval{1000};
};

/// One MCP connection. handle_line() is called from one reader thread; each tools/call runs
/// on its own worker thread, so ping and notifications/cancelled are served meanwhile. Every
/// message goes out through `writer`, one whole message per call, serialised by a mutex.
class mcp_session {
public:
    using writer_fn = std::function<void(const json&)>;

    mcp_session(mcp_session_options opts, writer_fn writer);
    ~mcp_session();  ///< shutdown(), then detaches nothing: every worker is joined
    mcp_session(const mcp_session&) = delete;
    mcp_session& operator=(const mcp_session&) = delete;

    /// One received line (without its '\n'; a trailing '\r' is stripped here).
    void handle_line(std::string_view line);

    /// A line longer than the transport's cap (`limit` bytes) was dropped: answers -32600 with
    /// the id found in `start`, the first bytes of that line (mcp_kept_line_start of them).
    void handle_oversized_line(std::string_view start, std::size_t limit);

    /// Cancels every running call (their responses are suppressed) and waits up to `wait`
    /// for the workers. Returns true when all of them finished in time.
    bool shutdown(std::chrono::milliseconds wait);

    /// Waits until no call is running (tests). False on timeout.
    bool wait_idle(std::chrono::milliseconds wait);

    /// Calls currently running.
    [[nodiscard]] std::size_t running_calls() const;
    /// The version the last initialize negotiated; empty before initialize.
    [[nodiscard]] std::string negotiated_version() const;

private:
    struct call_job;

    void handle_message(const json& msg);
    void handle_request(const json& id, const std::string& method, const json& params);
    void handle_notification(const std::string& method, const json& params);
    void start_call(const json& id, const json& params, bool modern);
    void run_call(const std::shared_ptr<call_job>& job, const tool_spec* tool, json args);
    void send_progress(const std::shared_ptr<call_job>& job, double done, double total, const std::string& msg);
    void finish_call(const std::shared_ptr<call_job>& job, const json& message);
    void reap_finished();
    /// The call with this id whose result is not yet out; needs m_jobs_mutex and m_write_mutex.
    std::shared_ptr<call_job> unanswered(const std::string& key) const;

    void send(const json& message);
    void send_result(const json& id, json result, bool modern);
    void send_error(const json& id, int code, const std::string& message, const json& data = nullptr);
    json server_info() const;
    json tools_array() const;
    const tool_spec* find(std::string_view name) const;

    mcp_session_options m_opts;
    writer_fn m_writer;
    std::unique_ptr<process_runner> m_own_runner;
    process_runner* m_runner = nullptr;
    /// An agent calls bench/verify again and again: the fork server of one call (torch
    /// imported, 2-6 s) serves the next; ended when idle for 10 minutes or with the session.
    std::unique_ptr<fork_server_pool> m_fork_servers;

    mutable std::mutex m_write_mutex;   ///< one writer; also guards each job's suppressed/finished
    mutable std::mutex m_jobs_mutex;
    std::condition_variable m_jobs_cv;    ///< signalled when a worker finishes
    /// Running and not yet reaped calls, by arrival. A finished call's id may be reused at once
    /// (its result is out), even before its worker thread has been joined.
    std::map<std::uint64_t, std::shared_ptr<call_job>> m_jobs;
    std::uint64_t m_next_job = 0;
    std::string m_version;
    mutable std::mutex m_version_mutex;
    mutable std::optional<json> m_tools_cache;
};

}  // namespace hotkernel
