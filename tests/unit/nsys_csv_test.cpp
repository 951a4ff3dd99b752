// nsys kernel-summary parser on every documented header generation (no real nsys CSV exists:
// nsys cannot write reports on the H200 image, see tests/fixtures/h200/nsys-*.log).
#include <gtest/gtest.h>

#include <limits>

#include "nvidia/kernel_tables.h"
#include "parsers/nsys_csv.h"
#include "util/files.h"
#include "fixtures.h"

using namespace hotkernel;

namespace {
using hotkernel::test_fixtures::fixture;
}  // namespace

TEST(nsys_csv, current_cuda_gpu_kern_sum) {
    const auto s = parse_nsys_kern_sum(fixture("formats/nsys-cuda_gpu_kern_sum.csv"));
    ASSERT_TRUE(s.found_header);
    EXPECT_EQ(s.generation, "cuda_gpu_kern_sum");
    EXPECT_EQ(s.time_unit, "ns");
    ASSERT_EQ(s.kernels.size(), 3u);
    EXPECT_EQ(s.kernels[0].name, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");
    EXPECT_DOUBLE_EQ(s.kernels[0].total_ns, 3366773);
    EXPECT_EQ(s.kernels[0].instances, 5);
    EXPECT_DOUBLE_EQ(*s.kernels[0].med_ns, 672887);
    EXPECT_DOUBLE_EQ(*s.kernels[0].stddev_ns, 1511.2);
    // A quoted name with commas stays whole.
    EXPECT_NE(s.kernels[1].name.find("cunn_SoftMaxForwardReg<c10::BFloat16, float, float"), std::string::npos);
    EXPECT_DOUBLE_EQ(s.kernels[2].time_pct, 5.0);
}

TEST(nsys_csv, timeunit_us_is_converted_to_ns) {
    const auto s = parse_nsys_kern_sum(fixture("formats/nsys-cuda_gpu_kern_sum-us.csv"));
    EXPECT_EQ(s.time_unit, "us");
    ASSERT_EQ(s.kernels.size(), 2u);
    EXPECT_DOUBLE_EQ(s.kernels[0].total_ns, 400000);
    EXPECT_DOUBLE_EQ(*s.kernels[0].min_ns, 98000);
    EXPECT_DOUBLE_EQ(*s.kernels[1].avg_ns, 10000);
    EXPECT_EQ(s.kernels[0].name, "gemm_kernel<float, 128, 128>(const float *, float *, int)");
}

TEST(nsys_csv, middle_generation_rows_per_grid_block_are_added_up) {
    const auto s = parse_nsys_kern_sum(fixture("formats/nsys-gpukernsum-gridblock.csv"));
    EXPECT_EQ(s.generation, "gpukernsum-gridblock");
    ASSERT_EQ(s.kernels.size(), 2u);
    const auto& k = s.kernels[0];
    EXPECT_EQ(k.merged_rows, 2);
    EXPECT_EQ(k.instances, 4);
    EXPECT_DOUBLE_EQ(k.total_ns, 9000);
    EXPECT_DOUBLE_EQ(*k.avg_ns, 2250);
    EXPECT_DOUBLE_EQ(*k.min_ns, 1900);
    EXPECT_DOUBLE_EQ(*k.max_ns, 3000);
    EXPECT_FALSE(k.med_ns);
    EXPECT_NEAR(*k.stddev_ns, 441.59, 0.01);  // pooled over both groups
    EXPECT_DOUBLE_EQ(k.time_pct, 90.0);
    ASSERT_EQ(s.warnings.size(), 1u);
    EXPECT_EQ(s.warnings[0].id, finding_id::kernel_rows_merged);
}

TEST(nsys_csv, merged_instance_counts_saturate_instead_of_overflowing) {
    // A corrupt file (from fuzz_nsys_csv) whose rows of one kernel carry counts near 2^63.
    const auto s = parse_nsys_kern_sum(
        "Time (%),Total Time (ns),Instances,GridXYZ,Name\n"
        "50.0,100,8222222222222222222,1 1 1,k\n"
        "50.0,100,2222222222222222222,2 1 1,k\n");
    ASSERT_EQ(s.kernels.size(), 1u);
    EXPECT_EQ(s.kernels[0].merged_rows, 2);
    EXPECT_EQ(s.kernels[0].instances, std::numeric_limits<long long>::max());
    EXPECT_DOUBLE_EQ(s.kernels[0].total_ns, 200);
}

TEST(nsys_csv, legacy_generation_average_minimum_maximum) {
    const auto s = parse_nsys_kern_sum(fixture("formats/nsys-gpukernsum-legacy.csv"));
    EXPECT_EQ(s.generation, "gpukernsum-legacy");
    ASSERT_EQ(s.kernels.size(), 2u);
    EXPECT_DOUBLE_EQ(*s.kernels[0].avg_ns, 185000);
    EXPECT_DOUBLE_EQ(*s.kernels[0].min_ns, 180000);
    EXPECT_DOUBLE_EQ(*s.kernels[0].max_ns, 190000);
    EXPECT_FALSE(s.kernels[0].med_ns);
    EXPECT_FALSE(s.kernels[0].stddev_ns);
    EXPECT_DOUBLE_EQ(s.kernels[0].time_pct, 92.5);
}

TEST(nsys_csv, stdout_with_preamble_and_a_second_table) {
    const auto s = parse_nsys_kern_sum(fixture("formats/nsys-stats-stdout.txt"));
    ASSERT_TRUE(s.found_header);
    ASSERT_EQ(s.kernels.size(), 1u);  // the cuda_api_sum table after the blank line is not read
    EXPECT_EQ(s.kernels[0].name, "void saxpy<float>(int, T1, const T1 *, T1 *)");
    EXPECT_DOUBLE_EQ(s.kernels[0].total_ns, 57920);
}

TEST(nsys_csv, report_without_kernels) {
    const auto s = parse_nsys_kern_sum(fixture("formats/nsys-no-kernel-data.txt"));
    EXPECT_FALSE(s.found_header);
    EXPECT_TRUE(s.no_kernel_data);
    EXPECT_TRUE(s.kernels.empty());
}

TEST(nsys_csv, not_an_nsys_file) {
    EXPECT_FALSE(parse_nsys_kern_sum(fixture("h200/ncu-2025.3.1-saxpy.csv")).found_header);
    EXPECT_FALSE(parse_nsys_kern_sum(fixture("h200/nsys-2025.3.1-qdstrm-only.log")).found_header);
    EXPECT_FALSE(parse_nsys_kern_sum("").found_header);
}

TEST(nsys_csv, kernel_table_shares_and_limit) {
    const auto s = parse_nsys_kern_sum(fixture("formats/nsys-cuda_gpu_kern_sum.csv"));
    const auto t = nsys_kernel_table(s, 2);
    EXPECT_EQ(t["kernel_count"], 3);
    ASSERT_EQ(t["kernels"].size(), 2u);
    EXPECT_EQ(t["kernels"][0]["calls"], 5);
    EXPECT_NEAR(t["kernels"][0]["time_pct"].get<double>(), 74.12, 0.01);  // recomputed over the file's kernels
    EXPECT_EQ(t["total_kernel_time_ns"], 3366773 + 949525 + 225918);
}
