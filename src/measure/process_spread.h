// The spread between processes of the same code on one card: what verify's early stops and its
// effect_under_process_spread warning need an effect to exceed. Two sources:
// - calibrate's: the cv of a streaming copy over its processes (one figure for the card);
// - bench's: the cv of a baseline's own runs (each a process) on this card, kept per card and per
//   baseline file (its bytes' hash) in cache_dir()/spread/<uuid>/<sha256[:16]>.json.
// A copy spreads far less than a real kernel can: on one H100 calibrate measured 0.006% while A/A
// verifies of a gelu bf16 16384x8192 differed by up to 0.31% after one ABBA cycle
// (bench/runs/2026-12-06-gpu-main-checks). verify takes the larger of the two bounds.
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"

namespace hotkernel {

/// A spread between processes as a fraction of the time: the cv measured, its 95% upper bound
/// (stats/summary.h: spread_upper_bound), which verify's floors use, and where it came from.
struct process_spread {
    double measured = 0;
    double bound = 0;
    std::size_t processes = 0;
    std::string source;    ///< one phrase for the result and its warnings
    bool benched = false;  ///< a bench of the target measured one (wider_spread: whichever is wider)
};

/// bench's record of a baseline's spread from its result (pure): the largest cv over its
/// workloads (a one-shape target: the runs' cv), the runs it came from, each workload's cv.
/// nullopt with fewer than 3 runs, any run not ok, or a cv that is not a finite number.
std::optional<json> spread_record_of_bench(const json& bench_result);

/// The spread a record holds (spread_record_of_bench's, as read back); nullopt when it is not one.
std::optional<process_spread> spread_in_record(const json& record, const std::string& where);

/// What a kept spread is keyed by: the SHA-256 of the baseline file's bytes and the script's
/// arguments (an edit, or other arguments, is another baseline). Throws tool_error naming the
/// file when it cannot be read.
std::string baseline_key(const std::filesystem::path& script, const std::vector<std::string>& args);

/// cache_dir()/spread/<uuid>/<script_sha256[:16]>.json; empty when the uuid has characters other
/// than letters, digits and '-'.
std::filesystem::path target_spread_path(const std::string& uuid, const std::string& script_sha256);

/// Writes bench's record (atomically); returns the path, empty when nothing was written (no
/// record, a bad uuid). Throws tool_error when the folder cannot be written.
std::filesystem::path save_target_spread(const std::string& uuid, const std::string& script_sha256,
                                         const json& record);

/// The copy's spread calibrate measured on this card; nullopt when none (no calibration, one
/// without the figure, or a file that is not one).
std::optional<process_spread> read_calibrated_spread(const std::string& uuid);

/// The baseline's spread bench measured on this card; nullopt when none (or the file is not one).
std::optional<process_spread> read_target_spread(const std::string& uuid, const std::string& script_sha256);

/// The larger bound of the two (either may be absent): the one verify's floors use; benched
/// when either was.
process_spread wider_spread(const std::optional<process_spread>& a, const std::optional<process_spread>& b);

}  // namespace hotkernel
