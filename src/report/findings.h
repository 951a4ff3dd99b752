// The catalogue of findings: every warning and flag a result can carry, each with a stable id.
//
// A finding is what a tool noticed beside its answer. Its kind says how to read the result:
// a warning means the result stands but needs care; a flag means it looks implausible. Results
// carry them as `warnings` and `flags`, arrays of {"id": ..., "message": ...} (a runner flag also
// has "role"). Tests and agents match the id; the message gives the values and ends with what to
// do. Every id is declared once, in the table in findings.cpp, and every message is written there.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "util/json.h"

namespace hotkernel {

enum class finding_kind { warning, flag };

/// Every finding, in the order docs/warnings.md lists them. Ids are stable: rename none, retire
/// none silently; a new finding gets a new id.
enum class finding_id {
    // verify: the comparison (measure/compare.cpp)
    baseline_unchecked,
    output_unchecked,
    rotate_k_differs,
    inputs_not_rotated,
    zero_spread,
    high_variance,
    inconclusive_within_threshold,
    speedup_over_10x,
    reported_time_exceeds_wall,
    under_roofline_floor,
    under_measured_floor,
    effect_under_process_spread,
    spread_not_benched,
    parent_clock_rerun,
    gpu_throttled_after,
    // measured runs: bench and verify (measure/*, tools/bench.cpp, tools/verify.cpp)
    self_reported_timing,
    contract_mismatch,
    vendored_contract_missing,
    vendored_contract_differs,
    invalid_utf8,
    sample_clocks_throttled,
    stray_processes,
    stray_shared_memory,
    python_cache_tampered,
    fork_server_restarted,
    measured_without_lock,
    lock_waited,
    script_check_failed,
    single_run,
    slow_first_run,
    runner_declared_invalid,
    description_changed,
    profile_check_unreported,
    profile_check_untrusted,
    measured_unsandboxed,
    full_record_unwritten,
    // the harness's flags (python/hotkernel_harness.py, `_flag`)
    persisting_l2,
    work_outside_timed_region,
    signal_handler,
    // new
    rotate_empty,
    no_flops,
    file_replaced,
    cpu_only_python,
    // gpu_info, roofline, calibrate
    gpu_not_in_spec_table,
    compute_cap_from_spec_table,
    compute_cap_unknown,
    mig_enabled,
    calibration_unreadable,
    measured_above_peak,
    int8_peaks_in_tops,
    gpu_uuid_mismatch,
    calibration_note,
    // profile, top_kernels, torch_profile
    profiled_command_failed,
    profiler_error,
    clocks_not_locked,
    no_kernel_data,
    no_speed_of_light,
    kernel_rows_merged,
    no_gpu_kernels_recorded,
    no_kernel_ran,
    runner_exit_after_result,
    profile_mode_unavailable,
    // disassemble
    listing_truncated,
    several_cache_entries,
    fat_binary_arch,
    local_memory_used,
    narrow_global_loads,
    disassembler_warning,
    // record
    results_skipped,
    // verify and bench spread over GPUs or Slurm (src/scale/)
    spread_jobs_failed,
    gpu_leases_waited,
    no_gpu_to_spread,
};

struct finding_info {
    finding_id id;
    std::string_view name;     ///< the stable snake_case id results carry
    finding_kind kind;
    std::string_view meaning;  ///< what it says about the result (docs)
    std::string_view action;   ///< what to do about it (docs)
};

/// The whole catalogue, in finding_id order.
std::span<const finding_info> finding_catalogue();
const finding_info& info(finding_id id);
/// nullptr when no finding has this id.
const finding_info* find_finding(std::string_view name);

/// One finding as a result carries it.
struct finding {
    finding_id id;
    std::string message;
};
/// {"id": ..., "message": ...}; lets `warnings.push_back(some_builder(...))` take a finding.
void to_json(json& j, const finding& f);

/// The id an older result file's bare-string warning reads as. No result this binary makes
/// carries it (every site builds a finding); it is not in the catalogue.
inline constexpr std::string_view legacy_string_id = "unclassified";

/// Rewrites `warnings` and `flags` of a result into {id, message} objects. Results recorded
/// before findings had ids are read too: a bare string gets legacy_string_id, a
/// {"flag": ..., "message": ...} gets "id" for "flag". A runner flag (one with "role") is kept
/// once per id and role, as every run reports it again.
void normalize_findings(json& result);
/// The message of a warning or flag in either shape (a string, {id|flag, message}).
std::string finding_message(const json& item);
/// The id of a warning or flag in either shape (legacy_string_id for a string).
std::string finding_id_of(const json& item);

/// JSON Schema of a `warnings` or `flags` array, for tools' output schemas.
json findings_schema(finding_kind kind);

/// docs/warnings.md, generated from the catalogue.
std::string findings_markdown();

// Message builders: one per id, taking the values the message shows. Each message ends with
// what to do. The builders of one tool sit together; names are the ids.
namespace findings {

// verify's comparison
finding baseline_unchecked();
/// `scripts`: 1 for bench (one script), 2 for verify (neither script).
finding output_unchecked(int scripts);
finding rotate_k_differs(std::string_view baseline_k, std::string_view candidate_k);
finding inputs_not_rotated();
finding zero_spread();
/// `side` "baseline" or "candidate" for verify; empty for bench's runs.
finding high_variance(double cv_pct, std::string_view side = {});
finding inconclusive_within_threshold(double diff_ms, double diff_pct, double threshold_ms);
finding speedup_over_10x(double speedup);
finding under_measured_floor(std::string_view who, double min_ms, double floor_ms, double mem_gbs, std::string_view workload);
finding effect_under_process_spread(double effect_pct, double floor_pct, std::string_view source);
finding spread_not_benched(std::string_view baseline, std::string_view source);
finding reported_time_exceeds_wall(std::string_view run, double ms, double iters, double wall_s);
finding under_roofline_floor(double candidate_min_ms, std::string_view gpu, double floor_ms, double flops,
                             double bytes, std::string_view dtype);
finding gpu_throttled_after();
/// `run`: e.g. "candidate run 2"; `why`: the voided run's reason.
finding parent_clock_rerun(std::string_view run, std::string_view why);

// measured runs
/// `scripts`: 1 for bench, 2 for verify.
finding self_reported_timing(int protocol, int scripts);
finding contract_mismatch(std::string_view script_sha12, std::string_view binary_sha12);
finding vendored_contract_missing(std::string_view path, std::string_view binary_sha12);
/// `what`: "protocol 2 vs 3" or "edited: same protocol, other bytes"; `binary_copy`: this binary's contract.
finding vendored_contract_differs(std::string_view vendored_sha12, std::string_view binary_sha12,
                                  std::string_view what, std::string_view binary_copy, std::string_view path);
/// `run`: the run's index (bench), or none (verify: see runs[].line).
finding invalid_utf8(std::optional<std::size_t> run);
finding sample_clocks_throttled(std::size_t throttled, std::size_t samples, double threshold_mhz,
                                double reference_mhz, double min_mhz, std::string_view runs);
finding stray_processes(std::string_view run, std::size_t count, std::string_view commands);
finding stray_shared_memory(std::string_view run, std::size_t count, std::string_view segments);
/// `what`: the files found in hotkernel's Python cache folder that it did not write, or that differed.
finding python_cache_tampered(std::string_view dir, std::string_view what);
/// `why`: how the server ended; `run`: the run it died during ("candidate run 2 of 10").
finding fork_server_restarted(std::string_view run, std::string_view why);
finding measured_without_lock(std::string_view note);
finding lock_waited(std::size_t runs, double total_s, std::string_view lock_path);
finding script_check_failed(std::string_view runs);
finding single_run();
finding slow_first_run(double first_ms, double rest_mean_ms);
finding runner_declared_invalid(std::size_t run, std::string_view reason);
/// A flag the harness raised (python/hotkernel_harness.py `_flag`): its message, then what
/// the catalogue says to do. nullopt for an id the catalogue has no flag of.
std::optional<finding> runner_flag(std::string_view id, std::string_view message);
finding description_changed(std::string_view what);
finding profile_check_unreported();
finding profile_check_untrusted();
finding measured_unsandboxed(std::string_view what);
/// `why`: why neither the runs folder beside the script nor the cache could take the file.
finding full_record_unwritten(std::string_view why);

// new
finding rotate_empty();
finding no_flops();
finding file_replaced(std::string_view path, bool forced);
finding cpu_only_python(std::string_view python);

// gpu_info, roofline, calibrate
finding gpu_not_in_spec_table(std::string_view gpu, std::string_view reason);
finding compute_cap_from_spec_table(std::string_view gpu, std::string_view compute_capability);
finding compute_cap_unknown(std::string_view gpu);
finding mig_enabled(std::string_view gpu);
finding calibration_unreadable(std::string_view error);
finding measured_above_peak(double measured_gbs, double peak_gbs);
finding int8_peaks_in_tops();
finding gpu_uuid_mismatch(std::string_view torch_uuid, int index, std::string_view smi_uuid);
finding calibration_note(std::string_view note);

// profile, top_kernels, torch_profile
/// `outcome`: how the command ended (process_result::describe()); `partial`: kernels before it are shown.
finding profiled_command_failed(std::string_view outcome, bool partial);
finding profiler_error(std::string_view tool, std::string_view error);
finding clocks_not_locked();
/// `under_nsys`: profile ran the command under nsys; false: top_kernels read a finished report.
finding no_kernel_data(bool under_nsys);
finding no_speed_of_light();
finding kernel_rows_merged(int kernels);
finding no_gpu_kernels_recorded();
finding no_kernel_ran();
/// `see`: where the run's output is in the result ("script_output_tail", "runs[].stderr_tail").
finding runner_exit_after_result(std::string_view outcome, std::string_view see);
/// `script`: the target script profiled; `contract`: the contract beside it, older than profile mode.
finding profile_mode_unavailable(std::string_view script, std::string_view contract);

// disassemble
finding listing_truncated(std::size_t shown, std::size_t total);
finding several_cache_entries(std::size_t count, std::string_view kernel, std::string_view newest,
                              std::string_view dir);
finding fat_binary_arch(std::size_t archs, std::string_view shown);
finding local_memory_used(std::size_t ldl, std::size_t stl);
finding narrow_global_loads(int bits);
finding disassembler_warning(std::string_view line);

// record
finding results_skipped(std::size_t files, std::string_view dir);

// verify and bench spread over GPUs or Slurm
/// `which`: "b.py on h200 (TIMEOUT), c.py (exited with status 1)".
finding spread_jobs_failed(std::size_t failed, std::size_t jobs, std::string_view which);
finding gpu_leases_waited(std::size_t jobs, double total_s, std::string_view lease_dir);
/// `why`: what nvidia-smi said, or that it lists none.
finding no_gpu_to_spread(std::size_t jobs, std::string_view why);

}  // namespace findings
}  // namespace hotkernel
