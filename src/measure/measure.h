// THE one place that launches a measured run (bench and verify both come through here).
//
// A run is launched by a run_launcher: fresh_process_launcher starts `python script.py
// args...` as its own process and reads its result line from stdout; trusted_launcher
// (trusted_launcher.h) runs the target under the binary's own harness and reads the line from
// a private channel; warm_launcher (warm_launcher.h) wraps either and forks each run from a
// warm interpreter. Each returns a run_answer: how the process ended, and the result line
// with the stream it came from. run_once turns that into a run_record or a tool_error.
//
// A run that crashes, hangs, is cancelled or prints no valid result line throws tool_error
// naming the run ("candidate run 3 of 10"), how it ended and the tail of its stderr; the
// caller never averages over a failed run.
#pragma once
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parsers/run_line.h"
#include "process/runner.h"
#include "registry/tool.h"
#include "util/json.h"

namespace hotkernel {

struct run_request {
    std::filesystem::path script;
    std::vector<std::string> args;  ///< passed to the script after its path
    std::string role = "bench";     ///< "bench", "baseline" or "candidate"
    std::size_t index = 1;          ///< 1-based, within its role and phase
    std::size_t total = 1;          ///< runs of this role in this phase
    bool warmup = false;            ///< a warm-up run (its numbers are recorded but not used)
    std::string python;             ///< the resolved interpreter
    double timeout_s = 120;         ///< per-run wall-clock limit [s]
    std::map<std::string, std::string> env;  ///< extra environment for the child
    bool profile_check = false;     ///< harness: also profile the timed graph (bench's profile_check)
};

/// "candidate run 3 of 10", "warm-up baseline run 1 of 2", "run 4 of 10" (bench).
std::string run_label(const run_request& req);

/// Where a run's result line came from.
enum class line_source {
    stdout_text,  ///< the script's own stdout (self-reported; the last line with "ms" counts)
    channel,      ///< the trusted harness's private channel, nonce checked (trusted_launcher.h)
};

std::string_view to_string(line_source s);

/// What a run's line says of it (protocol 3's "status"); `unstated` for a line with none (a plain
/// bench-contract script) or with a word outside these.
enum class run_status { unstated, ok, incorrect, invalid, error };
std::string_view to_string(run_status s);
run_status parse_run_status(const json& status);

/// What a launcher got back from one run, typed, on its way up: how the process ended, its
/// result parsed once (where from), and what hotkernel itself found that voids the run whatever
/// its line says (a script changed between runs, the fork server died during it). run_once folds
/// those in, once, before anything judges the run.
struct run_answer {
    process_result process;                    ///< how it ended; its stdout/stderr as captured
    run_line line;                             ///< the result, parsed and checked (or what was wrong)
    line_source source = line_source::stdout_text;
    std::vector<std::string> voided;           ///< why hotkernel holds the run invalid (empty: it does not)
};

/// One finished, valid run.
struct run_record {
    std::string role;
    std::size_t index = 0;
    bool warmup = false;
    double ms = 0;
    std::optional<bool> ok;
    json line;                      ///< the parsed result line
    double wall_s = 0;              ///< the process's own wall time, spawn to reap [s]
    int exit_code = 0;
    std::string stderr_tail;        ///< last lines of stderr (warnings the script printed)
    std::vector<std::string> command;
    std::string launcher;
    bool had_invalid_utf8 = false;
    int result_lines = 1;           ///< stdout lines that carried "ms" (the last one counts)
    std::vector<std::string> strays;  ///< processes it left running, killed after it (process/strays.h)
    std::string ended_after_result;   ///< how the harness's process ended, when not cleanly, after its result came
    std::vector<std::string> shm_removed;  ///< SysV shared memory it left, removed after it (process/strays.h)
    double lock_wait_s = 0;           ///< waited for another hotkernel run on this GPU [s]
    std::string lock_note;            ///< why the run went without that lock ("" when it had it)
    std::size_t sequence = 0;         ///< 1-based launch order within its bench/verify (0: unknown)
    line_source source = line_source::stdout_text;  ///< where its line came from
    /// The run's status and reason: the line's (the trusted harness's, or a vendored contract's
    /// on stdout), unless hotkernel voided the run (run_answer::voided): then `invalid`, with
    /// hotkernel's reason. The flags the contract raised. compare_runs folds them in.
    run_status status = run_status::unstated;
    std::string reason;
    json contract_flags = json::array();
    json sandbox;  ///< the harness's `sandbox` record: what the kernel enforced (null: none reported)
    /// Set on a run that replaced one the parent's clock alone voided (pairs.h): that run's reason.
    std::string rerun_of;

    json to_json() const;
};

/// The machine-wide lock that makes measured runs on one GPU set take turns:
/// <tmp>/hotkernel-measure-gpu-<CUDA_VISIBLE_DEVICES or "all">.lock.
std::filesystem::path measure_lock_path();

/// What bench and verify say about their runs beyond the times: the per-sample clock check
/// (result["sample_clocks"]; its reference is max_sm_clock_mhz, or the fastest reading when that
/// is NaN) and warnings for throttled samples, processes a run left behind (killed), and runs
/// that waited for, or went without, the GPU lock; and the sandbox in force (describe_sandbox, sandbox.h).
void report_run_findings(const std::vector<const run_record*>& runs, double max_sm_clock_mhz, json& result,
                         json& warnings);

/// How a run is started. Implementations must go through the given process_runner so every
/// child has a timeout and dies with its process group.
class run_launcher {
public:
    virtual ~run_launcher() = default;
    /// Short name for the record ("fresh-process").
    [[nodiscard]] virtual std::string name() const = 0;
    /// The exact command line the run uses, for the record and for error messages.
    [[nodiscard]] virtual std::vector<std::string> command(const run_request& req) const = 0;
    /// True when the harness, not the script, owns the clock and the result channel (the
    /// harness); false means the script's printed ms is self-reported.
    [[nodiscard]] virtual bool trusted() const { return false; }
    /// Starts the run and waits for it.
    virtual run_answer launch(const run_request& req, process_runner& runner, const cancel_token& cancel) = 0;
};

/// `python script.py args...` as a fresh process, in the current directory. The child gets
/// HOTKERNEL_ROLE, HOTKERNEL_RUN_INDEX (1-based) and HOTKERNEL_WARMUP (0/1) in its env.
class fresh_process_launcher final : public run_launcher {
public:
    [[nodiscard]] std::string name() const override { return "fresh-process"; }
    [[nodiscard]] std::vector<std::string> command(const run_request& req) const override;
    run_answer launch(const run_request& req, process_runner& runner, const cancel_token& cancel) override;
};

/// The launcher bench/verify use. One switch point for the harness / fork server.
std::unique_ptr<run_launcher> make_launcher();

/// Launches one run and checks it. Throws tool_error (naming the run, how it ended, its
/// stderr tail) when it did not produce a valid result line. How the process ended is judged by
/// one rule (run_failed): a result from the trusted harness's channel stands on its own (the
/// harness exits after writing it, and a fork server may answer before that exit); a script's
/// own stdout line from a run that exited non-zero counts only when it says ok=false (a script
/// may exit 1 after a failed check: that run is kept as a failed check, not an error).
run_record run_once(const run_request& req, process_runner& runner, const cancel_token& cancel,
                    run_launcher& launcher);

/// The one rule for how a run ended (see run_once): true when the run failed. Pure.
bool run_failed(const run_answer& answer);

/// Shell-quoted command line, for the record ("python3 'my script.py' --x 1").
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace hotkernel
