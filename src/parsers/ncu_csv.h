// Nsight Compute `--csv --page details` output: per-launch rows keyed by ID, with the tool's
// preamble (==PROF==, the program's own stdout), ragged metric rows, rule rows, units and
// thousands separators. Also reads the "No kernels were profiled" text. Pure: text in.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hotkernel {

struct ncu_metric {
    std::string section;
    std::string name;
    std::string unit;
    std::string value_text;          ///< as printed ("57,920", "PolicySpread", "n/a")
    std::optional<double> value;     ///< parsed number, separators removed
};

struct ncu_rule {
    std::string section;
    std::string name;                ///< SOLBottleneck, AchievedOccupancy, ...
    std::string type;                ///< OPT, WRN, INF
    std::string description;
    std::string speedup_type;        ///< local / global
    std::optional<double> estimated_speedup_pct;
};

/// One profiled kernel launch (one ID) with the headline metrics normalised.
struct ncu_launch {
    std::string id;
    std::string kernel_name;
    std::string process_name;
    std::string block_size;          ///< "(256, 1, 1)"
    std::string grid_size;
    std::string device;
    std::string cc;
    std::vector<ncu_metric> metrics;
    std::vector<ncu_rule> rules;

    std::optional<double> duration_ns;
    std::optional<double> achieved_occupancy_pct;
    std::optional<double> theoretical_occupancy_pct;
    std::optional<double> dram_throughput_pct;
    std::optional<double> memory_throughput_pct;
    std::optional<double> sm_throughput_pct;
    std::optional<double> registers_per_thread;

    /// The first metric with this display name (any section), or nullptr.
    [[nodiscard]] const ncu_metric* find(std::string_view metric_name) const;
};

struct ncu_report {
    std::vector<ncu_launch> launches;        ///< in file order
    std::vector<std::string> header;         ///< the CSV header, as found
    std::vector<std::string> preamble;       ///< lines before the header (tool and program output)
    std::vector<std::string> errors;         ///< ==ERROR== lines
    bool no_kernels_profiled = false;        ///< "==WARNING== No kernels were profiled."
    std::vector<std::string> available_kernels;  ///< the list ncu prints after that warning
    bool found_header = false;
};

/// Parses a details-page CSV (live or --import). Never throws on odd input: what it cannot
/// read is left out, and found_header says whether a table was seen at all.
ncu_report parse_ncu_csv(std::string_view text);

/// A time in ns from a value and its ncu unit (ns, us, usecond, msecond, s, ...); nullopt
/// for a unit that is not a time.
std::optional<double> ncu_time_to_ns(double value, std::string_view unit);

/// memory / compute / latency, with a sentence that says what the numbers mean.
struct ncu_bound_hint {
    std::string bound;   ///< "memory", "compute", "latency", or "unknown"
    std::string hint;
};
ncu_bound_hint ncu_classify(const ncu_launch& launch);

}  // namespace hotkernel
