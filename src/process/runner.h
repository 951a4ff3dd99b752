// The one interface to child processes. Everything that starts a program (the user's
// interpreter, nvidia-smi, ncu, cuobjdump) goes through a process_runner, so that every
// child has a timeout, dies with its whole process group, and has bounded output.
// posix_runner is the real one; fake_runner replays scripted outcomes for tests.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hotkernel {

/// Shared cancellation flag: MCP's notifications/cancelled sets it, runners poll it.
class cancel_token {
public:
    cancel_token() : m_flag(std::make_shared<std::atomic<bool>>(false)) {}
    void cancel() const { m_flag->store(true); }
    [[nodiscard]] bool cancelled() const { return m_flag->load(); }

private:
    std::shared_ptr<std::atomic<bool>> m_flag;
};

struct process_spec {
    std::vector<std::string> argv;                    ///< argv[0] is looked up on PATH
    std::map<std::string, std::string> env_set;       ///< added to (or replacing in) the inherited env
    std::vector<std::string> env_unset;               ///< removed from the inherited env
    std::filesystem::path cwd;                        ///< empty: the current directory
    double timeout_s = 600;                           ///< wall-clock limit [seconds]; <= 0: none
    std::size_t max_capture_bytes = 8u << 20;         ///< per stream; the tail is kept
    std::string stdin_data;                           ///< written then closed; empty: /dev/null
    /// When true the child gets a private pipe whose write end is passed as an inherited fd;
    /// its number is put in env var `result_fd_env`. What the child writes there comes back
    /// in process_result::channel_text, apart from stdout.
    bool result_channel = false;
    std::string result_fd_env = "HOTKERNEL_RESULT_FD";
    /// Seconds between SIGTERM to the group and SIGKILL.
    double kill_grace_s = 2.0;
    /// The child closes stdout, stderr and its channel once its output is complete, then exits
    /// (the harness, hotkernel_harness.py). A fork server may answer then, while the exit (a CUDA context's
    /// teardown, ~0.1 s) still runs, and reap it before the next fork: process_result::exit_pending.
    bool closes_before_exit = false;
    /// CPU affinity of the child (and so of everything it starts); empty: inherited. A GPU
    /// pool gives each card a slice of the cores (src/scale/pool_runner.h).
    std::vector<int> cpus;
};

struct process_result {
    long pid = 0;              ///< the child's process id (0: never started, or not known)
    int exit_code = -1;        ///< valid when term_signal == 0 and !timed_out
    int term_signal = 0;       ///< signal that ended the child, 0 if it exited
    bool timed_out = false;
    bool cancelled = false;
    bool spawn_failed = false; ///< the program could not be started (not found, not executable)
    std::string spawn_error;
    std::string stdout_text;
    std::string stderr_text;
    std::string channel_text;
    bool stdout_truncated = false;  ///< only the last max_capture_bytes were kept
    bool stderr_truncated = false;
    double wall_s = 0;              ///< from spawn to reaping (to the answer when exit_pending) [seconds]
    /// Answered when the child had closed its pipes (closes_before_exit), before it exited:
    /// exit_code is 0, and how the run ended is judged from its answer (measure's run_failed).
    bool exit_pending = false;
    /// Processes the run left behind that a kept fork server (its subreaper) killed after it,
    /// "pid N: command" each; hotkernel's own sweep (strays.h) reports the rest.
    std::vector<std::string> strays;
    /// What the run changed of the fork server it was forked from (its scheduling, put back since),
    /// "" when nothing: every later fork would have inherited it, so the run is not trusted.
    std::string server_changed;
    /// Where an executor ran it (src/scale/): gpu_uuid, gpu_name, cpus (a GPU pool); partition,
    /// job_id, state, node (Slurm). Empty for a plain run.
    std::map<std::string, std::string> placement;

    [[nodiscard]] bool ok() const { return !spawn_failed && !timed_out && !cancelled && term_signal == 0 && exit_code == 0; }
    /// "exited with status 1", "killed by signal 11 (SIGSEGV)", "timed out after 30 s", …
    [[nodiscard]] std::string describe(double timeout_s = 0) const;
};

/// One line read from a server_connection: from the child's stdout or its result channel.
struct connection_line {
    std::string text;           ///< without the trailing newline
    bool from_channel = false;  ///< true: came from the private result channel, not stdout
};

/// A long-lived child talked to line by line (the warm fork server): requests go to its
/// stdin, answers come back on stdout or on the private result channel (spec.result_channel).
/// Its stderr is kept as a bounded tail for error messages. Destroying the connection kills the
/// child's whole process group and reaps it, so a connection can never leak a process.
class server_connection {
public:
    virtual ~server_connection() = default;
    [[nodiscard]] virtual int pid() const = 0;
    /// Writes `line` plus a newline to the child's stdin. False when the child is gone or
    /// its stdin is closed (never raises SIGPIPE).
    virtual bool write_line(const std::string& line) = 0;
    /// The next complete line from stdout or the result channel (channel lines first when
    /// both have one), waiting at most timeout_s (<= 0: only what is already there).
    /// nullopt on timeout, on cancellation, or when the child has exited and both streams
    /// are drained. While it waits it also collects stderr, so the child never blocks on it.
    virtual std::optional<connection_line> read_line(double timeout_s, const cancel_token& cancel) = 0;
    std::optional<connection_line> read_line(double timeout_s) { return read_line(timeout_s, cancel_token{}); }
    /// True while the child has not exited (reaps it when it has).
    [[nodiscard]] virtual bool alive() = 0;
    /// SIGTERM to the whole group, SIGKILL after spec.kill_grace_s, then reap. Idempotent.
    virtual void terminate() = 0;
    /// The last bytes the child wrote to stderr (bounded by spec.max_capture_bytes).
    [[nodiscard]] virtual std::string stderr_tail() = 0;
    /// "exited with status 1", "killed by signal 9 (SIGKILL)", or "running".
    [[nodiscard]] virtual std::string describe_exit() = 0;
    /// A connection to a kept server this process started: waits up to timeout_s until the server
    /// accepts connections (it listens before its imports), so a caller that leaves at once
    /// (`new`) leaves a server the next hotkernel finds. True once connected; other connections: true.
    virtual bool wait_listening(double timeout_s) {
        (void)timeout_s;
        return true;
    }
};

/// Processes the POSIX runner started and has not reaped yet (the stray sweep spares them).
std::set<int> live_children();

/// This process's environment as a map (what a child inherits before process_spec's changes).
std::map<std::string, std::string> environment_now();

class process_runner {
public:
    virtual ~process_runner() = default;
    /// Runs to completion (or timeout, or cancellation). Never throws for a child's failure;
    /// the result says what happened.
    virtual process_result run(const process_spec& spec, const cancel_token& cancel) = 0;
    process_result run(const process_spec& spec) { return run(spec, cancel_token{}); }

    /// Asynchronous form over the same machinery: submit, poll, cancel, result. By default each
    /// job is run() on a thread of its own; a scheduler that batches (Slurm's job arrays,
    /// src/scale/slurm_runner.h) overrides all four. Called from one thread.
    using job_id = std::size_t;
    virtual job_id submit(process_spec spec);
    [[nodiscard]] virtual bool poll(job_id id);   ///< true once the job has finished
    virtual void cancel(job_id id);
    virtual process_result result(job_id id);     ///< blocks until finished; one call per job

    /// Starts `spec` as a long-lived child over pipes (a server_connection); spec.timeout_s, when
    /// > 0, caps the child's whole life. Returns nullptr with *error set when the program
    /// cannot be started, or when this runner cannot hold server connections (the default: a replaying
    /// test runner); callers then fall back to run().
    virtual std::unique_ptr<server_connection> start(const process_spec& spec, std::string* error);

    /// A server that outlives this process (the kept fork server), talked to over the Unix
    /// socket `socket`: takes the lock file `<socket>.lock` without waiting (another client
    /// holds it: nullptr, *error says so), connects, and when nothing listens starts `spec`
    /// detached (setsid, stdin /dev/null, stdout and stderr to `log`, cwd /) and
    /// returns at once: the connection is made at its first read_line, once the server listens.
    /// Lines it reads come as from_channel. Destroying it closes the connection and
    /// releases the lock; the server lives on. The default: nullptr (a test runner).
    virtual std::unique_ptr<server_connection> connect_kept(const process_spec& spec,
                                                          const std::filesystem::path& socket,
                                                          const std::filesystem::path& log, std::string* error);

private:
    struct job;
    std::map<job_id, std::shared_ptr<job>> m_jobs;
    job_id m_next = 1;
};

/// The real runner: posix_spawn into a new process group, poll() on pipes, kill(-pgid).
class posix_runner final : public process_runner {
public:
    using process_runner::run;
    process_result run(const process_spec& spec, const cancel_token& cancel) override;
    std::unique_ptr<server_connection> start(const process_spec& spec, std::string* error) override;
    std::unique_ptr<server_connection> connect_kept(const process_spec& spec, const std::filesystem::path& socket,
                                                  const std::filesystem::path& log, std::string* error) override;
};

/// Finds an executable on PATH (or checks an explicit path). Empty when not found.
std::filesystem::path find_executable(const std::string& name);

}  // namespace hotkernel
