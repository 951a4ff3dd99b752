// The results folder: writing one verify result atomically, reading every result back, and
// regenerating LEADERBOARD.md under a file lock so concurrent `record`s lose no row.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "store/leaderboard.h"
#include "util/json.h"

namespace hotkernel {

/// The target a verify result belongs to: its `target` field (protocol-3 scripts report it),
/// else the candidate script's stem. Sanitised to a folder name ([A-Za-z0-9._-], no leading dot).
std::string result_target(const json& verify_result);

/// A string made safe as one path component ("my kernel/v2" -> "my_kernel_v2"); never empty.
std::string safe_component(std::string_view s);

/// Why `result` is not a verify result (missing verdict, baseline, candidate); empty if it is.
std::string check_verify_result(const json& result);

/// Every file under `dir` (recursively, hidden files and folders skipped: temp files and the
/// lock), sorted by path: parsed results, and the files that are not results with a reason.
/// Never throws for a bad file; a missing folder gives no entries.
void scan_results(const std::filesystem::path& dir, std::vector<result_entry>& entries,
                  std::vector<skipped_file>& skipped);

struct record_outcome {
    std::filesystem::path file;         ///< the result file written
    std::string rel_path;               ///< its path under the results folder
    std::string target;
    std::filesystem::path leaderboard;
    std::size_t rows = 0;               ///< rows in the regenerated leaderboard
    std::size_t sections = 0;
    std::string row;                    ///< this result's row as it appears in the leaderboard
    std::vector<skipped_file> skipped;
};

/// Writes results/<target>/<UTC timestamp>-<id>.json atomically, then regenerates the
/// leaderboard from every file under results/ while holding an exclusive flock on
/// results/.lock. `now_utc` is "YYYY-MM-DDTHH:MM:SSZ". Throws tool_error naming the path and
/// the fix (read-only folder, full disk); a file already there is never touched.
record_outcome record_result(const json& verify_result, const std::string& note, const std::string& who,
                             const std::filesystem::path& results_dir, const std::filesystem::path& leaderboard,
                             const std::string& now_utc);

/// Current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now_iso();

}  // namespace hotkernel
