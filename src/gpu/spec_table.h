// The GPU datasheet table (data/gpu-specs.csv, embedded at build time) and lookup by table
// key or nvidia-smi name, for gpu_info and roofline. All tensor peaks are DENSE (no 2:4
// sparsity); fp16 means FP16 inputs with FP32 accumulate; int8 is in TOPS.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.h"

namespace hotkernel {

/// Dtypes the table has peak columns for, in the order results list them.
inline const std::vector<std::string> spec_dtypes = {"bf16", "fp16", "fp8", "fp32", "tf32", "int8"};

/// One row of the table. Empty CSV cells become nullopt / an absent dtype.
struct gpu_spec {
    std::string key;                              ///< e.g. "h200_sxm"
    std::vector<std::string> nvidia_smi_names;    ///< e.g. {"NVIDIA H200"}
    std::optional<std::string> compute_capability;  ///< "9.0"
    std::optional<int> sm_count;
    std::optional<double> boost_mhz;              ///< max SM clock (datacenter) or rated boost
    std::optional<double> l2_mib;                 ///< the CSV's l2_mb: NVIDIA's "MB" are MiB
    std::optional<double> memory_gb;              ///< decimal GB as NVIDIA prints it
    std::optional<double> mem_gbs;                ///< peak DRAM bandwidth [GB/s, 1e9 B/s]
    std::optional<double> tdp_w;
    std::map<std::string, double> peak_tflops;    ///< dtype -> dense peak [TFLOPS; TOPS for int8]
    std::string source;                           ///< S-tags of gpu-specs.md

    /// Peak for a dtype, nullopt when the card has no such tensor path / no published figure.
    [[nodiscard]] std::optional<double> peak(std::string_view dtype) const;
    /// The name to show: the first nvidia-smi name, else the key.
    [[nodiscard]] std::string display_name() const;
    /// {key, nvidia_smi_names, compute_capability, sm_count, boost_mhz, l2_mib, memory_gb,
    ///  mem_gbs, tdp_w, peak_tflops{dtype: value}, source}; missing values are null.
    [[nodiscard]] json to_json() const;
};

/// JSON Schema of gpu_spec::to_json() (for tool output schemas).
json gpu_spec_schema();

class spec_table {
public:
    /// Parses the CSV (header row with the columns of data/gpu-specs.csv; nvidia_smi_names is
    /// ';'-separated). Throws std::runtime_error naming the row on a malformed table.
    static spec_table parse(std::string_view csv_text);
    /// The table embedded in the binary (parsed once).
    static const spec_table& builtin();

    /// Case-insensitive lookup by key ("h200_sxm"), nvidia-smi name ("NVIDIA H200"), that name
    /// without its "NVIDIA "/"Tesla "/"GeForce " prefix ("h200", "A100-SXM4-80GB"), with '-',
    /// '_' and spaces treated alike; a MIG name ("NVIDIA A100-SXM4-40GB MIG 1g.5gb") maps to
    /// its parent GPU. nullptr when nothing matches.
    [[nodiscard]] const gpu_spec* find(std::string_view name) const;
    /// Up to `max_results` keys of rows whose key or names are close to `name`, best first.
    [[nodiscard]] std::vector<std::string> suggestions(std::string_view name, std::size_t max_results = 5) const;
    [[nodiscard]] const std::vector<gpu_spec>& entries() const { return m_entries; }

private:
    std::vector<gpu_spec> m_entries;
    std::map<std::string, std::size_t> m_aliases;  ///< normalised alias -> index in m_entries
};

/// Lower-case, '-'/'_'/runs of spaces -> one space, trimmed: the form aliases are compared in.
std::string normalize_gpu_name(std::string_view name);
/// "NVIDIA A100-SXM4-40GB MIG 1g.5gb" -> "NVIDIA A100-SXM4-40GB"; other names unchanged.
std::string strip_mig_suffix(std::string_view name);
/// True when the name is a MIG instance name ("... MIG 1g.5gb").
bool is_mig_name(std::string_view name);

}  // namespace hotkernel
