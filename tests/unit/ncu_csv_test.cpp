// ncu details-page CSV parser on the real H200 capture and on each documented layout.
#include <gtest/gtest.h>

#include "nvidia/kernel_tables.h"
#include "parsers/ncu_csv.h"
#include "util/files.h"
#include "fixtures.h"

using namespace hotkernel;

namespace {
using hotkernel::test_fixtures::fixture;
}  // namespace

TEST(ncu_csv, real_saxpy_capture_with_preamble_ragged_rows_and_rules) {
    const auto rep = parse_ncu_csv(fixture("h200/ncu-2025.3.1-saxpy.csv"));
    ASSERT_TRUE(rep.found_header);
    EXPECT_EQ(rep.header.size(), 20u);
    // ==WARNING==, ==PROF== and the program's own "no error" come before the header.
    ASSERT_EQ(rep.preamble.size(), 4u);
    EXPECT_EQ(rep.preamble[2], "no error");
    EXPECT_FALSE(rep.no_kernels_profiled);
    ASSERT_EQ(rep.launches.size(), 1u);
    const auto& l = rep.launches[0];
    EXPECT_EQ(l.id, "0");
    EXPECT_EQ(l.kernel_name, "void saxpy<float>(int, T1, const T1 *, T1 *)");  // quoted, with commas
    EXPECT_EQ(l.block_size, "(256, 1, 1)");
    EXPECT_EQ(l.grid_size, "(65536, 1, 1)");
    EXPECT_EQ(l.cc, "9.0");
    ASSERT_TRUE(l.duration_ns);
    EXPECT_DOUBLE_EQ(*l.duration_ns, 57920);  // "57,920" ns
    EXPECT_DOUBLE_EQ(*l.achieved_occupancy_pct, 74.49);
    EXPECT_DOUBLE_EQ(*l.dram_throughput_pct, 65.69);
    EXPECT_DOUBLE_EQ(*l.sm_throughput_pct, 34.76);
    EXPECT_DOUBLE_EQ(*l.registers_per_thread, 16);
    EXPECT_DOUBLE_EQ(*l.theoretical_occupancy_pct, 100);
    // Thousands separators in big values, non-numeric values kept as text.
    EXPECT_DOUBLE_EQ(*l.find("SM Frequency")->value, 1976927227.21);
    EXPECT_DOUBLE_EQ(*l.find("Threads")->value, 16777216);
    EXPECT_FALSE(l.find("Cluster Scheduling Policy")->value);
    EXPECT_EQ(l.find("Cluster Scheduling Policy")->value_text, "PolicySpread");
    // Rule rows (20 fields, empty Metric Name) are rules, not metrics.
    ASSERT_EQ(l.rules.size(), 2u);
    EXPECT_EQ(l.rules[0].name, "SOLBottleneck");
    EXPECT_EQ(l.rules[0].type, "OPT");
    EXPECT_EQ(l.rules[0].section, "SpeedOfLight");
    EXPECT_FALSE(l.rules[0].estimated_speedup_pct);
    EXPECT_EQ(l.rules[1].name, "AchievedOccupancy");
    EXPECT_EQ(l.rules[1].speedup_type, "local");
    EXPECT_DOUBLE_EQ(*l.rules[1].estimated_speedup_pct, 25.51);
    for (const auto& m : l.metrics) EXPECT_FALSE(m.name.empty());
    EXPECT_EQ(l.metrics.size(), 50u);
}

TEST(ncu_csv, saxpy_is_memory_bound) {
    const auto rep = parse_ncu_csv(fixture("h200/ncu-2025.3.1-saxpy.csv"));
    const auto hint = ncu_classify(rep.launches.at(0));
    EXPECT_EQ(hint.bound, "memory");
    EXPECT_NE(hint.hint.find("65.7%"), std::string::npos);
}

TEST(ncu_csv, real_no_kernels_profiled_lists_what_ran) {
    const auto rep = parse_ncu_csv(fixture("h200/ncu-2025.3.1-no-kernels-matched.txt"));
    EXPECT_FALSE(rep.found_header);
    EXPECT_TRUE(rep.no_kernels_profiled);
    ASSERT_EQ(rep.available_kernels.size(), 2u);
    EXPECT_EQ(rep.available_kernels[0], "distribution_elementwise_grid_stride_kernel");
    EXPECT_EQ(rep.available_kernels[1], "vectorized_elementwise_kernel");
    const auto msg = ncu_nothing_profiled_message(rep, " matching regex 'gelu'");
    EXPECT_NE(msg.find("2. vectorized_elementwise_kernel"), std::string::npos);
    EXPECT_NE(msg.find("'gelu'"), std::string::npos);
}

TEST(ncu_csv, fifteen_column_layout_without_rule_columns) {
    const auto rep = parse_ncu_csv(fixture("formats/ncu-details-15col.csv"));
    ASSERT_EQ(rep.launches.size(), 2u);
    EXPECT_EQ(rep.preamble.size(), 3u);
    EXPECT_NE(rep.launches[0].kernel_name.find("GeluCUDAKernelImpl"), std::string::npos);
    EXPECT_DOUBLE_EQ(*rep.launches[0].duration_ns, 41380);     // usecond
    EXPECT_DOUBLE_EQ(*rep.launches[1].duration_ns, 1.21e6);    // msecond
    EXPECT_EQ(ncu_classify(rep.launches[0]).bound, "memory");
    EXPECT_EQ(ncu_classify(rep.launches[1]).bound, "compute");
    EXPECT_DOUBLE_EQ(*rep.launches[1].registers_per_thread, 122);
}

TEST(ncu_csv, earliest_layout_with_kernel_time_and_old_metric_names) {
    const auto rep = parse_ncu_csv(fixture("formats/ncu-details-kernel-time.csv"));
    ASSERT_EQ(rep.launches.size(), 1u);
    const auto& l = rep.launches[0];
    EXPECT_EQ(l.block_size, "");  // no Block Size column in this layout
    EXPECT_DOUBLE_EQ(*l.duration_ns, 324800);
    EXPECT_DOUBLE_EQ(*l.sm_throughput_pct, 23.10);      // "SM [%]"
    EXPECT_DOUBLE_EQ(*l.memory_throughput_pct, 31.55);  // "Memory [%]"
    EXPECT_FALSE(l.dram_throughput_pct);
    EXPECT_EQ(ncu_classify(l).bound, "latency");
}

TEST(ncu_csv, import_units_us_and_duplicate_metric_names_across_sections) {
    const auto rep = parse_ncu_csv(fixture("formats/ncu-import-us-units.csv"));
    ASSERT_EQ(rep.launches.size(), 1u);
    const auto& l = rep.launches[0];
    EXPECT_DOUBLE_EQ(*l.duration_ns, 6750);  // "us"
    // "Memory Throughput" is % in SOL and Gbyte/s in Memory Workload Analysis: take the %.
    EXPECT_DOUBLE_EQ(*l.memory_throughput_pct, 41.07);
    EXPECT_DOUBLE_EQ(*l.registers_per_thread, 255);
    EXPECT_EQ(l.rules.size(), 1u);
    EXPECT_DOUBLE_EQ(*l.rules[0].estimated_speedup_pct, 2.77);
    EXPECT_FALSE(l.find("Executed Ipc Active")->value);  // "n/a"
    const auto hint = ncu_classify(l);
    EXPECT_EQ(hint.bound, "latency");
    EXPECT_NE(hint.hint.find("8.1%"), std::string::npos);  // achieved occupancy named
}

TEST(ncu_csv, time_units) {
    EXPECT_DOUBLE_EQ(*ncu_time_to_ns(2, "usecond"), 2000);
    EXPECT_DOUBLE_EQ(*ncu_time_to_ns(2, "MS"), 2e6);
    EXPECT_DOUBLE_EQ(*ncu_time_to_ns(2, "second"), 2e9);
    EXPECT_FALSE(ncu_time_to_ns(2, "cycle"));
}

TEST(ncu_csv, error_lines_and_garbage) {
    const auto rep = parse_ncu_csv("==ERROR== Could not open report file r.ncu-rep\n");
    EXPECT_FALSE(rep.found_header);
    ASSERT_EQ(rep.errors.size(), 1u);
    EXPECT_EQ(rep.errors[0], "Could not open report file r.ncu-rep");
    EXPECT_TRUE(parse_ncu_csv("").launches.empty());
    EXPECT_TRUE(parse_ncu_csv("\"Kernel Name\",\"Metric Name\"\n\"unterminated").launches.empty());
}

TEST(ncu_csv, kernel_table_sorts_by_duration_and_limits) {
    const auto rep = parse_ncu_csv(fixture("formats/ncu-details-15col.csv"));
    const auto t = ncu_kernel_table(rep, 1);
    EXPECT_EQ(t["launches_in_file"], 2);
    ASSERT_EQ(t["kernels"].size(), 1u);
    EXPECT_EQ(t["kernels"][0]["name"], "ampere_sgemm_128x64_nn");
    EXPECT_EQ(t["kernels"][0]["bound"], "compute");
}

TEST(ncu_csv, real_import_with_base_units_from_hotkernel_profile) {
    // What profile() saved on the H200: ncu --import r.ncu-rep --csv --page details --print-units base
    // (plain numbers, no thousands separators; names as --kernel-name-base demangled prints them).
    const auto rep = parse_ncu_csv(fixture("h200/ncu-2025.3.1-import-details-base-gelu.csv"));
    ASSERT_EQ(rep.launches.size(), 1u);
    const auto& l = rep.launches[0];
    EXPECT_NE(l.kernel_name.find("GeluCUDAKernelImpl"), std::string::npos);
    EXPECT_DOUBLE_EQ(*l.duration_ns, 44864);
    EXPECT_DOUBLE_EQ(*l.dram_throughput_pct, 52.99);
    EXPECT_DOUBLE_EQ(*l.sm_throughput_pct, 68.12);
    EXPECT_DOUBLE_EQ(*l.find("SM Frequency")->value, 1957897757.67);
    EXPECT_TRUE(l.registers_per_thread.has_value());
    const auto saxpy = parse_ncu_csv(fixture("h200/ncu-2025.3.1-import-details-base-saxpy.csv"));
    ASSERT_EQ(saxpy.launches.size(), 1u);
    EXPECT_EQ(saxpy.launches[0].kernel_name, "void saxpy<float>(int, T1, const T1 *, T1 *)");
    EXPECT_EQ(ncu_classify(saxpy.launches[0]).bound, "memory");
}
