// A baseline from a git ref: the folder of a script as it is in a commit, copied out into a
// private temporary folder, so that `verify --baseline-ref main` compares the working copy with
// the base branch without a hand-made copy. git runs through the process runner (a timeout each).
#pragma once
#include <filesystem>
#include <string>

#include "process/runner.h"

namespace hotkernel {

/// The copied folder; removed when this goes out of scope.
class ref_checkout {
public:
    ref_checkout() = default;
    ref_checkout(const ref_checkout&) = delete;
    ref_checkout& operator=(const ref_checkout&) = delete;
    ref_checkout(ref_checkout&& other) noexcept;
    ref_checkout& operator=(ref_checkout&& other) noexcept;
    ~ref_checkout();

    std::filesystem::path script;  ///< the script's copy, under the temporary folder
    std::string ref;               ///< as given, e.g. "main"
    std::string commit;            ///< the full commit id it names
    std::string rel_path;          ///< the script's path inside the repository
    std::size_t files = 0;         ///< files copied (the script's folder, not its subfolders)

private:
    std::filesystem::path m_dir;
    friend ref_checkout checkout_script_at(const std::string&, const std::filesystem::path&, process_runner&,
                                           const cancel_token&);
};

/// Copies the files of `script`'s folder (not its subfolders) as they are at `ref` into a
/// temporary folder. Throws tool_error saying what failed (not a git repository, an unknown
/// ref, the script not in that commit) and what to do.
ref_checkout checkout_script_at(const std::string& ref, const std::filesystem::path& script, process_runner& runner,
                                const cancel_token& cancel);

}  // namespace hotkernel
