// The spread between a baseline's processes that bench keeps for verify's floors.
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "gpu/gpu_query.h"
#include "measure/process_spread.h"
#include "stats/summary.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {

json bench_of_workloads(double cv_a, double cv_b, std::size_t n = 10, bool ok = true) {
    return json{{"script", "g/gelu4_baseline.py"}, {"target", "gelu4"}, {"n", n}, {"cv_pct", 0.01}, {"ok", ok},
                {"workloads", json::array({json{{"name", "M=2048"}, {"cv_pct", cv_a}},
                                           json{{"name", "M=4096"}, {"cv_pct", cv_b}}})}};
}

// XDG_CACHE_HOME pointed at a fresh folder for one test, put back after.
struct temp_cache {
    fs::path dir = make_temp_dir("hk-spread");
    std::string saved;
    bool had = false;
    temp_cache() {
        if (const char* old = std::getenv("XDG_CACHE_HOME")) had = true, saved = old;
        ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
    }
    ~temp_cache() {
        if (had) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
        else ::unsetenv("XDG_CACHE_HOME");
        fs::remove_all(dir);
    }
};

}  // namespace

TEST(ProcessSpread, BenchKeepsTheWidestWorkloadsSpreadOverItsRuns) {
    // A kernel that spreads at one shape only: the floor must hold at that shape too.
    const auto rec = spread_record_of_bench(bench_of_workloads(0.02, 0.09));
    ASSERT_TRUE(rec.has_value());
    EXPECT_DOUBLE_EQ((*rec)["cv_pct"].get<double>(), 0.09);
    EXPECT_EQ((*rec)["processes"].get<std::size_t>(), 10u);
    EXPECT_DOUBLE_EQ((*rec)["workloads"]["M=2048"].get<double>(), 0.02);
    // One shape: the runs' own cv.
    const auto one = spread_record_of_bench(json{{"n", 6}, {"cv_pct", 0.05}, {"ok", true}});
    ASSERT_TRUE(one.has_value());
    EXPECT_DOUBLE_EQ((*one)["cv_pct"].get<double>(), 0.05);
}

TEST(ProcessSpread, TooFewRunsOrAFailedRunKeepNothing) {
    EXPECT_FALSE(spread_record_of_bench(bench_of_workloads(0.02, 0.09, 2)).has_value());
    EXPECT_FALSE(spread_record_of_bench(bench_of_workloads(0.02, 0.09, 10, false)).has_value());
    EXPECT_FALSE(spread_record_of_bench(json{{"n", 10}, {"ok", true}, {"cv_pct", nullptr}}).has_value());
    json no_name = bench_of_workloads(0.02, 0.09);
    no_name["workloads"][1].erase("name");
    EXPECT_FALSE(spread_record_of_bench(no_name).has_value());
}

TEST(ProcessSpread, TheBoundIsTheCvsUpperBoundOverItsProcesses) {
    const auto p = spread_in_record(json{{"cv_pct", 0.06}, {"processes", 10}}, "here");
    ASSERT_TRUE(p.has_value());
    EXPECT_DOUBLE_EQ(p->measured, 0.0006);
    EXPECT_DOUBLE_EQ(p->bound, spread_upper_bound(0.0006, 10));
    EXPECT_GT(p->bound, p->measured);
    EXPECT_NE(p->source.find("bench measured over 10 processes"), std::string::npos) << p->source;
    EXPECT_TRUE(p->benched);  // the target's own: verify says nothing of a missing bench
    EXPECT_FALSE(spread_in_record(json{{"cv_pct", -1}, {"processes", 10}}, "").has_value());
    EXPECT_FALSE(spread_in_record(json{{"cv_pct", 0.06}, {"processes", 1}}, "").has_value());
    EXPECT_FALSE(spread_in_record(json{{"cv_pct", 0.06}, {"processes", 1e30}}, "").has_value());
    EXPECT_FALSE(spread_in_record(json{{"cv_pct", 0}, {"processes", 10}}, "").has_value());
}

TEST(ProcessSpread, VerifyTakesTheWiderOfCalibratesAndBenchs) {
    const process_spread copy{.measured = 0.00006, .bound = 0.00013, .processes = 6, .source = "calibrate"};
    const process_spread gelu{.measured = 0.0006, .bound = 0.0009, .processes = 10, .source = "bench", .benched = true};
    EXPECT_EQ(wider_spread(copy, gelu).source, "bench");
    EXPECT_FALSE(wider_spread(copy, std::nullopt).benched);
    // A steady kernel benched over many runs can have a narrower bound than the copy's: the copy's
    // floors hold, and a bench was still there (verify does not ask for one).
    const process_spread steady{.measured = 0.00002, .bound = 0.00003, .processes = 40, .source = "bench", .benched = true};
    EXPECT_EQ(wider_spread(copy, steady).source, "calibrate");
    EXPECT_TRUE(wider_spread(copy, steady).benched);
    EXPECT_EQ(wider_spread(gelu, copy).source, "bench");
    EXPECT_EQ(wider_spread(copy, std::nullopt).source, "calibrate");
    EXPECT_EQ(wider_spread(std::nullopt, gelu).source, "bench");
    EXPECT_EQ(wider_spread(std::nullopt, std::nullopt).bound, 0);
}

TEST(ProcessSpread, KeptPerCardAndPerBaselineBytes) {
    temp_cache cache;
    const std::string uuid = "GPU-11024152-b4e3-c226-dab9-a687565cea64";
    const std::string sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const auto rec = spread_record_of_bench(bench_of_workloads(0.02, 0.09));
    ASSERT_TRUE(rec.has_value());
    EXPECT_FALSE(read_target_spread(uuid, sha).has_value());
    const fs::path path = save_target_spread(uuid, sha, *rec);
    EXPECT_EQ(path, cache.dir / "hotkernel" / "spread" / uuid / "0123456789abcdef.json");
    const auto back = read_target_spread(uuid, sha);
    ASSERT_TRUE(back.has_value());
    EXPECT_DOUBLE_EQ(back->measured, 0.0009);
    // Another card, or another baseline whose hash shares the file's 16 characters: not this one's.
    EXPECT_FALSE(read_target_spread("GPU-other", sha).has_value());
    EXPECT_FALSE(read_target_spread(uuid, sha.substr(0, 16) + std::string(48, '0')).has_value());
    // A uuid that could leave the folder writes and reads nothing.
    EXPECT_TRUE(save_target_spread("../x", sha, *rec).empty());
    EXPECT_FALSE(read_target_spread("../x", sha).has_value());
    // A damaged file is as if bench had not measured.
    write_file_atomic(path, "{not json");
    EXPECT_FALSE(read_target_spread(uuid, sha).has_value());
}

TEST(ProcessSpread, KeyedByTheBaselinesBytesAndItsArguments) {
    const fs::path dir = make_temp_dir("hk-spread-key");
    const fs::path script = dir / "b.py";
    write_file_atomic(script, "print(1)\n");
    const std::string k = baseline_key(script, {});
    EXPECT_EQ(k.size(), 64u);
    EXPECT_EQ(baseline_key(script, {}), k);
    EXPECT_NE(baseline_key(script, {"--shape", "8x8"}), k);
    EXPECT_NE(baseline_key(script, {"--shape8x8"}), baseline_key(script, {"--shape", "8x8"}));
    write_file_atomic(script, "print(2)\n");
    EXPECT_NE(baseline_key(script, {}), k);
    EXPECT_THROW(baseline_key(dir / "missing.py", {}), std::exception);
    fs::remove_all(dir);
}

TEST(ProcessSpread, CalibratesCopySpreadIsReadAsItsUpperBound) {
    temp_cache cache;
    const std::string uuid = "GPU-11024152-b4e3-c226-dab9-a687565cea64";
    EXPECT_FALSE(read_calibrated_spread(uuid).has_value());
    write_file_atomic(calibration_path(uuid), R"({"mem_gbs": 3045, "process_spread_pct": 0.006})");
    const auto p = read_calibrated_spread(uuid);
    ASSERT_TRUE(p.has_value());
    EXPECT_DOUBLE_EQ(p->measured, 0.00006);
    EXPECT_DOUBLE_EQ(p->bound, spread_upper_bound(0.006, 6) / 100.0);
    EXPECT_FALSE(p->benched);
    EXPECT_NE(p->source.find("calibrate measured over 6 processes"), std::string::npos) << p->source;
    write_file_atomic(calibration_path(uuid), "{not json");  // damaged: no floor from it, no throw
    EXPECT_FALSE(read_calibrated_spread(uuid).has_value());
    EXPECT_FALSE(read_calibrated_spread("../x").has_value());
}
