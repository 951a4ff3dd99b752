// Pure parsers for `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]` output:
// the GPU inventory (gpu_info, roofline, verify) and the clock/throttle state (verify).
// Format facts (tests/fixtures/h200/, tool-formats.md §1): one line per physical GPU in
// index order, fields separated by ", ", never quoted; the header (when present) prints the
// canonical field names with " [unit]" and may differ from the names asked for, so columns
// are mapped by position; any "[...]" token (and N/A) is a missing value.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.h"

namespace hotkernel {

/// The inventory query, in this order. compute_cap (absent before R510) and mig.mode.current
/// (absent before R450) are optional: gpu_query drops them when the driver rejects them.
inline const std::vector<std::string> gpu_query_fields = {
    "index", "name", "uuid", "driver_version", "memory.total",
    "power.limit", "compute_cap", "clocks.max.sm", "mig.mode.current"};

/// The clock/throttle query for verify. `clocks_event_reasons.active` is the R535+ name;
/// older drivers know only `clocks_throttle_reasons.active` (580 accepts both).
inline const std::vector<std::string> clock_query_fields = {
    "index", "clocks.sm", "clocks.max.sm", "clocks_event_reasons.active", "power.draw", "temperature.gpu"};

struct gpu_record {
    std::optional<int> index;
    std::string name;                               ///< e.g. "NVIDIA H200"; "" when missing
    std::optional<std::string> uuid;                ///< "GPU-28bcde5d-…"
    std::optional<std::string> driver;              ///< "580.159.04"
    std::optional<double> memory_mib;
    std::optional<double> power_limit_w;
    std::optional<std::string> compute_capability;  ///< "9.0"
    std::optional<double> max_sm_clock_mhz;
    std::optional<std::string> mig_mode;            ///< "Enabled" / "Disabled"; nullopt when N/A
    /// "nvidia-smi", "spec table" (old driver: filled in by query_gpus), or "" when unknown.
    std::string compute_capability_source;
};

struct clock_state {
    std::optional<int> index;
    std::optional<double> sm_clock_mhz;
    std::optional<double> max_sm_clock_mhz;
    std::optional<std::uint64_t> event_reasons_mask;  ///< NVML nvmlClocksEventReasons bits
    std::optional<double> power_draw_w;
    std::optional<double> temperature_c;
};

/// True for a cell nvidia-smi uses for "no value": empty, any "[...]" ("[N/A]",
/// "[Not Supported]", "[Unknown Error]"), "N/A", "Not Found", "Requested functionality has
/// been deprecated".
bool is_missing_value(std::string_view cell);

/// Splits query output into rows of cells keyed by the field names asked for (in `fields`
/// order). A leading header row is recognised and skipped; missing values are left out of
/// the map. Throws std::runtime_error quoting the line when a row has the wrong field count
/// (e.g. an error message instead of data).
std::vector<std::map<std::string, std::string>> parse_query_rows(std::string_view text,
                                                                 const std::vector<std::string>& fields);

/// The inventory rows. `fields` are the names asked for (gpu_query_fields, or a subset when
/// the driver rejected some); unknown names are ignored.
std::vector<gpu_record> parse_gpu_query(std::string_view text,
                                        const std::vector<std::string>& fields = gpu_query_fields);

/// The clock rows; the reasons column may be either alias.
std::vector<clock_state> parse_clock_query(std::string_view text,
                                           const std::vector<std::string>& fields = clock_query_fields);

/// The field named in `Field "compute_cap" is not a valid field to query.` (nvidia-smi's
/// answer, exit 2, when any asked field is unknown to the driver); nullopt otherwise.
std::optional<std::string> invalid_query_field(std::string_view output);

/// Names of the set bits: gpu_idle 0x1, applications_clocks_setting 0x2, sw_power_cap 0x4,
/// hw_slowdown 0x8, sync_boost 0x10, sw_thermal_slowdown 0x20, hw_thermal_slowdown 0x40,
/// hw_power_brake_slowdown 0x80, display_clock_setting 0x100; others "unknown_0x…".
std::vector<std::string> decode_clock_event_reasons(std::uint64_t mask);
/// Bits that mean the clocks are pulled down by power or heat (sw_power_cap, hw_slowdown,
/// sw/hw thermal, power brake): timings taken now are not representative.
inline constexpr std::uint64_t throttling_reasons_mask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

/// {index, sm_clock_mhz, max_sm_clock_mhz, clock_event_reasons_mask ("0x…" or null),
///  clock_event_reasons [names], throttled (bool or null), power_draw_w, temperature_c}.
json clock_state_json(const clock_state& s);

}  // namespace hotkernel
