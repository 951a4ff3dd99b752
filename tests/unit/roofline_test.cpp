// Roofline maths against hand-computed values (H200: 989.4 bf16 TFLOPS, 4800 GB/s).
#include <gtest/gtest.h>

#include <stdexcept>

#include "gpu/roofline.h"

using namespace hotkernel;

namespace {
void expect_within_pct(double got, double want, double pct = 0.01) {
    EXPECT_NEAR(got, want, std::abs(want) * pct / 100) << "got " << got << ", want " << want;
}
}  // namespace

TEST(roofline, h200_bf16_compute_bound) {
    // 2^40 flops over 384 MiB: AI = 2^40 / 402653184 = 2730.67 flop/B, ridge = 989.4e12 / 4.8e12
    // = 206.125, so compute-bound; floor = 2^40 / 989.4e12 s = 1.11129 ms.
    roofline_result r = compute_roofline({.flops = 1099511627776.0, .bytes = 402653184.0,
                                          .peak_tflops = 989.4, .peak_mem_gbs = 4800, .measured_mem_gbs = {}});
    expect_within_pct(r.arithmetic_intensity, 2730.6667);
    expect_within_pct(r.ridge_point, 206.125);
    EXPECT_EQ(r.bound, "compute");
    expect_within_pct(r.attainable_tflops, 989.4);
    expect_within_pct(r.attainable_ms, 1.1112913);
    EXPECT_FALSE(r.attainable_ms_measured.has_value());
}

TEST(roofline, h200_bf16_memory_bound_twin) {
    // 2^30 flops over 4 GiB: AI = 0.25 flop/B; attainable = 0.25 * 4.8e12 = 1.2 TFLOPS;
    // floor = 4294967296 / 4.8e12 s = 0.894785 ms; with 4250 GB/s measured, 1.010581 ms.
    roofline_result r = compute_roofline({.flops = 1073741824.0, .bytes = 4294967296.0,
                                          .peak_tflops = 989.4, .peak_mem_gbs = 4800, .measured_mem_gbs = 4250.0});
    expect_within_pct(r.arithmetic_intensity, 0.25);
    EXPECT_EQ(r.bound, "memory");
    expect_within_pct(r.attainable_tflops, 1.2);
    expect_within_pct(r.attainable_ms, 0.8947849);
    ASSERT_TRUE(r.attainable_ms_measured.has_value());
    expect_within_pct(*r.attainable_ms_measured, 1.0105805);
}

TEST(roofline, measured_bandwidth_leaves_the_compute_term_alone) {
    roofline_result r = compute_roofline({.flops = 1099511627776.0, .bytes = 402653184.0,
                                          .peak_tflops = 989.4, .peak_mem_gbs = 4800, .measured_mem_gbs = 4250.0});
    expect_within_pct(*r.attainable_ms_measured, 1.1112913);
    // A bandwidth so low that memory dominates: 402653184 B / 100e9 B/s = 4.026532 ms.
    r = compute_roofline({.flops = 1099511627776.0, .bytes = 402653184.0, .peak_tflops = 989.4,
                          .peak_mem_gbs = 4800, .measured_mem_gbs = 100.0});
    expect_within_pct(*r.attainable_ms_measured, 4.0265318);
}

TEST(roofline, zero_flops_is_a_pure_copy_and_the_ridge_is_compute) {
    roofline_result r = compute_roofline({.flops = 0, .bytes = 1e9, .peak_tflops = 100, .peak_mem_gbs = 1000,
                                          .measured_mem_gbs = {}});
    EXPECT_EQ(r.bound, "memory");
    EXPECT_DOUBLE_EQ(r.attainable_tflops, 0);
    expect_within_pct(r.attainable_ms, 1.0);
    // Exactly at the ridge (100 flop/B): both terms equal, reported as compute-bound.
    r = compute_roofline({.flops = 1e11, .bytes = 1e9, .peak_tflops = 100, .peak_mem_gbs = 1000,
                          .measured_mem_gbs = {}});
    EXPECT_EQ(r.bound, "compute");
    expect_within_pct(r.attainable_ms, 1.0);
}

TEST(roofline, rejects_bad_inputs) {
    EXPECT_THROW(compute_roofline({.flops = -1, .bytes = 1, .peak_tflops = 1, .peak_mem_gbs = 1, .measured_mem_gbs = {}}),
                 std::invalid_argument);
    EXPECT_THROW(compute_roofline({.flops = 1, .bytes = 0, .peak_tflops = 1, .peak_mem_gbs = 1, .measured_mem_gbs = {}}),
                 std::invalid_argument);
    EXPECT_THROW(compute_roofline({.flops = 1, .bytes = 1, .peak_tflops = 0, .peak_mem_gbs = 1, .measured_mem_gbs = {}}),
                 std::invalid_argument);
    EXPECT_THROW(compute_roofline({.flops = 1, .bytes = 1, .peak_tflops = 1, .peak_mem_gbs = 1, .measured_mem_gbs = -5.0}),
                 std::invalid_argument);
}

TEST(roofline, a_copy_of_the_calls_size_sets_the_measured_bandwidth) {
    // Measured: 8 MiB a call at 1500 GB/s, 128 MiB at 3500, 2 GiB (the large copy) at 4000.
    const std::vector<std::pair<double, double>> curve{{2147483648.0, 4000}, {8388608.0, 1500}, {134217728.0, 3500}};
    EXPECT_DOUBLE_EQ(bandwidth_at(curve, 8388608.0, 4000), 1500);      // at a point
    EXPECT_DOUBLE_EQ(bandwidth_at(curve, 1048576.0, 4000), 1500);      // below the smallest: its
    EXPECT_DOUBLE_EQ(bandwidth_at(curve, 8589934592.0, 4000), 4000);   // above the largest: its
    // 32 MiB is half way from 8 to 128 MiB in log(bytes): 1500 + 0.5 * 2000.
    expect_within_pct(bandwidth_at(curve, 33554432.0, 4000), 2500);
    // Never above the large copy's (a small point that read from L2 does not raise the floor).
    EXPECT_DOUBLE_EQ(bandwidth_at({{8388608.0, 9000}, {2147483648.0, 4000}}, 8388608.0, 4000), 4000);
    // No usable point: the large copy's at every size.
    EXPECT_DOUBLE_EQ(bandwidth_at({}, 8388608.0, 4000), 4000);
    EXPECT_DOUBLE_EQ(bandwidth_at({{0.0, 100}, {1e6, -1}}, 8388608.0, 4000), 4000);
}
