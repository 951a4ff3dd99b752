// The fork server's wire protocol, written down once. The C++ half is this codec; the Python
// half is python/hotkernel_forkserver.py, whose header points here. Both are tested against
// one recorded transcript (tests/fixtures/fork_protocol/transcript.jsonl: a run and its answer,
// a ready line, a bad request line refused, a ping). The client reads every line through
// decode_fork_answer; the server builds each kind of answer in one function.
//
// One JSON object per line, each way.
//   server -> hotkernel (its private result channel, or the kept server's socket):
//     {"event": "ready", "forkable", "reason", "python", "import_s", "torch", "triton", "light",
//      "gpu_held" (a child of the server keeps the CUDA driver up), "connection", "age_s", ...}
//      once per connection, before any request is read;
//     {"event": "done", "id", "pid", "exit_code" (null when killed), "signal", "timed_out",
//      "exiting" (answered at the close of its pipes, before its exit: closes_before_exit),
//      "wall_s", "stdout_b64", "stderr_b64", "channel_b64" (with result_channel),
//      "stdout_truncated", "stderr_truncated", "cancelled", "strays": ["pid N: command", ...],
//      "server_changed" (what the run changed of the server's scheduling, put back; absent: nothing)}
//      per run;
//     {"event": "refused", "id", "reason"}  when it cannot fork (then hotkernel runs fresh);
//     {"event": "pong", "forkable", "reason"}  for {"op": "ping"}.
//   hotkernel -> server (its stdin, or the socket):
//     {"id", "script", "argv" (argv[1:] of the spec: the script and its args), "env_set",
//      "env_unset", "cwd", "stdin_b64", "result_channel", "result_fd_env", "timeout_s",
//      "kill_grace_s", "max_capture_bytes", "closes_before_exit"} per run, plus "env_full" (the
//      client's whole environment) for a kept server, which another process started;
//     {"op": "cancel", "id"} while run `id` is in flight: its group is killed as at a timeout
//     (SIGTERM, SIGKILL after kill_grace_s) and its "done" says "cancelled"; the server stays
//     for the next run (one for a run answered already is ignored);
//     {"op": "ping"} / {"op": "quit"} (by hand and in tests; hotkernel ends a server by closing
//     its connection or its group).
// Bytes (stdin, stdout, stderr, the channel) travel as standard base64 so that any byte, valid
// UTF-8 or not, comes back exactly.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "process/runner.h"
#include "util/json.h"

namespace hotkernel {

/// The request line for one run of `spec` (`python FILE args...`: argv[0] is the server's own
/// interpreter) in working directory `cwd`; with env_full, the client's whole environment.
json encode_fork_request(std::size_t id, const process_spec& spec, const std::string& cwd,
                         const std::map<std::string, std::string>* env_full = nullptr);

/// The line that cancels run `id` (the server answers it with that run's "done").
json encode_fork_cancel(std::size_t id);

/// What a line from the server is, decoded once: every answer the client reads goes through here.
struct fork_answer {
    enum class kind { unreadable, ready, done, refused, pong, other } what = kind::unreadable;
    std::optional<std::size_t> id;  ///< the run it answers ("done", "refused"; none for a bad request line)
    bool forkable = false;          ///< "ready", "pong": whether the server can fork safely
    std::string reason;             ///< "ready"/"pong": why it cannot; "refused": why it would not
    json line;                      ///< the whole object (a ready line's versions and timings)
};
fork_answer decode_fork_answer(std::string_view text);

/// A "done" answer as the process_result a fresh process would have given; wall_s falls back
/// to `elapsed_s` when the server did not say. An exiting run has exit_code 0 and
/// exit_pending set: how the run ended is judged from its answer (measure's run_failed).
process_result decode_fork_done(const json& answer, double elapsed_s);

/// Standard base64 (RFC 4648, padded). Decoding skips characters outside the alphabet.
std::string base64_encode(std::string_view in);
std::string base64_decode(std::string_view in);

}  // namespace hotkernel
