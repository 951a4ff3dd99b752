// The measuring parent's clock: a bound on a trusted run's reported times that nothing in the
// candidate's process can move. The harness (python/hotkernel_harness.py, whose other half is
// python/hotkernel_release.py) asks this process to release each timed sample; the release
// carries a fresh secret the sample's inputs are then mixed with, so no work of the sample can
// start before it, and the sample's answer arriving here ends it, so no work can hide after it.
// Before the candidate is imported the harness also times empty samples (everything a sample
// does but its calls), which give the fixed cost of one. After the run, a result whose sample
// times add up to less than the parent saw, minus that fixed cost and a margin, is invalid.
//
// Wire (one text line per message, over a Unix SOCK_SEQPACKET socket the harness connects to at
// its start; the socket's path is in the private stdin line and is unlinked once the harness is
// connected). A window ends when the kernel took the harness's "done" (its SO_TIMESTAMPNS stamp),
// not when this thread woke to read it: on a VM an idle vCPU can take milliseconds to wake, and
// that wait is neither the candidate's time nor a wait the scheduler counts (run_delay). The
// runner spins for "go" for the same reason.
//   runner -> parent:  "hello 1"                     once, first
//                      "ready empty N" | "ready gap N" | "ready timed CALLS"   a sample's start
//                                                    (an empty sample runs the sample's loop over
//                                                    N empty calls: N = 0 is the fixed cost)
//                      "done C US [M]"               its end: C outputs were copied as soon as their
//                                                    calls returned (spot copies), which took US
//                                                    microseconds of the window on the harness's clock;
//                                                    M of them marked (below), as many as it paused
//                      "pause" ... "resume"          around a spot copy's own bytes (a pipeline of C
//                                                    calls, written from it), inside a window: the
//                                                    parent's stamps of the two say what the copy
//                                                    took, instead of the harness's word for it
//                      "note gap_busy_ms X"          what the gap probe's GPU work took (CUPTI)
//                      "note copy_steps_ms X"        what a CPU copy's Python steps around its pipeline
//                                                    are taken out as (said before the import)
//                      "import"                      the candidate is imported next: from here
//                                                    on only "ready timed", "pause", "resume",
//                                                    "done ..." and "end"
//                      "end"                         the last message
//   parent -> runner:  "go HEX"                      the release, with 16 hex digits of secret
// Anything else, or a message out of turn, is a protocol error: the run is invalid.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"

namespace hotkernel {

/// What the parent saw of one run: the windows between each release and its answer.
struct parent_clock_log {
    bool connected = false;
    bool ended = false;              ///< the harness said "end"
    bool imported = false;           ///< the harness said "import" (the candidate was loaded next)
    std::string error;               ///< the first protocol error ("" when none)
    struct empty_window {
        double ms;                   ///< release to answer, less the time either side waited for a CPU
        long calls;                  ///< empty calls in it (0: the fixed cost alone)
        long copies = 0;             ///< spot copies the harness took in it ("done C US")
        double copy_ms = 0;          ///< the time it says they took
        long pauses = 0;             ///< copies whose pipeline it marked ("pause" ... "resume")
        double paused_ms = 0;        ///< their time on this process's stamps
    };
    std::vector<empty_window> empty; ///< empty samples, before the candidate was imported
    double gap_window_ms = -1;       ///< the gap probe's window, the median of its samples (-1: none)
    long gap_nodes = 0;
    double gap_busy_ms = -1;         ///< its GPU work on CUPTI's records, the median (-1: not said)
    std::vector<double> gap_windows, gap_busies;  ///< each gap sample's, as said
    struct window {
        double ms;                   ///< as empty_window::ms
        long calls;
        long copies = 0;
        double copy_ms = 0;
        long pauses = 0;
        double paused_ms = 0;
    };
    /// A CPU copy's Python steps around its pipeline, as the harness takes them out of a window
    /// (its note before the import; -1: none said, and the copies' time is the harness's word).
    double copy_steps_ms = -1;
    double waited_ms = 0;            ///< runnable-but-waiting time taken out of the timed windows, in all
    std::size_t stamped = 0;         ///< windows ended by the kernel's stamp of "done" (others: by the read)
    std::vector<window> timed;       ///< timed samples, in order
    /// The connection ended between a copy's "pause" and its "resume": the harness never came
    /// back from copying an output (a run killed there faulted on reading the candidate's output).
    bool ended_in_copy = false;
};

/// The margins of the bound: a run is invalid when the median over its samples of
/// (window - its spot copies - fixed cost - reported time of the sample) exceeds abs_ms + frac * the median
/// window (cupti_abs_ms and cupti_frac on CUPTI), plus twice the spread of the fixed cost (its upper quartile over its median, the
/// first three empty samples left out), plus
/// what a timer does not count by design: the eager loop's cost between calls
/// (the empty samples' cost a call) and, on CUPTI, the gaps between a graph's nodes. Per-call
/// CUDA events on the eager path (timer cuda_events) are not bounded: the host launches each
/// call and may take longer than the GPU's work, so the window says nothing of it. (A result
/// slower than the window needs no bound: the candidate gains nothing by it.)
struct clock_bound_limits {
    double abs_ms = 0.4;  ///< what a sample's own steps (snapshots, a collection, cold caches, a busy machine) may add
    double frac = 0.05;
    /// ... on CUPTI, where the harness primes CUPTI before each release (one launch of its own:
    /// the first after CUPTI's activity is enabled costs ~0.65 ms of host time) and a window holds
    /// the release, the mix's launch, the graph's launch, a sync and the answer: honest samples of
    /// an H100 left 0-0.10 ms unexplained (bench/runs/2026-12-06-gpu-primed-clock).
    double cupti_abs_ms = 0.05;
    double cupti_frac = 0.02;
    /// CUPTI reads kernels' own time: the gaps between a graph's nodes are allowed, this many times
    /// what the gap probe's tiny kernels left between them a node (a real kernel's are longer: a
    /// 7.8 us gelu's ~2.5 us where the probe's were 1.0-1.7).
    double gap_factor = 2.5;
    double max_ops_per_call = 16;    ///< ... at most this many GPU operations a call
    /// A share of the CPU waits taken out of a window is allowed on top: a loaded machine's
    /// waits are read when a thread runs again, which blurs the window's ends.
    double wait_share = 0.1;
    /// Spot copies: a copy of an output taken as soon as its call returned, and its digest, run
    /// cold after the call evicted the harness's code and data (on the 2-core CPU machine 20-300 us
    /// for a 64 KiB output whose warm copy takes 25). Their time, as the harness's clock read it,
    /// is taken out of the window, up to copy_abs_ms + copy_factor times a copy's time in the empty
    /// samples for each copy, and for at most max_copies a sample (the spot copies are drawn at
    /// 2 a sample on average: an honest sample copies more than 8 with odds of ~1 in 4000, and the
    /// bound reads the median sample).
    double copy_abs_ms = 0.3;
    double copy_factor = 8;
    long max_copies = 8;
    /// ... and never more than this share of the window: the copies are said on the harness's
    /// word, and a sample is its calls first (honest CPU samples' copies were at most ~40% of one).
    /// Where the harness marks its copies (copy_steps_ms said), what a timed sample's copies took
    /// is also at most the parent's own stamps of their pauses plus copy_steps_ms each: a red team
    /// rewrote the harness's float sum of its copies' time in place (numpy over its address) up
    /// to the cap, and hid 2.5-3.2x.
    double copy_max_share = 0.5;
};

/// The bound, decided from the parent's log and the run's result line. Pure.
struct clock_bound {
    bool applies = false;            ///< a result with samples to bound (status ok)
    bool held = true;
    std::string reason;              ///< why it did not hold
    std::size_t samples = 0;
    std::size_t stamped = 0;         ///< samples whose window ended at the kernel's stamp of "done"
    bool lower = true;               ///< the bound applies to this timer (not to cuda_events)
    double fixed_ms = 0, loop_ms_per_call = 0, window_ms = 0, reported_ms = 0, excess_ms = 0, allowance_ms = 0,
           gap_ms_per_op = 0, waited_ms = 0, fixed_spread_ms = 0;
    double copy_ms = 0;              ///< the spot copies' time taken out of a sample's window (median)
    double copy_cap_ms = 0;          ///< the most one copy may take out
    bool overshoot = false;          ///< did not hold because its windows outran its times (not a broken protocol)
    [[nodiscard]] json to_json() const;
};
clock_bound check_clock_bound(const parent_clock_log& log, const json& line, const clock_bound_limits& lim = {});

/// Folds the bound into a result line: `parent_clock` (the figures) when the bound applies, and status
/// "invalid" with the bound's reason when it did not hold; `parent_clock.only_cause` when the
/// windows' overshoot alone voided a result that was ok (parent_clock_only_cause). Pure.
void apply_clock_bound(json& line, const clock_bound& bound);

/// check_clock_bound and apply_clock_bound on a result line: on a workloads line (workloads.h)
/// each workload against its own run of the parent's windows (the workloads' samples come in
/// order), then the run's status restated from theirs. Pure.
void apply_clock_bounds(json& line, const parent_clock_log& log, const clock_bound_limits& lim = {});

/// True when a result line was voided by the parent's clock alone: its windows outran its
/// reported times (at each workload that is not ok, and nothing else made it so) on a run that
/// was otherwise ok. A busy host can do that to an honest run; verify runs such a run again once.
bool parent_clock_only_cause(const json& line);

/// The parent's half, serving one run: listens on a fresh socket in a private folder and
/// answers the harness on a thread of its own, timing each window from the release to the
/// kernel's stamp of the answer (the steady clock's read of it where there is no stamp). A window
/// leaves out the time the harness's thread and this one spent runnable but waiting for a CPU
/// (/proc schedstat's run_delay), so that a loaded machine does not read as missing time: the
/// runner's time inside its timed calls counts such waits, its time between them does not.
class parent_clock {
public:
    /// Throws tool_error when it cannot make its folder or socket.
    parent_clock();
    ~parent_clock();
    parent_clock(const parent_clock&) = delete;
    parent_clock& operator=(const parent_clock&) = delete;

    /// The socket's path, for the harness's private stdin line.
    [[nodiscard]] const std::string& address() const;
    /// Stops serving (call once the run has answered) and returns what was seen.
    parent_clock_log finish();

private:
    struct impl;
    std::unique_ptr<impl> m;
};

}  // namespace hotkernel
