// Which GPUs a spread may use (pure): the `gpus` argument parsed, the cards nvidia-smi lists
// narrowed to an outer mask (CUDA_VISIBLE_DEVICES as indices or UUIDs, set by the user or by
// Slurm), then to what `gpus` asks for; and the slice of the CPU cores each card gets.
//
// Indices in `gpus` count the visible cards (inside the mask, in nvidia-smi's order), the way
// CUDA numbers them inside a mask, so `gpus: "0"` under CUDA_VISIBLE_DEVICES=2,3 is physical 2.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/nvidia_smi.h"

namespace hotkernel::scale {

/// What `gpus` asks for: every visible card, at most `count` of them, or the cards listed.
struct gpus_request {
    enum class kind { all, count, list } what = kind::all;
    std::size_t count = 0;
    std::vector<std::string> items;  ///< visible indices ("0") or UUIDs/prefixes ("GPU-1a2b")
};

/// "all", "N" (a count, >= 1), or a comma-separated list of visible indices and UUIDs ("0,2",
/// "GPU-1a2b…,GPU-3c4d…"; one index alone is written "2,"). Throws usage_error naming `gpus`.
gpus_request parse_gpus(std::string_view text);

/// The cards a process may use: `all` (nvidia-smi's list) inside the mask `cvd` (the value of
/// CUDA_VISIBLE_DEVICES; nullopt: unset, so every card), in the mask's order. Like CUDA, the
/// mask ends at its first entry that names no card; `why`, when given, says which one (and
/// when the mask holds a MIG instance, which a pool cannot lease). A UUID entry may be a prefix.
std::vector<gpu_record> visible_gpus(const std::vector<gpu_record>& all, const std::optional<std::string>& cvd,
                                     std::string* why = nullptr);

/// The cards `req` picks from `visible`. Throws tool_error saying what is visible when an index
/// or UUID names none of them or a count asks for more than there are.
std::vector<gpu_record> choose_gpus(const std::vector<gpu_record>& visible, const gpus_request& req);

/// Slot `slot` of `slots`'s share of `allowed` (sorted CPU numbers): contiguous, near-equal
/// slices; with fewer cores than slots, one core each, round robin. Empty when `allowed` is.
std::vector<int> core_slice(const std::vector<int>& allowed, std::size_t slot, std::size_t slots);

/// "0-3,8,10-11" (the kernel's cpulist form); "" for none.
std::string cpu_list_text(const std::vector<int>& cpus);

}  // namespace hotkernel::scale
