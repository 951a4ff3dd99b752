// The C++ half of the kernel sandbox (python/hotkernel_sandbox.py applies it inside the run):
// the folders a trusted run may write, made here and handed to it on its secret stdin line, and
// what bench/verify say about the sandbox that was in force.
//
// - a scratch folder per run (0700, cache_dir()/scratch/run-<hotkernel pid>-<random>), where
//   TMPDIR points; removed when the run ends however it ended, and swept at the next run when a
//   hotkernel was killed before it could remove its own;
// - compiler caches per role and per script hash (cache_dir()/compile/<role>-<sha256[:16]>/),
//   kept across runs so Triton, torch.compile and CUDA extensions do not recompile every run,
//   and never shared between roles: a candidate cannot write (poison) the baseline's cache.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/json.h"

namespace hotkernel {

struct run_record;

/// A run's private scratch folder, removed (with everything in it) on destruction.
class run_scratch {
public:
    /// Makes a fresh folder under `root` (default cache_dir()/"scratch"), mode 0700, after
    /// removing folders there left by hotkernel processes that no longer exist.
    static run_scratch make(const std::filesystem::path& root = {});
    run_scratch(run_scratch&& o) noexcept : m_path(std::move(o.m_path)) { o.m_path.clear(); }
    run_scratch(const run_scratch&) = delete;
    run_scratch& operator=(const run_scratch&) = delete;
    run_scratch& operator=(run_scratch&&) = delete;
    ~run_scratch();
    [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

private:
    explicit run_scratch(std::filesystem::path p) : m_path(std::move(p)) {}
    std::filesystem::path m_path;
};

/// Removes `dir` and everything in it, also where the run made folders it cannot be listed in
/// (their modes are restored first). Errors are ignored: a later sweep tries again.
void remove_tree(const std::filesystem::path& dir);

/// The compiler caches of one role ("bench", "baseline", "candidate") and script, created:
/// environment variable -> folder (TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, CUDA_CACHE_PATH,
/// TORCH_EXTENSIONS_DIR, PYTORCH_KERNEL_CACHE_PATH). `root` defaults to cache_dir()/"compile".
std::map<std::string, std::filesystem::path> compiler_caches(const std::string& role,
                                                             const std::filesystem::path& script,
                                                             const std::filesystem::path& root = {});

/// result["sandbox"]: what was in force (each run's `sandbox` record from its line, less its
/// threads_before; the same on every run, or "runs_differ" with each distinct record), and a
/// warning where a run went without
/// the filesystem sandbox (allowed by allow_unsandboxed). Nothing when no run reported one.
void describe_sandbox(const std::vector<const run_record*>& runs, json& result, json& warnings);

}  // namespace hotkernel
