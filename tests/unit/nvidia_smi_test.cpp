// nvidia-smi --query-gpu parsing on the real H200 captures and on made-up edge cases.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "parsers/nvidia_smi.h"
#include "util/files.h"
#include "fixtures.h"

using namespace hotkernel;

namespace {
std::string h200_fixture(const std::string& name) { return hotkernel::test_fixtures::fixture("h200/" + name); }
// The 20 fields capture.sh asked for in query-gpu.csv (the header prints canonical names).
const std::vector<std::string> capture_fields = {
    "name", "driver_version", "memory.total", "power.limit", "power.max_limit", "power.default_limit",
    "compute_cap", "clocks.max.sm", "clocks.max.memory", "clocks.sm", "clocks.mem", "pci.bus_id", "uuid",
    "temperature.gpu", "clocks_event_reasons.active", "clocks_throttle_reasons.active", "mig.mode.current",
    "persistence_mode", "pstate", "utilization.gpu"};
}  // namespace

TEST(nvidia_smi, real_h200_nounits_capture) {
    auto gpus = parse_gpu_query(h200_fixture("query-gpu-nounits.csv"),
                                {"name", "driver_version", "memory.total", "power.limit", "compute_cap", "clocks.max.sm"});
    ASSERT_EQ(gpus.size(), 1u);
    const auto& g = gpus[0];
    EXPECT_EQ(g.name, "NVIDIA H200");
    EXPECT_EQ(*g.driver, "580.159.04");
    EXPECT_DOUBLE_EQ(*g.memory_mib, 143771);
    EXPECT_DOUBLE_EQ(*g.power_limit_w, 700);
    EXPECT_EQ(*g.compute_capability, "9.0");
    EXPECT_EQ(g.compute_capability_source, "nvidia-smi");
    EXPECT_DOUBLE_EQ(*g.max_sm_clock_mhz, 1980);
    EXPECT_FALSE(g.index.has_value());
    EXPECT_FALSE(g.uuid.has_value());
}

TEST(nvidia_smi, real_h200_capture_with_header_and_units) {
    auto gpus = parse_gpu_query(h200_fixture("query-gpu.csv"), capture_fields);
    ASSERT_EQ(gpus.size(), 1u);
    const auto& g = gpus[0];
    EXPECT_EQ(g.name, "NVIDIA H200");
    EXPECT_DOUBLE_EQ(*g.memory_mib, 143771);  // "143771 MiB"
    EXPECT_DOUBLE_EQ(*g.power_limit_w, 700);  // "700.00 W"
    EXPECT_DOUBLE_EQ(*g.max_sm_clock_mhz, 1980);
    EXPECT_EQ(*g.uuid, "GPU-28bcde5d-3b3f-a3b6-16f7-2ec19286727c");
    EXPECT_EQ(*g.mig_mode, "Disabled");

    auto clocks = parse_clock_query(h200_fixture("query-gpu.csv"), capture_fields);
    ASSERT_EQ(clocks.size(), 1u);
    EXPECT_DOUBLE_EQ(*clocks[0].sm_clock_mhz, 405);
    EXPECT_DOUBLE_EQ(*clocks[0].max_sm_clock_mhz, 1980);
    EXPECT_EQ(*clocks[0].event_reasons_mask, 1u);
    EXPECT_DOUBLE_EQ(*clocks[0].temperature_c, 36);
    EXPECT_FALSE(clocks[0].power_draw_w.has_value());  // not asked in that capture
}

TEST(nvidia_smi, the_inventory_query_and_its_header_variant) {
    const std::string row =
        "0, NVIDIA H200, GPU-28bcde5d-3b3f-a3b6-16f7-2ec19286727c, 580.159.04, 143771, 700.00, 9.0, 1980, Disabled\n";
    auto a = parse_gpu_query(row);
    auto b = parse_gpu_query(
        "index, name, uuid, driver_version, memory.total [MiB], power.limit [W], compute_cap, clocks.max.sm [MHz], "
        "mig.mode.current\n" + row);
    for (const auto* gpus : {&a, &b}) {
        ASSERT_EQ(gpus->size(), 1u);
        const auto& g = (*gpus)[0];
        EXPECT_EQ(*g.index, 0);
        EXPECT_EQ(g.name, "NVIDIA H200");
        EXPECT_EQ(*g.uuid, "GPU-28bcde5d-3b3f-a3b6-16f7-2ec19286727c");
        EXPECT_EQ(*g.compute_capability, "9.0");
        EXPECT_EQ(*g.mig_mode, "Disabled");
    }
}

TEST(nvidia_smi, missing_value_tokens_become_null) {
    EXPECT_TRUE(is_missing_value("[N/A]"));
    EXPECT_TRUE(is_missing_value("[Not Supported]"));
    EXPECT_TRUE(is_missing_value("[Unknown Error]"));
    EXPECT_TRUE(is_missing_value("N/A"));
    EXPECT_TRUE(is_missing_value(" "));
    EXPECT_TRUE(is_missing_value("Requested functionality has been deprecated"));
    EXPECT_FALSE(is_missing_value("Not Active"));  // a real value
    EXPECT_FALSE(is_missing_value("0"));
    auto gpus = parse_gpu_query(
        "0, NVIDIA GeForce RTX 3090, GPU-aaaa, 470.82.01, 24268, [N/A], [Not Supported], N/A, [N/A]\n");
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_FALSE(gpus[0].power_limit_w.has_value());
    EXPECT_FALSE(gpus[0].compute_capability.has_value());
    EXPECT_EQ(gpus[0].compute_capability_source, "");
    EXPECT_FALSE(gpus[0].max_sm_clock_mhz.has_value());
    EXPECT_FALSE(gpus[0].mig_mode.has_value());
    EXPECT_DOUBLE_EQ(*gpus[0].memory_mib, 24268);
}

TEST(nvidia_smi, several_gpus_and_mig_mode) {
    auto gpus = parse_gpu_query(
        "0, NVIDIA A100-SXM4-40GB, GPU-0000, 535.54.03, 40960, 400.00, 8.0, 1410, Enabled\n"
        "1, NVIDIA A100-SXM4-40GB, GPU-1111, 535.54.03, 40960, 400.00, 8.0, 1410, Disabled\n"
        "2, NVIDIA L40S, GPU-2222, 535.54.03, 46068, 350.00, 8.9, 2520, [N/A]\r\n");
    ASSERT_EQ(gpus.size(), 3u);
    EXPECT_EQ(*gpus[0].mig_mode, "Enabled");
    EXPECT_EQ(*gpus[2].index, 2);
    EXPECT_EQ(gpus[2].name, "NVIDIA L40S");
    EXPECT_EQ(*gpus[2].compute_capability, "8.9");
}

TEST(nvidia_smi, old_driver_field_list_without_compute_cap) {
    std::vector<std::string> fields = gpu_query_fields;
    fields.erase(std::find(fields.begin(), fields.end(), "compute_cap"));
    auto gpus = parse_gpu_query("0, A100-SXM4-40GB, GPU-0000, 450.80.02, 40536, 400.00, 1410, Disabled\n", fields);
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_FALSE(gpus[0].compute_capability.has_value());
    EXPECT_DOUBLE_EQ(*gpus[0].max_sm_clock_mhz, 1410);
}

TEST(nvidia_smi, errors_instead_of_data_are_not_parsed_as_gpus) {
    auto bogus = h200_fixture("query-gpu-bogus.txt");
    EXPECT_EQ(invalid_query_field(bogus), "bogus_field");
    EXPECT_EQ(invalid_query_field("Field \"compute_cap\" is not a valid field to query.\n\n"), "compute_cap");
    EXPECT_FALSE(invalid_query_field(h200_fixture("query-gpu-nounits.csv")).has_value());
    EXPECT_FALSE(invalid_query_field("Field \"" + std::string(1 << 20, 'a')).has_value());  // long, no crash
    EXPECT_EQ(invalid_query_field("Field \"a\" x\nField \"compute_cap\" is not a valid field to query."), "compute_cap");
    EXPECT_THROW(parse_gpu_query("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                                 "Make sure that the latest NVIDIA driver is installed and running.\n"),
                 std::runtime_error);
    auto warned = parse_gpu_query("WARNING: infoROM is corrupted at gpu 0000:01:00.0\n"
                                  "0, NVIDIA L4, GPU-1, 550.54.15, 23034, 72.00, 8.9, 2040, [N/A]\n");
    ASSERT_EQ(warned.size(), 1u);
    EXPECT_EQ(warned[0].name, "NVIDIA L4");
    EXPECT_TRUE(parse_gpu_query("").empty());
    EXPECT_TRUE(parse_gpu_query("\n\n").empty());
}

TEST(nvidia_smi, clock_query_and_reason_bits) {
    auto s = parse_clock_query("0, 1755, 1980, 0x0000000000000004, 690.12, 71\n");
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(*s[0].index, 0);
    EXPECT_DOUBLE_EQ(*s[0].sm_clock_mhz, 1755);
    EXPECT_EQ(*s[0].event_reasons_mask, 4u);
    EXPECT_DOUBLE_EQ(*s[0].power_draw_w, 690.12);
    json j = clock_state_json(s[0]);
    EXPECT_EQ(j["clock_event_reasons"], json::array({"sw_power_cap"}));
    EXPECT_EQ(j["throttled"], true);
    EXPECT_EQ(j["clock_event_reasons_mask"], "0x0000000000000004");

    // The pre-R535 alias in the field list; an idle GPU is not throttled.
    std::vector<std::string> old_fields = clock_query_fields;
    old_fields[3] = "clocks_throttle_reasons.active";
    auto idle = parse_clock_query("0, 405, 1980, 0x0000000000000001, [N/A], 36\n", old_fields);
    json k = clock_state_json(idle[0]);
    EXPECT_EQ(k["clock_event_reasons"], json::array({"gpu_idle"}));
    EXPECT_EQ(k["throttled"], false);
    EXPECT_TRUE(k["power_draw_w"].is_null());

    auto na = parse_clock_query("0, 405, 1980, [Not Supported], 100.00, 36\n");
    json n = clock_state_json(na[0]);
    EXPECT_TRUE(n["throttled"].is_null());
    EXPECT_TRUE(n["clock_event_reasons"].empty());
}

TEST(nvidia_smi, decode_every_known_bit_and_unknown_ones) {
    auto all = decode_clock_event_reasons(0x1FF);
    EXPECT_EQ(all, (std::vector<std::string>{"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
                                             "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
                                             "hw_power_brake_slowdown", "display_clock_setting"}));
    EXPECT_TRUE(decode_clock_event_reasons(0).empty());
    EXPECT_EQ(decode_clock_event_reasons(0x1000), (std::vector<std::string>{"unknown_0x1000"}));
    EXPECT_EQ(throttling_reasons_mask & 0x1, 0u);
    EXPECT_NE(throttling_reasons_mask & 0x40, 0u);
}

// The exact queries gpu_query runs, as a real H200 (driver 580.159.04) answered them; captured
// by tests/gpu/check_gpu_info.sh on 2026-11-30 (another machine than query-gpu.csv's).
TEST(nvidia_smi, real_h200_answers_to_the_exact_queries) {
    auto gpus = parse_gpu_query(h200_fixture("query-gpu-inventory.csv"));
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_EQ(*gpus[0].index, 0);
    EXPECT_EQ(gpus[0].name, "NVIDIA H200");
    EXPECT_EQ(*gpus[0].uuid, "GPU-ea2a7d8c-6a4f-c11b-ba7f-312d0a5bd61c");
    EXPECT_EQ(*gpus[0].driver, "580.159.04");
    EXPECT_DOUBLE_EQ(*gpus[0].memory_mib, 143771);
    EXPECT_DOUBLE_EQ(*gpus[0].power_limit_w, 700);
    EXPECT_EQ(*gpus[0].compute_capability, "9.0");
    EXPECT_DOUBLE_EQ(*gpus[0].max_sm_clock_mhz, 1980);
    EXPECT_EQ(*gpus[0].mig_mode, "Disabled");

    auto clocks = parse_clock_query(h200_fixture("query-gpu-clocks.csv"));
    ASSERT_EQ(clocks.size(), 1u);
    json j = clock_state_json(clocks[0]);
    EXPECT_EQ(j["index"], 0);
    EXPECT_EQ(j["sm_clock_mhz"], 345.0);  // idle between runs
    EXPECT_EQ(j["max_sm_clock_mhz"], 1980.0);
    EXPECT_EQ(j["clock_event_reasons"], json::array({"gpu_idle"}));
    EXPECT_EQ(j["throttled"], false);
    EXPECT_EQ(j["power_draw_w"], 110.01);
    EXPECT_EQ(j["temperature_c"], 35.0);
}
