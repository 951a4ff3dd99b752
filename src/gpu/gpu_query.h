// The I/O edge to the GPU driver: runs nvidia-smi through a process_runner (10 s timeout)
// and returns parsed records, and reads the per-GPU bandwidth calibration cache. Used by
// gpu_info, roofline and verify. Everything here throws tool_error with a message that says
// what failed and how to fix it; nothing here touches the GPU except through nvidia-smi.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "parsers/nvidia_smi.h"
#include "process/runner.h"
#include "util/json.h"

namespace hotkernel {

/// Wall-clock limit for one nvidia-smi call [s]. A hung driver makes nvidia-smi hang too.
inline constexpr double nvidia_smi_timeout_s = 10.0;

/// Every physical GPU, in index order, from
///   nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,power.limit,
///              compute_cap,clocks.max.sm,mig.mode.current --format=csv,noheader,nounits
/// Old drivers reject a field they do not know (exit 2, `Field "compute_cap" is not a valid
/// field to query.`) and print no data; the optional fields compute_cap and mig.mode.current
/// are then dropped and the query re-run. A compute capability the driver did not give is
/// taken from the spec table by name (gpu_record::compute_capability_source == "spec table").
/// Values the driver reports as [N/A] / [Not Supported] are nullopt.
/// Returns an empty vector only when nvidia-smi succeeded and listed no GPU.
/// Throws tool_error when:
///   - nvidia-smi is not on PATH ("no NVIDIA driver found: nvidia-smi is not on PATH; …"),
///   - it exits non-zero (its own message, e.g. "NVIDIA-SMI has failed because it couldn't
///     communicate with the NVIDIA driver…" with exit 9, or "No devices were found"),
///   - it times out (a hung driver) or the call is cancelled,
///   - its output cannot be parsed.
std::vector<gpu_record> query_gpus(process_runner& runner, const cancel_token& cancel);

/// The nvidia-smi facts of one GPU as JSON (null where nvidia-smi had none), as verify's
/// measurement record and gpu_info report them.
json gpu_record_json(const gpu_record& g);

/// Clock and throttle state of GPU `index`, from
///   nvidia-smi -i <index> --query-gpu=index,clocks.sm,clocks.max.sm,
///              clocks_event_reasons.active,power.draw,temperature.gpu --format=csv,noheader,nounits
/// (retried with the pre-R535 alias clocks_throttle_reasons.active when the driver rejects
/// the new name). Returns
///   {"index": 0, "sm_clock_mhz": 1980, "max_sm_clock_mhz": 1980,
///    "clock_event_reasons_mask": "0x0000000000000001", "clock_event_reasons": ["gpu_idle"],
///    "throttled": false, "power_draw_w": 113.9, "temperature_c": 36,
///    "reasons_field": "clocks_event_reasons.active"}
/// Missing values are null. `throttled` is true when power or heat pulls the clocks down
/// (sw_power_cap, hw_slowdown, sw/hw thermal, power brake; see throttling_reasons_mask);
/// gpu_idle alone is not throttling (an idle GPU sits at a low clock between runs).
/// Throws tool_error as query_gpus does, and when no GPU has that index.
json query_clock_state(process_runner& runner, const cancel_token& cancel, int index);

/// A GPU uuid as nvidia-smi prints it ("GPU-…": letters, digits and '-'), safe as one component
/// of a path under cache_dir(); false for an empty one or any other character.
bool plain_gpu_uuid(const std::string& uuid);

/// cache_dir()/calibration/<uuid>.json (uuid as nvidia-smi prints it, "GPU-…").
std::filesystem::path calibration_path(const std::string& uuid);

/// The bandwidth calibration of one GPU, written by `hotkernel calibrate`. The file is one
/// JSON object:
///   {"uuid": "GPU-28bc…",           // optional; the file name is authoritative
///    "gpu": "NVIDIA H200",          // optional, for people
///    "mem_gbs": 4250.0,             // required: streaming-copy bandwidth [1e9 B/s], bytes
///                                   //   read + written, under the repo's timer
///    "bf16_tflops": 720.5,          // optional: measured dense bf16 matmul rate [TFLOPS]
///    "measured_at": "2026-11-30T02:35:17Z",  // UTC, ISO 8601
///    "method": "torch copy_ 1 GiB, CUDA-graph timer, median of 50",
///    "copy_curve": [{"bytes": 8388608, "gbs": 1650.2}, ...]}  // optional: the copy at smaller
///                                   //   sizes (bytes a call), for the floor by size
/// Returns nullopt when there is no file (or the uuid has characters other than letters,
/// digits and '-'). Throws tool_error naming the file when it exists but is not such an
/// object (mem_gbs missing or not a positive number), saying to delete or re-create it.
std::optional<json> read_calibration(const std::string& uuid);

/// The spread between processes a calibration holds: "process_spread_pct" (the cv of the copy's
/// time over details.process_spread.runs processes; 6 where an older file does not say) and its
/// 95% upper bound (stats/summary.h), which verify's floors use; nullopt where it holds none.
struct calibrated_spread {
    double cv_pct = 0;
    double bound_pct = 0;
    std::size_t processes = 0;
};
std::optional<calibrated_spread> process_spread_in(const json& calibration);

/// The measured floor's bandwidth for a call moving `bytes`: the copy's at that size where the
/// calibration holds a copy_curve (bandwidth_at, gpu/roofline.h), its mem_gbs otherwise.
double calibrated_gbs_at(const json& calibration, double bytes);

/// Which GPU the runs use: the one the first entry of CUDA_VISIBLE_DEVICES names (an index or a
/// GPU-uuid prefix), the first listed when it is unset, none when it is "" or names no listed GPU.
std::optional<gpu_record> visible_gpu(const std::vector<gpu_record>& gpus);

}  // namespace hotkernel
