// LEADERBOARD.md as a pure function of the result files under results/.
//
// One section per target and GPU (sorted by target, then GPU), rows best first: `faster` by
// speedup (highest first), then `no gain` (inconclusive, slower), then `incorrect`, then
// `invalid`; ties by recording time (newest first), then file path. The Speedup cell is filled
// only for `faster`; every row cites n and seed and the file it came from. Same entries in,
// same bytes out: nothing here reads the clock or the disk.
#pragma once
#include <string>
#include <vector>

#include "util/json.h"

namespace hotkernel {

/// One result file: its path relative to the results folder ("gelu/2026...-ab12cd.json")
/// and its parsed content ({format: 1, target, recorded_utc, note, who, result: {...}}).
struct result_entry {
    std::string rel_path;
    json doc;
};

/// A file under results/ that is not a hotkernel result, and why.
struct skipped_file {
    std::string rel_path;
    std::string reason;
};

/// Why a parsed file is not a usable result entry; empty when it is.
std::string check_result_doc(const json& doc);

/// "GPU name" of the verify result's measurement record, "CPU (no GPU)" when it had none.
std::string gpu_label(const json& verify_result);

/// The Speedup cell: "1.23×" for faster, else "no gain", "incorrect" or "invalid".
std::string speedup_cell(const json& verify_result);

/// One table row (markdown, no trailing newline) for an entry; `rank` is its place in its section.
/// workloads: the section's workloads' names (a cell each, in this order); empty for one-shape targets.
std::string render_row(const result_entry& e, std::size_t rank, const std::vector<std::string>& workloads = {});

/// The whole file. `results_label` is how the folder is named in the header ("results/").
std::string render_leaderboard(const std::vector<result_entry>& entries, const std::vector<skipped_file>& skipped,
                               const std::string& results_label = "results/");

}  // namespace hotkernel
