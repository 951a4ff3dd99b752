// Throttled samples: the harness reads the SM clock after every timed sample (a spin of
// known cycles over its event time, nvbench's idea) and puts the readings in its result line as
// sample_sm_clock_mhz. This compares them with the card's maximum SM clock. Pure.
#pragma once
#include <optional>
#include <vector>

#include "measure/measure.h"
#include "report/findings.h"
#include "util/json.h"

namespace hotkernel {

/// A sample is throttled when its reading is under this fraction of the reference clock (nvbench
/// discards samples under 75% of the default clock). The probe reads 2-3% under the true clock
/// (event overhead), and a healthy H100 under a bandwidth-bound load dips for a sample or two to
/// 84-90% of its max: at 0.9 nearly every verify there warned (53 of 60 A/A verifies,
/// bench/runs/2026-12-06-gpu-grown-samples), a warning that says nothing. 0.8 still catches the
/// 20-50% drops of thermal slowdown, a hardware brake or a shared GPU.
inline constexpr double throttle_fraction = 0.8;

/// {"reference_mhz", "reference", "threshold_mhz", "samples", "throttled_samples", "min_mhz",
///  "median_mhz", "throttled_runs": ["baseline 3", ...]} over every run's readings, or null
/// when no run reported any. max_sm_clock_mhz <= 0 or NaN: the fastest reading is the reference.
json check_sample_clocks(const std::vector<const run_record*>& runs, double max_sm_clock_mhz);

/// The warning for a result, or none when no sample was throttled.
std::optional<finding> throttle_warning(const json& check);

}  // namespace hotkernel
