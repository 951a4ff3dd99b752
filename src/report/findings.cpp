// The catalogue's table, its messages and the shape results carry them in.
#include "report/findings.h"

#include <array>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "util/strings.h"
#include "util/words.h"

namespace hotkernel {
namespace {

using enum finding_id;
constexpr finding_kind W = finding_kind::warning;
constexpr finding_kind F = finding_kind::flag;

// One row per id, in finding_id order (checked below at compile time).
constexpr std::array catalogue_rows = std::to_array<finding_info>({
    {baseline_unchecked, "baseline_unchecked", W,
     "the candidate prints \"ok\" but the baseline does not, so only the candidate's output is checked",
     "print \"ok\" from the baseline's check too"},
    {output_unchecked, "output_unchecked", W, "no script prints \"ok\": nothing checks that the output is right",
     "scaffold the target with `new`, or print {\"ms\": ..., \"ok\": ...}"},
    {rotate_k_differs, "rotate_k_differs", W,
     "baseline and candidate rotate through different numbers of input sets and one has fewer than its caches "
     "need (cache_k), so their inputs sit in different cache states",
     "give both scripts the same rotate"},
    {inputs_not_rotated, "inputs_not_rotated", W,
     "no input rotates: every timed call of a sample reads the same tensors, so an output kept from an earlier call "
     "and handed back (as a copy) reads as speed, which the verdict cannot tell from a faster kernel",
     "rotate an input in the TARGET (rotate) unless speed on inputs repeated call after call is the point"},
    {zero_spread, "zero_spread", W,
     "every run of both scripts printed the same time: the rule's threshold is 0 and any difference is called",
     "check that the timer has enough resolution"},
    {high_variance, "high_variance", W, "the runs' coefficient of variation is over 5%: the mean is imprecise",
     "check for other work on the GPU, clock throttling, or a warm-up that is too short"},
    {inconclusive_within_threshold, "inconclusive_within_threshold", W,
     "the difference is within the rule's threshold, so the verdict is inconclusive",
     "run more pairs (n) to resolve smaller differences"},
    {speedup_over_10x, "speedup_over_10x", F, "the candidate is over 10x faster than the baseline",
     "check that the candidate does the same work (side streams, cached results, skipped calls)"},
    {reported_time_exceeds_wall, "reported_time_exceeds_wall", F,
     "a run reported more time (ms x iters) than its process lived: the reported time is false",
     "check how the script times and counts its calls"},
    {under_roofline_floor, "under_roofline_floor", F,
     "the candidate's fastest run beats the spec-sheet roofline floor: it cannot have done that work from DRAM",
     "check for L2 reuse or skipped work, and that roofline_inputs count the kernel's flops and bytes"},
    {under_measured_floor, "under_measured_floor", F,
     "a fastest run beats the floor of the bandwidth calibrate measured on this card: its inputs stayed in L2, or "
     "work was not done",
     "check for L2 reuse or skipped work; recalibrate (hotkernel calibrate) if the card or its clocks changed"},
    {effect_under_process_spread, "effect_under_process_spread", W,
     "the verdict is decisive but its effect is smaller than the spread between processes of the same code",
     "treat it as noise unless it repeats: verify again, or with more pairs (--no-stop-early --n 20)"},
    {spread_not_benched, "spread_not_benched", W,
     "verify stopped early as decisive, by under 2%, on floors from calibrate's copy, or none: no bench of this "
     "baseline on this card measured how much its own processes differ, which is often far more than a copy's",
     "bench the baseline on this card first (hotkernel bench <baseline> --n 10), then verify again"},
    {parent_clock_rerun, "parent_clock_rerun", W,
     "a run was voided by the parent's clock alone (its windows outran its reported times by more than allowed) "
     "and was run again once; the rerun stands in its place",
     "give the machine to the verify alone (a busy host or GPU stretches the windows); a second void is invalid"},
    {gpu_throttled_after, "gpu_throttled_after", W,
     "nvidia-smi reported power or thermal throttling when the runs finished", "rerun on an idle, cool GPU"},
    {self_reported_timing, "self_reported_timing", W,
     "the times (and the check) come from the script's own output, not from hotkernel's harness",
     "scaffold with `new` for the protocol-3 timer and check run by the harness"},
    {contract_mismatch, "contract_mismatch", W,
     "the script's vendored hotkernel_contract.py differs from this hotkernel's own copy (stale or edited)",
     "re-create it with `hotkernel new --force` (move an edited candidate aside first)"},
    {vendored_contract_missing, "vendored_contract_missing", W,
     "no hotkernel_contract.py sits beside the target; the run used this binary's copy",
     "copy the binary's contract beside the script, or the script run by hand fails"},
    {vendored_contract_differs, "vendored_contract_differs", W,
     "the vendored hotkernel_contract.py differs from this binary's; the run used the binary's copy, so the script "
     "run by hand measures differently",
     "rerun `hotkernel new --force` with the same options, or copy the binary's contract there"},
    {invalid_utf8, "invalid_utf8", W, "a run printed bytes that are not UTF-8; they were replaced",
     "see runs[].line, and print UTF-8 only"},
    {sample_clocks_throttled, "sample_clocks_throttled", W,
     "timed samples were followed by an SM clock reading under 80% of the reference: the GPU was throttled or "
     "shared while timing",
     "see sample_clocks, and rerun on an idle, cool GPU if the times matter"},
    {stray_processes, "stray_processes", W,
     "a run left processes behind (setsid, a double fork); hotkernel killed them before the next run",
     "make the script wait for (or stop) what it starts"},
    {stray_shared_memory, "stray_shared_memory", W,
     "a run left SysV shared memory behind (shmget without IPC_RMID), which outlives every process; hotkernel "
     "removed it before the next run",
     "remove what the script creates (shmctl IPC_RMID), or use memory that dies with the process"},
    {python_cache_tampered, "python_cache_tampered", W,
     "hotkernel's folder of its own Python files held files it did not write (bytecode, .pth, others) or files whose "
     "bytes differed from the binary's; they were removed or rewritten before the run",
     "find what writes into hotkernel's cache folder (a candidate of an earlier run?) and rerun"},
    {fork_server_restarted, "fork_server_restarted", W,
     "the fork server died during a run (killed by the script?); the run was repeated as a fresh process and later "
     "runs forked from a new server started from scratch",
     "make the script leave its parent alone; a process it started may have escaped, so rerun the comparison"},
    {measured_without_lock, "measured_without_lock", W,
     "the runs went without the per-GPU measurement lock, so another hotkernel could have measured at the same time",
     "make the lock folder writable, or measure one at a time"},
    {lock_waited, "lock_waited", W,
     "runs waited for other hotkernel measurements on the same GPU (one run at a time per GPU set)",
     "nothing, unless the wait matters: measure one target at a time"},
    {script_check_failed, "script_check_failed", W, "runs printed ok=false: the script's correctness check failed",
     "fix the kernel before trusting its time"},
    {single_run, "single_run", W, "n = 1: no spread can be estimated", "use n >= 2 (10 is the default)"},
    {slow_first_run, "slow_first_run", W,
     "the first run was far slower than the rest: something was still warming up",
     "give the script a longer warm-up (compilation, autotuning, clocks)"},
    {runner_declared_invalid, "runner_declared_invalid", W,
     "the harness declared a run invalid (a patched harness, a forged result, ...)",
     "see the reason and runs[].line; fix the script"},
    {description_changed, "description_changed", W,
     "the script described itself differently between runs (shapes, seed, ...)", "fix its seed and shapes"},
    {profile_check_unreported, "profile_check_unreported", W, "profile_check was asked for but no run reported a profile",
     "use the harness on a GPU with a CUDA-graph timer (cupti or cuda_graph)"},
    {profile_check_untrusted, "profile_check_untrusted", W,
     "profile_check needs the harness; a self-reporting script was not profiled",
     "scaffold the target with `new` (protocol 3)"},
    {measured_unsandboxed, "measured_unsandboxed", W,
     "runs went without the kernel sandbox (allow_unsandboxed), so the candidate could write outside its run",
     "run on a kernel with Landlock, or check the target folder and caches by hand"},
    {full_record_unwritten, "full_record_unwritten", W,
     "the full record could not be written on disk (beside the script nor in the cache), so the result carries it "
     "whole",
     "make .hotkernel/ beside the script (or the cache folder) writable; record() takes this result as it is"},
    {persisting_l2, "persisting_l2", F,
     "the candidate set a persisting-L2 carve-out; the harness reset it before every sample and voids the run",
     "do not set cudaLimitPersistingL2CacheSize in the candidate"},
    {work_outside_timed_region, "work_outside_timed_region", F,
     "a call takes much longer in host wall time with a device-wide sync than on the timing events: work continues "
     "after the call returns",
     "keep all work on the current stream, and join other streams or threads before returning"},
    {signal_handler, "signal_handler", F,
     "the candidate had a Python signal handler installed while its samples were timed: it runs in the harness's own "
     "thread between the calls, outside the per-call clock, where only the parent's clock's allowance bounds its work",
     "remove the handler from the kernel's module (signal.signal), or install it only around code that is not timed"},
    {rotate_empty, "rotate_empty", W,
     "rotate is empty: every timed call reads the same inputs, which stay in L2",
     "pass rotate (the input names) so a memory-bound kernel reads from DRAM"},
    {no_flops, "no_flops", W, "no flops given: roofline() can place this kernel by its bytes only",
     "pass --flops (nominal flops per call) for a compute-bound kernel"},
    {file_replaced, "file_replaced", W, "new replaced a file that differed from what it writes",
     "keep your own edits under another name before rerunning new"},
    {cpu_only_python, "cpu_only_python", W, "torch in the chosen interpreter sees no CUDA GPU",
     "run on a GPU machine (or check CUDA_VISIBLE_DEVICES) for GPU times"},
    {gpu_not_in_spec_table, "gpu_not_in_spec_table", W, "the GPU has no entry in the spec table, so roofline has no peaks",
     "pass roofline --gpu with the closest key, or add a row to data/gpu-specs.csv"},
    {compute_cap_from_spec_table, "compute_cap_from_spec_table", W,
     "the driver has no compute_cap query field (older than R510); compute_capability comes from the spec table",
     "nothing, unless the table is wrong for this GPU; a newer driver reports it"},
    {compute_cap_unknown, "compute_cap_unknown", W,
     "neither the driver nor the spec table gives the compute capability", "read it from torch.cuda.get_device_capability()"},
    {mig_enabled, "mig_enabled", W,
     "MIG is enabled: an instance has a fraction of the SMs and bandwidth, so whole-GPU peaks overstate it",
     "scale the peaks by the instance's share, or measure on a whole GPU"},
    {calibration_unreadable, "calibration_unreadable", W, "the calibration cache for this GPU could not be read",
     "follow the fix in the message (rerun `hotkernel calibrate`)"},
    {measured_above_peak, "measured_above_peak", W, "the measured bandwidth is above the datasheet peak",
     "count bytes read plus written once, and make sure the buffers do not fit in L2"},
    {int8_peaks_in_tops, "int8_peaks_in_tops", W, "int8 peaks are in TOPS (integer ops), reported under peak_tflops",
     "read peak_tflops as TOPS for int8"},
    {gpu_uuid_mismatch, "gpu_uuid_mismatch", W, "torch measured another GPU than the one nvidia-smi names",
     "check CUDA_VISIBLE_DEVICES"},
    {calibration_note, "calibration_note", W,
     "the calibration script measured with a fallback (another timer, smaller buffers, a step skipped)",
     "read the note; rerun calibrate on an idle GPU with enough free memory"},
    {profiled_command_failed, "profiled_command_failed", W, "the profiled command failed or timed out",
     "see program_output_tail and fix the command"},
    {profiler_error, "profiler_error", W, "the profiler (ncu) reported an error", "follow the profiler's message"},
    {clocks_not_locked, "clocks_not_locked", W,
     "ncu ran with --clock-control none: durations are at the card's own boost clock, as in real runs",
     "keep the default --clock-control base for comparable durations"},
    {no_kernel_data, "no_kernel_data", W, "the report holds no CUDA kernel data: the command launched no kernel",
     "check that the command runs the kernel on the GPU"},
    {no_speed_of_light, "no_speed_of_light", W,
     "the ncu CSV has no SpeedOfLight throughput metrics, so no bound can be given",
     "profile with the default section set (or --section SpeedOfLight)"},
    {kernel_rows_merged, "kernel_rows_merged", W,
     "kernels appeared under several grid/block sizes; their rows were added up and med_ns is left empty",
     "report without GridXYZ for one row per kernel and its median"},
    {no_gpu_kernels_recorded, "no_gpu_kernels_recorded", W, "torch sees no CUDA device, so no GPU kernel was recorded",
     "run on a GPU machine for kernels"},
    {no_kernel_ran, "no_kernel_ran", W, "CUDA is available but no kernel ran under the profiler",
     "call the code at import time, not only under if __name__ == '__main__'"},
    {runner_exit_after_result, "runner_exit_after_result", W,
     "the harness's process failed after writing its result; the result stands (it came whole, over the harness's "
     "own channel)",
     "see the run's stderr_tail (bench, verify) or script_output_tail (torch_profile)"},
    {profile_mode_unavailable, "profile_mode_unavailable", W,
     "the contract beside the target script has no profile mode, so the whole run was profiled: the fp32 "
     "reference, the checks and the timing loop too",
     "copy hotkernel_contract.py from a fresh `hotkernel new` beside the script"},
    {listing_truncated, "listing_truncated", W, "the listing was cut to max_lines", "pass max_lines <= 0 for all of it"},
    {several_cache_entries, "several_cache_entries", W,
     "several Triton cache entries match the kernel name; the newest is shown",
     "pass the entry's file (.cubin or .ptx) as target to pick another"},
    {fat_binary_arch, "fat_binary_arch", W, "the binary holds several architectures; one is shown",
     "pass arch to pick another"},
    {local_memory_used, "local_memory_used", W, "the kernel loads or stores local memory (register spills or a local array)",
     "check 'ptxas -v' spill stores and cut live values or raise the register limit"},
    {narrow_global_loads, "narrow_global_loads", W, "the widest global load is under 128 bits",
     "vectorise the loads (LDG.E.128) if the kernel is memory-bound"},
    {disassembler_warning, "disassembler_warning", W, "cuobjdump or nvdisasm printed a warning of its own",
     "read it; the listing may be in an older format"},
    {results_skipped, "results_skipped", W, "files under the results folder are not hotkernel results",
     "move them out of the results folder (see skipped)"},
    {spread_jobs_failed, "spread_jobs_failed", W,
     "jobs of a spread gave no result: they failed, timed out, were cancelled or lost (each result's error says how)",
     "fix what the error names and rerun those candidates"},
    {gpu_leases_waited, "gpu_leases_waited", W, "jobs waited for GPUs that other hotkernel processes had leased",
     "nothing, unless the wait matters: name free cards with gpus"},
    {no_gpu_to_spread, "no_gpu_to_spread", W, "no GPU is visible here, so the jobs ran one after another on this host",
     "run on a GPU host, or through Slurm (executor: slurm)"},
});

constexpr bool rows_in_order() {
    for (std::size_t i = 0; i < catalogue_rows.size(); ++i)
        if (static_cast<std::size_t>(catalogue_rows[i].id) != i) return false;
    return catalogue_rows.size() == static_cast<std::size_t>(no_gpu_to_spread) + 1;
}
static_assert(rows_in_order(), "finding_catalogue rows must list every finding_id once, in enum order");

finding make(finding_id id, std::string message) { return finding{id, std::move(message)}; }

std::string string_at(const json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

/// An item of `warnings` or `flags` in the current shape; the older shapes come from result files.
json normalized(const json& item) {
    const json legacy(std::string{legacy_string_id});
    if (item.is_string()) return json{{"id", legacy}, {"message", item}};
    if (!item.is_object()) return json{{"id", legacy}, {"message", dump_line(item)}};
    if (item.contains("id")) return item;
    json out{{"id", item.contains("flag") ? item["flag"] : legacy}};
    for (const auto& [k, v] : item.items())
        if (k != "flag") out[k] = v;
    return out;
}

}  // namespace

std::span<const finding_info> finding_catalogue() { return catalogue_rows; }

const finding_info& info(finding_id id) { return catalogue_rows[static_cast<std::size_t>(id)]; }

const finding_info* find_finding(std::string_view name) {
    for (const auto& row : catalogue_rows)
        if (row.name == name) return &row;
    return nullptr;
}

void to_json(json& j, const finding& f) { j = json{{"id", std::string(info(f.id).name)}, {"message", f.message}}; }

void normalize_findings(json& result) {
    if (!result.is_object()) return;
    for (const char* key : {"warnings", "flags"}) {
        if (!result.contains(key) || !result[key].is_array()) continue;
        json out = json::array();
        std::set<std::pair<std::string, std::string>> runner_seen;
        for (const auto& item : result[key]) {
            json n = normalized(item);
            if (n.contains("role")) {  // the harness's flag, repeated by each run
                const std::string role = n["role"].is_string() ? n["role"].get<std::string>() : n["role"].dump();
                if (!runner_seen.insert({n["id"].is_string() ? n["id"].get<std::string>() : n["id"].dump(), role}).second)
                    continue;
            }
            out.push_back(std::move(n));
        }
        result[key] = std::move(out);
    }
}

std::string finding_message(const json& item) {
    if (item.is_string()) return item.get<std::string>();
    if (item.is_object()) return string_at(item, "message");
    return dump_line(item);
}

std::string finding_id_of(const json& item) {
    if (item.is_object()) {
        if (std::string id = string_at(item, "id"); !id.empty()) return id;
        if (std::string flag = string_at(item, "flag"); !flag.empty()) return flag;
    }
    return std::string{legacy_string_id};
}

json findings_schema(finding_kind kind) {
    // Types only: tools/list carries one per tool; docs/warnings.md says what id, message and role are.
    json props{{"id", {{"type", "string"}}}, {"message", {{"type", "string"}}}};
    if (kind == finding_kind::flag) props["role"] = {{"type", "string"}};
    return json{{"type", "array"},
                {"items", {{"type", "object"}, {"required", {"id", "message"}}, {"properties", props}}}};
}

std::string findings_markdown() {
    std::string out =
        "# Warnings and flags\n\n"
        "Generated by `hotkernel docs --warnings` from the catalogue in `src/report/findings.cpp`; do not edit "
        "by hand (run `scripts/generate-docs`).\n\n"
        "A result's `warnings` and `flags` are arrays of `{\"id\": ..., \"message\": ...}` (a flag of the "
        "harness also has `role`). Match the `id`: it is stable. The `message` gives the values and ends "
        "with what to do.\n\n"
        "- **warning**: the result stands, but read it with care.\n"
        "- **flag**: the result looks implausible; do not trust it until the flag is explained.\n\n"
        "A result file recorded before findings had ids holds bare strings and `{\"flag\": ..., \"message\": ...}`; "
        "read back, a string gets the id `unclassified` and a flag its `flag` as id. No new result carries "
        "`unclassified`.\n\n"
        "| id | kind | meaning | what to do |\n|---|---|---|---|\n";
    auto cell = [](std::string_view s) {
        std::string c;
        for (char ch : s) c += ch == '|' ? std::string("\\|") : std::string(1, ch);
        return c;
    };
    for (const auto& row : catalogue_rows)
        out += fmt::format("| `{}` | {} | {} | {} |\n", row.name, row.kind == finding_kind::flag ? "flag" : "warning",
                           cell(row.meaning), cell(row.action));
    return out;
}

namespace findings {

finding baseline_unchecked() {
    return make(finding_id::baseline_unchecked, "the baseline prints no \"ok\" but the candidate does; only the "
                                                "candidate is checked; print \"ok\" from the baseline too");
}

finding output_unchecked(int scripts) {
    if (scripts == 1)
        return make(finding_id::output_unchecked, "the script prints no \"ok\": its output is not checked; print "
                                                  "{\"ms\": ..., \"ok\": ...} (scripts made by `new` do)");
    return make(finding_id::output_unchecked, "neither script prints \"ok\": correctness is not checked; scaffold "
                                              "with `new` or print {\"ms\": ..., \"ok\": ...}");
}

finding rotate_k_differs(std::string_view baseline_k, std::string_view candidate_k) {
    return make(finding_id::rotate_k_differs,
                fmt::format("rotate_k differs (baseline {}, candidate {}): their inputs sit in different cache "
                            "states; give both the same rotate",
                            baseline_k, candidate_k));
}

finding inputs_not_rotated() {
    return make(finding_id::inputs_not_rotated,
                "no input rotates (rotate_k 1): every timed call of a sample reads the same tensors, so an output kept "
                "from an earlier call and handed back as a copy reads as speed, which this verdict cannot tell from a "
                "faster kernel; rotate an input in the TARGET (rotate) unless speed on repeated inputs is the point");
}

finding zero_spread() {
    return make(finding_id::zero_spread, "both scripts printed identical times in every run (zero spread): the "
                                         "rule's threshold is 0, so any difference is called; check that the timer "
                                         "has enough resolution");
}

finding high_variance(double cv_pct, std::string_view side) {
    if (side.empty())
        return make(finding_id::high_variance,
                    fmt::format("the runs vary a lot (cv {:.1f}% > 5%): the mean is imprecise; check for other work "
                                "on the GPU, clock throttling, or a warm-up that is too short",
                                cv_pct));
    return make(finding_id::high_variance,
                fmt::format("the {} varies a lot (cv {:.1f}% > 5%): a small difference cannot be resolved; check for "
                            "other work on the GPU or clock throttling",
                            side, cv_pct));
}

finding inconclusive_within_threshold(double diff_ms, double diff_pct, double threshold_ms) {
    return make(finding_id::inconclusive_within_threshold,
                fmt::format("inconclusive: the difference {:.3g} ms ({:+.2f}%) is within the rule's threshold {:.3g} "
                            "ms; more pairs (n) resolve smaller differences",
                            diff_ms, diff_pct, threshold_ms));
}

finding speedup_over_10x(double speedup) {
    return make(finding_id::speedup_over_10x,
                fmt::format("speedup {:.3g}x is over 10x: check that the candidate does the same work (side streams, "
                            "cached results, skipped calls)",
                            speedup));
}

finding reported_time_exceeds_wall(std::string_view run, double ms, double iters, double wall_s) {
    return make(finding_id::reported_time_exceeds_wall,
                fmt::format("{} reported {:.4g} ms x {} iters = {:.3g} s, longer than the process's own wall time "
                            "{:.3g} s; check how the script times and counts its calls",
                            run, ms, iters, ms * iters / 1000.0, wall_s));
}

finding under_roofline_floor(double candidate_min_ms, std::string_view gpu, double floor_ms, double flops,
                             double bytes, std::string_view dtype) {
    return make(finding_id::under_roofline_floor,
                fmt::format("the candidate's fastest run ({:.4g} ms) is under the {} spec-sheet floor ({:.4g} ms for "
                            "{} flops, {} bytes, {}): it cannot have done that work from DRAM (L2 reuse, skipped "
                            "work, or wrong roofline_inputs)",
                            candidate_min_ms, gpu, floor_ms, flops, bytes, dtype));
}

finding under_measured_floor(std::string_view who, double min_ms, double floor_ms, double mem_gbs,
                             std::string_view workload) {
    return make(finding_id::under_measured_floor,
                fmt::format("the {}'s fastest run{} ({:.4g} ms) is under the floor of the bandwidth calibrate measured "
                            "on this card ({:.4g} ms at {:.0f} GB/s, less 5%): its inputs stayed in L2, or work was not "
                            "done",
                            who, workload.empty() ? "" : fmt::format(" at {}", workload), min_ms, floor_ms, mem_gbs));
}

finding effect_under_process_spread(double effect_pct, double floor_pct, std::string_view source) {
    return make(finding_id::effect_under_process_spread,
                fmt::format("the verdict is decisive but its effect ({:.3g}%) is under twice the spread between "
                            "processes of the same code ({:.3g}%: {}): verify again before believing it",
                            effect_pct, floor_pct, source));
}

finding spread_not_benched(std::string_view baseline, std::string_view source) {
    return make(finding_id::spread_not_benched,
                fmt::format("verify stopped early as decisive on floors from {}; no bench of {} on this card measured "
                            "the spread between its own processes (on one H100 a gelu's was 10x the copy's, and an "
                            "A/A verify stopped as faster at 0.31%): bench it, then verify again",
                            shorten(source, 160), shorten(baseline, 160)));
}

finding parent_clock_rerun(std::string_view run, std::string_view why) {
    return make(finding_id::parent_clock_rerun,
                fmt::format("{} was voided by the parent's clock alone and run again once (the rerun stands in its "
                            "place): {}",
                            run, shorten(why, 400)));
}

finding gpu_throttled_after() {
    return make(finding_id::gpu_throttled_after, "the GPU was throttled (power or heat) when the runs finished: see "
                                                 "measurement.clocks_after; rerun on an idle, cool GPU");
}

finding self_reported_timing(int protocol, int scripts) {
    if (scripts == 1)
        return make(finding_id::self_reported_timing,
                    protocol >= 3 ? "timing is reported by the script's vendored contract on stdout, not by the "
                                    "harness; treat it as self-reported"
                                  : "timing is self-reported by the script (a plain bench-contract script); scaffold "
                                    "with `new` for the protocol-3 timer and check");
    return make(finding_id::self_reported_timing,
                protocol >= 3 ? "timing and the check are reported by each script's vendored contract on stdout, not "
                                "by the harness; treat the result as self-reported"
                              : "timing is self-reported by the scripts (plain bench-contract scripts); scaffold with "
                                "`new` for the protocol-3 timer and check");
}

finding contract_mismatch(std::string_view script_sha12, std::string_view binary_sha12) {
    return make(finding_id::contract_mismatch,
                fmt::format("the vendored hotkernel_contract.py differs from this hotkernel's own copy (sha256 {}… "
                            "against {}…): it is stale or edited; re-create it with `{}` (move an edited candidate "
                            "aside first)",
                            script_sha12, binary_sha12, words::call("new", json{{"force", true}})));
}

finding vendored_contract_missing(std::string_view path, std::string_view binary_sha12) {
    return make(finding_id::vendored_contract_missing,
                fmt::format("no vendored hotkernel_contract.py beside the target ({}); the run used this binary's copy "
                            "(sha256 {}…); `python` on the script alone will fail until you copy it there",
                            path, binary_sha12));
}

finding vendored_contract_differs(std::string_view vendored_sha12, std::string_view binary_sha12,
                                  std::string_view what, std::string_view binary_copy, std::string_view path) {
    return make(finding_id::vendored_contract_differs,
                fmt::format("vendored hotkernel_contract.py differs from this binary's (sha256 {}… vs {}…; {}); the "
                            "run used the binary's copy, so the script run by hand measures differently; rerun "
                            "`{}` with the same options (move an edited candidate aside first), or copy it: cp {} {}",
                            vendored_sha12, binary_sha12, what, words::call("new", json{{"force", true}}), binary_copy,
                            path));
}

finding invalid_utf8(std::optional<std::size_t> run) {
    if (run)
        return make(finding_id::invalid_utf8,
                    fmt::format("run {} printed bytes that are not UTF-8 (replaced); see runs[].line", *run));
    return make(finding_id::invalid_utf8, "a run printed bytes that are not UTF-8 (replaced); see runs[].line");
}

finding sample_clocks_throttled(std::size_t throttled, std::size_t samples, double threshold_mhz,
                                double reference_mhz, double min_mhz, std::string_view runs) {
    return make(finding_id::sample_clocks_throttled,
                fmt::format("{} of {} timed samples were followed by an SM clock reading under {:.0f} MHz ({:.0f}% of "
                            "{:.0f} MHz; lowest {:.0f} MHz) in {}: the GPU was throttled (power, heat, a clock limit) "
                            "or shared with other work while timing; see sample_clocks, and rerun on an idle, cool "
                            "GPU if the times matter",
                            throttled, samples, threshold_mhz,
                            reference_mhz > 0 ? 100.0 * threshold_mhz / reference_mhz : 0.0, reference_mhz, min_mhz,
                            runs));
}

finding stray_shared_memory(std::string_view run, std::size_t count, std::string_view segments) {
    return make(finding_id::stray_shared_memory,
                fmt::format("{} left {} SysV shared memory segment(s) behind; hotkernel removed them before the next "
                            "run: {}; remove what the script creates (shmctl IPC_RMID)",
                            run, count, segments));
}

finding stray_processes(std::string_view run, std::size_t count, std::string_view commands) {
    return make(finding_id::stray_processes,
                fmt::format("{} left {} process(es) running after it exited (started with setsid or a double fork, or "
                            "not yet gone); hotkernel killed them before the next run: {}; make the script wait for "
                            "what it starts",
                            run, count, commands));
}

finding python_cache_tampered(std::string_view dir, std::string_view what) {
    return make(finding_id::python_cache_tampered,
                fmt::format("hotkernel's Python folder {} held what hotkernel did not write there: {}; removed or "
                            "rewritten from the binary's copy before the run; find what writes there and rerun",
                            dir, what));
}

finding fork_server_restarted(std::string_view run, std::string_view why) {
    return make(finding_id::fork_server_restarted,
                fmt::format("the fork server {} during {}; that run was repeated as a fresh process and later runs "
                            "forked from a new server started from scratch (a process the run started may have "
                            "escaped with it); make the script leave its parent alone and rerun",
                            why, run));
}

finding measured_without_lock(std::string_view note) {
    return make(finding_id::measured_without_lock,
                fmt::format("runs went without the per-GPU measurement lock ({}): another hotkernel measuring on this "
                            "GPU at the same time would disturb the times; measure one at a time",
                            note));
}

finding lock_waited(std::size_t runs, double total_s, std::string_view lock_path) {
    return make(finding_id::lock_waited,
                fmt::format("{} run(s) waited {:.1f} s in all for other hotkernel measurements on this GPU to finish "
                            "(hotkernel times one run at a time per GPU set; lock {})",
                            runs, total_s, lock_path));
}

finding script_check_failed(std::string_view runs) {
    return make(finding_id::script_check_failed,
                fmt::format("run(s) {} printed ok=false: the script's correctness check failed; fix the kernel "
                            "before trusting its time",
                            runs));
}

finding single_run() {
    return make(finding_id::single_run, "n = 1: no spread can be estimated; use n >= 2 (10 is the default)");
}

finding slow_first_run(double first_ms, double rest_mean_ms) {
    return make(finding_id::slow_first_run,
                fmt::format("run 1 ({:.4g} ms) was far slower than the others (mean {:.4g} ms): something was still "
                            "warming up (compilation, autotuning, clocks); give the script a longer warm-up",
                            first_ms, rest_mean_ms));
}

std::optional<finding> runner_flag(std::string_view id, std::string_view message) {
    const finding_info* row = find_finding(id);
    if (row == nullptr || row->kind != finding_kind::flag) return std::nullopt;
    return make(row->id, fmt::format("{}; {}", message, row->action));
}

finding runner_declared_invalid(std::size_t run, std::string_view reason) {
    return make(finding_id::runner_declared_invalid,
                fmt::format("run {}: the harness declared it invalid: {}", run, reason));
}

finding description_changed(std::string_view what) {
    return make(finding_id::description_changed,
                fmt::format("the script's own description changed between runs ({}); fix its seed and shapes", what));
}

finding profile_check_unreported() {
    return make(finding_id::profile_check_unreported,
                "profile_check: no run reported a profile of its timed graph (it needs the harness, a GPU and "
                "a CUDA-graph timer: cupti or cuda_graph)");
}

finding profile_check_untrusted() {
    return make(finding_id::profile_check_untrusted,
                "profile_check needs the harness (a protocol-3 target made by `new`); this script reports its "
                "own times, so nothing was profiled");
}

finding measured_unsandboxed(std::string_view what) {
    return make(finding_id::measured_unsandboxed,
                fmt::format("runs went without the kernel sandbox ({}; allowed by {}): the candidate "
                            "could write the target's folder, the user site and hotkernel's cache, and signal other "
                            "processes; run on a kernel with Landlock",
                            what, words::param("allow_unsandboxed", true)));
}

finding full_record_unwritten(std::string_view why) {
    return make(finding_id::full_record_unwritten,
                fmt::format("the full record could not be written ({}), so this result carries it whole; make "
                            ".hotkernel/ beside the script writable",
                            why));
}

finding rotate_empty() {
    return make(finding_id::rotate_empty,
                fmt::format("rotate is empty: every timed call reads the same inputs, which stay in L2; times will be "
                            "optimistic for a memory-bound kernel; pass {} (the input names) to cycle through fresh "
                            "copies",
                            words::param("rotate")));
}

finding no_flops() {
    return make(finding_id::no_flops,
                fmt::format("no flops given: roofline() can only place this kernel by its bytes; pass {} (nominal "
                            "flops per call) for a compute-bound kernel",
                            words::param("flops")));
}

finding file_replaced(std::string_view path, bool forced) {
    return make(finding_id::file_replaced,
                fmt::format("replaced {}, which differed from what new writes{}; keep your own edits under another "
                            "name before rerunning new",
                            path, forced ? " (" + words::param("force", true) + ")" : ""));
}

finding cpu_only_python(std::string_view python) {
    return make(finding_id::cpu_only_python,
                fmt::format("torch in {} sees no CUDA GPU: the scripts will run and time on the CPU here; run on a "
                            "GPU machine (or check CUDA_VISIBLE_DEVICES) for GPU times",
                            python));
}

finding gpu_not_in_spec_table(std::string_view gpu, std::string_view reason) {
    return make(finding_id::gpu_not_in_spec_table,
                fmt::format("{}: {}; roofline needs a table entry: pass roofline {} with the closest key, or add a "
                            "row to data/gpu-specs.csv",
                            gpu, reason, words::param("gpu")));
}

finding compute_cap_from_spec_table(std::string_view gpu, std::string_view compute_capability) {
    return make(finding_id::compute_cap_from_spec_table,
                fmt::format("{}: this driver has no compute_cap query field (older than R510); compute_capability {} "
                            "comes from the spec table; a newer driver reports it",
                            gpu, compute_capability));
}

finding compute_cap_unknown(std::string_view gpu) {
    return make(finding_id::compute_cap_unknown,
                fmt::format("{}: compute capability unknown (the driver does not report it and the GPU is not in the "
                            "spec table); torch.cuda.get_device_capability() gives it",
                            gpu));
}

finding mig_enabled(std::string_view gpu) {
    return make(finding_id::mig_enabled,
                fmt::format("{}: MIG is enabled; a MIG instance has a fraction of the SMs and memory bandwidth, so "
                            "the spec-table peaks (whole GPU) overstate what a kernel on one instance can reach; scale "
                            "them by the instance's share",
                            gpu));
}

finding calibration_unreadable(std::string_view error) { return make(finding_id::calibration_unreadable, std::string(error)); }

finding measured_above_peak(double measured_gbs, double peak_gbs) {
    return make(finding_id::measured_above_peak,
                fmt::format("measured_mem_gbs {:g} is above the datasheet peak {:g} GB/s; check how it was measured "
                            "(count bytes read plus written once, and make sure the buffers do not fit in L2)",
                            measured_gbs, peak_gbs));
}

finding int8_peaks_in_tops() {
    return make(finding_id::int8_peaks_in_tops,
                "int8 peaks are in TOPS (integer ops), reported under peak_tflops; read peak_tflops as TOPS");
}

finding gpu_uuid_mismatch(std::string_view torch_uuid, int index, std::string_view smi_uuid) {
    return make(finding_id::gpu_uuid_mismatch,
                fmt::format("torch measured {} but nvidia-smi names GPU {} {}; check CUDA_VISIBLE_DEVICES", torch_uuid,
                            index, smi_uuid));
}

finding calibration_note(std::string_view note) { return make(finding_id::calibration_note, std::string(note)); }

finding profiled_command_failed(std::string_view outcome, bool partial) {
    return make(finding_id::profiled_command_failed,
                fmt::format("the profiled command {}{}; see program_output_tail", outcome,
                            partial ? "; the kernels it ran before that are shown" : ""));
}

finding profiler_error(std::string_view tool, std::string_view error) {
    return make(finding_id::profiler_error, fmt::format("{}: {}", tool, error));
}

finding clocks_not_locked() {
    return make(finding_id::clocks_not_locked,
                fmt::format("clocks were not locked ({}): durations are at the card's own boost clock, as in real "
                            "runs; keep the default {} for comparable durations",
                            words::param("clock_control", "none"), words::param("clock_control", "base")));
}

finding no_kernel_data(bool under_nsys) {
    return make(finding_id::no_kernel_data,
                under_nsys ? "the report holds no CUDA kernel data: the command launched no kernel under nsys; check "
                             "that it runs the kernel on the GPU"
                           : "the report holds no CUDA kernel data: the profiled command launched no kernel; check "
                             "that it runs the kernel on the GPU");
}

finding no_speed_of_light() {
    return make(finding_id::no_speed_of_light,
                "no SpeedOfLight throughput metrics in this CSV, so no bound can be given; profile with the default "
                "section set (or --section SpeedOfLight)");
}

finding kernel_rows_merged(int kernels) {
    return make(finding_id::kernel_rows_merged,
                fmt::format("{} kernel(s) appeared under several grid/block sizes (gpukernsum with GridXYZ); their rows "
                            "were added up and med_ns is left empty for them (a median cannot be combined); report "
                            "without GridXYZ for one median per kernel",
                            kernels));
}

finding no_gpu_kernels_recorded() {
    return make(finding_id::no_gpu_kernels_recorded,
                "no GPU kernels were recorded because torch sees no CUDA device; run on a GPU machine for kernels");
}

finding no_kernel_ran() {
    return make(finding_id::no_kernel_ran,
                "CUDA is available but no kernel ran under the profiler: does the script call the code at import "
                "time, under if __name__ == '__main__'? Call it at import time");
}

finding runner_exit_after_result(std::string_view outcome, std::string_view see) {
    return make(finding_id::runner_exit_after_result,
                fmt::format("the harness {} after writing its result, which stands; see {}", outcome, see));
}

finding profile_mode_unavailable(std::string_view script, std::string_view contract) {
    return make(finding_id::profile_mode_unavailable,
                fmt::format("{} imports {}, which has no profile mode (an older copy), so the whole run was profiled: "
                            "its fp32 reference, checks and timing loop are among the kernels; copy "
                            "hotkernel_contract.py from a fresh `hotkernel new` beside the script",
                            script, contract));
}

finding listing_truncated(std::size_t shown, std::size_t total) {
    return make(finding_id::listing_truncated,
                fmt::format("showing the first {} of {} lines; pass {} for all of them", shown, total,
                            words::param("max_lines", 0)));
}

finding several_cache_entries(std::size_t count, std::string_view kernel, std::string_view newest,
                              std::string_view dir) {
    return make(finding_id::several_cache_entries,
                fmt::format("{} cache entries match '{}' (other specialisations or kernels); showing the newest, {} "
                            "in {}; pass another entry's .cubin as target to see it",
                            count, kernel, newest, dir));
}

finding fat_binary_arch(std::size_t archs, std::string_view shown) {
    return make(finding_id::fat_binary_arch,
                fmt::format("fat binary with {} architectures; showing {} (pass {} to pick another)", archs, shown,
                            words::param("arch")));
}

finding local_memory_used(std::size_t ldl, std::size_t stl) {
    return make(finding_id::local_memory_used,
                fmt::format("{} LDL / {} STL: the kernel uses local memory (register spills or a local array); check "
                            "'ptxas -v' spill stores and cut live values or raise the register limit",
                            ldl, stl));
}

finding narrow_global_loads(int bits) {
    return make(finding_id::narrow_global_loads,
                fmt::format("widest global load is {}-bit: a memory-bound kernel usually wants 128-bit (LDG.E.128) "
                            "vectorised loads; vectorise them if this one is memory-bound",
                            bits));
}

finding disassembler_warning(std::string_view line) { return make(finding_id::disassembler_warning, std::string(line)); }

finding results_skipped(std::size_t files, std::string_view dir) {
    return make(finding_id::results_skipped,
                fmt::format("{} file(s) under {} are not hotkernel results and were left out of the leaderboard (see "
                            "skipped); move them out of the results folder",
                            files, dir));
}

finding spread_jobs_failed(std::size_t failed, std::size_t jobs, std::string_view which) {
    return make(finding_id::spread_jobs_failed,
                fmt::format("{} of {} job(s) gave no result: {}; each result's error says why: fix that and rerun "
                            "those",
                            failed, jobs, which));
}

finding gpu_leases_waited(std::size_t jobs, double total_s, std::string_view lease_dir) {
    return make(finding_id::gpu_leases_waited,
                fmt::format("{} job(s) waited {:.1f} s in all for GPUs other hotkernel processes had leased (leases "
                            "in {}); nothing to do unless the wait matters: then name free cards with {}",
                            jobs, total_s, lease_dir, words::param("gpus")));
}

finding no_gpu_to_spread(std::size_t jobs, std::string_view why) {
    return make(finding_id::no_gpu_to_spread,
                fmt::format("no GPU is visible here ({}), so the {} job(s) ran one after another on this host; run on a "
                            "GPU host to spread them, or through Slurm ({})",
                            why, jobs, words::param("executor", "slurm")));
}

}  // namespace findings
}  // namespace hotkernel
