// The C++ half of the kernel sandbox: the run's scratch folder, the per-role compiler caches and
// what a result says about the sandbox in force.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/measure.h"
#include "measure/sandbox.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {
struct temp_root {
    fs::path path = make_temp_dir("hk-sandbox-test");
    ~temp_root() { remove_tree(path); }
};

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

run_record with_sandbox(json s) {
    run_record r;
    r.sandbox = std::move(s);
    return r;
}

const json confined = json{{"landlock_abi", 7}, {"fs", "read-only outside scratch"}, {"signals", "scoped"}};
}  // namespace

TEST(RunScratch, IsPrivateAndRemovedWithWhatTheRunLeftInIt) {
    temp_root root;
    fs::path kept;
    {
        run_scratch s = run_scratch::make(root.path);
        kept = s.path();
        struct stat st {};
        ASSERT_EQ(::stat(kept.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0700u);
        fs::create_directories(kept / "a" / "b");
        write(kept / "a" / "b" / "f", "x");
        ::chmod((kept / "a").c_str(), 0);  // a run may leave a folder nobody can list
    }
    EXPECT_FALSE(fs::exists(kept));
}

TEST(RunScratch, SweepsFoldersOfHotkernelsThatAreGoneButNotOfLiveOnes) {
    temp_root root;
    const pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    ::waitpid(dead, nullptr, 0);
    const fs::path stale = root.path / ("run-" + std::to_string(dead) + "-abc");
    const fs::path live = root.path / ("run-" + std::to_string(::getppid()) + "-abc");
    const fs::path other = root.path / "not-a-run";
    for (const auto& d : {stale, live, other}) fs::create_directories(d / "x");
    run_scratch s = run_scratch::make(root.path);
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_TRUE(fs::exists(live));
    EXPECT_TRUE(fs::exists(other));
    EXPECT_TRUE(fs::exists(s.path()));
}

TEST(CompilerCaches, OnePerRoleAndScriptAndReusedForTheSameScript) {
    temp_root root;
    write(root.path / "a.py", "def kernel(x): return x\n");
    write(root.path / "b.py", "def kernel(x): return x + 0\n");
    const auto base = compiler_caches("baseline", root.path / "a.py", root.path / "compile");
    const auto cand = compiler_caches("candidate", root.path / "a.py", root.path / "compile");
    const auto other = compiler_caches("candidate", root.path / "b.py", root.path / "compile");
    const auto again = compiler_caches("candidate", root.path / "a.py", root.path / "compile");
    for (const char* k : {"TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "CUDA_CACHE_PATH", "TORCH_EXTENSIONS_DIR"}) {
        ASSERT_TRUE(base.count(k)) << k;
        EXPECT_TRUE(fs::is_directory(base.at(k))) << k;
        EXPECT_NE(base.at(k), cand.at(k)) << k;  // a candidate never writes the baseline's cache
        EXPECT_NE(cand.at(k), other.at(k)) << k;
        EXPECT_EQ(cand.at(k), again.at(k)) << k;  // kept across runs: no recompiling every run
    }
}

TEST(DescribeSandbox, SaysWhatWasInForceOnEveryRun) {
    run_record a = with_sandbox(confined), b = with_sandbox(confined);
    json result, warnings = json::array();
    describe_sandbox({&a, &b}, result, warnings);
    EXPECT_EQ(result["sandbox"], confined);
    EXPECT_TRUE(warnings.empty());
    run_record r = with_sandbox(confined);
    EXPECT_EQ(r.to_json()["sandbox"], confined);  // and each run record keeps its own
}

TEST(DescribeSandbox, WarnsWhenARunWentWithoutIt) {
    run_record a = with_sandbox(confined);
    run_record b = with_sandbox(json{{"landlock_abi", 0}, {"fs", "none"}, {"signals", "none"},
                                     {"missing", "Landlock (the kernel has none, or it is not enabled at boot)"}});
    json result, warnings = json::array();
    describe_sandbox({&a, &b}, result, warnings);
    EXPECT_EQ(result["sandbox"]["runs_differ"], true);
    EXPECT_EQ(result["sandbox"]["records"].size(), 2u);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0]["id"], "measured_unsandboxed");
    EXPECT_NE(warnings[0]["message"].get<std::string>().find("no Landlock"), std::string::npos);
}

TEST(DescribeSandbox, NothingWhenNoRunReportedOne) {
    run_record a;
    json result, warnings = json::array();
    describe_sandbox({&a}, result, warnings);
    EXPECT_FALSE(result.contains("sandbox"));
    EXPECT_TRUE(warnings.empty());
}
