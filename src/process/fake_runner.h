// A process_runner that starts nothing: it answers each spec from a script of outcomes, so
// the verdict, A/A, stop-early, progress, cancellation and record paths of bench and verify
// run in milliseconds, on any machine, with the same numbers every time. Unit tests build one
// from JSON; the binary uses one instead of posix_runner when HOTKERNEL_FAKE_RUNNER names a
// script file (a test hook, not a product feature: it is not in --help or the docs).
//
// The script (JSON):
//   {"seed": 0,
//    "programs": {"nvidia-smi": {"spawn_failed": true}},       // by argv[0]'s file name
//    "scripts": {"b.py": {                                     // by the Python file a run runs
//        "ms": {"mean": 1.0, "sd": 0.02},                      // or a number; drawn per run
//        "line": {"ok": true, "seed": 0},                      // merged into the result line
//        "stdout_before": "warming up ...\n",
//        "runs": {"3": {...}, "warmup 1": {...}, "2": [{...}, {...}]}}}}  // per-run overrides (a list: a rerun takes the next)
// An outcome (a script entry, a program entry or a per-run override) may also say
// "exit_code", "signal", "stderr", "stdout" (replaces all of stdout), "wall_s", "sleep_s"
// (waits that long, cancellable, before answering), "hang": true (waits until the spec's
// timeout: timed out, or cancelled), "spawn_failed": true; for a trusted run "clock": "absent"
// (it never connects to the parent's clock) and "clock_window_ms" (each released sample lasts
// that long: with a smaller reported time, the parent's bound breaks).
//
// A plain run (`python FILE args`) answers on stdout; its role, index and warm-up come from
// HOTKERNEL_ROLE, HOTKERNEL_RUN_INDEX and HOTKERNEL_WARMUP in the spec. A trusted run
// (`python hotkernel_harness.py --run FILE --role R ...` with a result channel) answers as
// the harness does: the line, with the nonce read from the spec's stdin, over the channel
// (protocol 3, status "ok", or "incorrect" when ok is false, unless the line says otherwise;
// exit status 0 unless "exit_code" says otherwise; samples_ms [ms] and calls_per_sample 1 unless
// the line says them; it plays the parent's clock as the harness does); its index counts that file's runs in that
// role (warm-up included: the harness is not told which is which).
// Each draw is seeded by (seed, file, role, index, warm-up), so a run's time does not depend
// on what ran before it. Specs it has no entry for fail to start ("not found").
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "process/runner.h"
#include "util/json.h"

namespace hotkernel {

class fake_runner final : public process_runner {
public:
    /// Throws tool_error when the script is not an object of the shape above.
    explicit fake_runner(json script);
    /// Reads the script from a file; throws tool_error naming it when it cannot.
    static std::unique_ptr<fake_runner> from_file(const std::filesystem::path& path);

    using process_runner::run;
    process_result run(const process_spec& spec, const cancel_token& cancel) override;

    /// Every spec it was asked to run, in order.
    [[nodiscard]] std::vector<process_spec> calls() const;

private:
    json m_script;
    mutable std::mutex m_mutex;
    std::vector<process_spec> m_calls;
    std::map<std::string, std::size_t> m_counts;  ///< trusted runs per "file\nrole"; launches per "file\nrole\n#index"
};

/// The fake named by HOTKERNEL_FAKE_RUNNER (a script file), or nullptr when it is unset.
std::unique_ptr<process_runner> fake_runner_from_env();

}  // namespace hotkernel
