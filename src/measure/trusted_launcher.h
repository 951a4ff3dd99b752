// The harness: protocol-3 targets run under the binary's own contract
// (python/hotkernel_harness.py + hotkernel_contract.py, embedded), which builds inputs,
// references and the timer before importing the candidate, and reports over a private pipe
// with a per-run nonce passed on stdin. The script's stdout is never read for the result.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/measure.h"
#include "report/findings.h"
#include "util/json.h"

namespace hotkernel {

struct parent_clock_log;

/// True when the script is a protocol-3 target (a literal `TARGET = {` and the contract
/// imported), so the harness can run it; plain bench-contract scripts are false.
bool is_protocol3_target(const std::filesystem::path& script);

/// How the hotkernel_contract.py beside a target compares with the binary's embedded copy.
struct vendored_contract {
    std::string status;            ///< "same", "edited" (same protocol, other bytes), "stale" (other protocol), "missing"
    std::filesystem::path path;
    std::optional<int> protocol;   ///< PROTOCOL = N in the vendored file
    std::string sha256;            ///< of the vendored file ("" when missing)
    /// The warning when status is not "same" (none otherwise).
    [[nodiscard]] std::optional<finding> warning() const;
    [[nodiscard]] json to_json() const;
};
vendored_contract inspect_vendored_contract(const std::filesystem::path& script);

/// The scripts of one bench/verify, hashed at the first check and compared at every later one:
/// a script rewritten between runs (the baseline's file by the candidate) must not be measured
/// as if it were the one the first run measured.
class script_watch {
public:
    explicit script_watch(std::vector<std::filesystem::path> files);
    /// "" while every file has the bytes it had at the first check; else why not, naming each
    /// file that changed (or can no longer be read).
    std::string check();

private:
    std::vector<std::filesystem::path> m_files;
    std::vector<std::string> m_first;  ///< sha256 at the first check, "" for an unreadable file
    bool m_started = false;
};

/// How trusted runs start; both are bench/verify parameters (tools/run_params.h).
struct trust_options {
    bool isolated = true;            ///< the interpreter starts -I (no user site, no PYTHON* variables)
    bool allow_unsandboxed = false;  ///< measure even where the kernel sandbox cannot be applied
};

/// Runs `python -I <embedded>/hotkernel_harness.py --run SCRIPT --role ROLE [--target-from BASELINE]`
/// (without -I when isolated is false).
/// A candidate is measured under the baseline's TARGET (inputs, seed, tolerances) when
/// target_from is given. The result line comes from the private channel only, and only when
/// it is the one message there and carries this run's nonce; anything else is an invalid run.
class trusted_launcher final : public run_launcher {
public:
    /// `scripts`: every script of the bench/verify, watched from the first run on (script_watch).
    explicit trusted_launcher(std::filesystem::path target_from = {}, std::vector<std::filesystem::path> scripts = {},
                              trust_options opts = {});
    [[nodiscard]] std::string name() const override { return "trusted-runner"; }
    [[nodiscard]] std::vector<std::string> command(const run_request& req) const override;
    [[nodiscard]] bool trusted() const override { return true; }
    /// The answer's line is the channel's (line_source::channel), bounded by the parent's clock
    /// (parent_clock.h); a script that changed around the run voids it (run_answer::voided). The
    /// process's stdout is kept as captured, and its tail is also appended to stderr as diagnostics.
    run_answer launch(const run_request& req, process_runner& runner, const cancel_token& cancel) override;

private:
    std::filesystem::path m_target_from;
    script_watch m_watch;
    trust_options m_opts;
};

/// The launcher for these scripts: the harness when every one is a protocol-3 target
/// (scripts[0] is the baseline whose TARGET a candidate is measured under), else make_launcher()
/// (plain bench-contract scripts: their printed timing is self-reported).
std::unique_ptr<run_launcher> make_launcher_for(const std::vector<std::filesystem::path>& scripts,
                                                trust_options opts = {});

/// Adds to a bench/verify result what the trust record needs: trusted, timing ("harness" or
/// "self-reported"), the binary's contract and runner hashes, and each target folder's vendored
/// contract status, with a warning when a vendored copy is stale, edited or missing, and one
/// when hotkernel's Python folder held what hotkernel did not write (python_cache_tampered).
void describe_trust(json& result, json& warnings, const run_launcher& launcher,
                    const std::vector<std::filesystem::path>& scripts);

/// Checks what came over the channel and returns the result line to use, or an "invalid" line
/// saying what was wrong; null when the channel was empty. The lines this side makes in place of
/// the harness's carry "by_parent": true (they say nothing of the script's shapes, timer or
/// protocol, which compare_runs then takes from the runs that do). Exposed for tests.
json accept_channel(const std::string& channel_text, const std::string& nonce);

/// The "invalid" line for a run that died while the harness copied one of the candidate's outputs
/// (the parent's clock saw a copy's "pause" and never its "resume") and was killed by a signal:
/// the copy runs with every signal blocked, so a fault there kills the run instead of running a
/// handler of the candidate's in time the parent takes out of the window. Null otherwise (a
/// run's other deaths are errors, as before). Exposed for tests.
json died_in_copy_line(int term_signal, const parent_clock_log& seen);

/// Makes a CPU result (each workload's, where it has several) invalid when its samples checked
/// fewer calls than the harness always checks (3 held calls and 2 spot checks a sample, or all
/// of them when fewer) or it does not say how many. Exposed for tests.
void check_sampled_calls(json& line);

}  // namespace hotkernel
