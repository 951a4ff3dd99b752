// The embedded GPU spec table: contents, name/key lookup (incl. MIG and old names), errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "gpu/spec_table.h"
#include "util/files.h"

using namespace hotkernel;

namespace {
std::string key_of(std::string_view name) {
    const gpu_spec* s = spec_table::builtin().find(name);
    return s ? s->key : std::string("<none>");
}
}  // namespace

TEST(spec_table, builtin_has_every_row_of_the_data_file_with_sources) {
    const auto& t = spec_table::builtin();
    EXPECT_GE(t.entries().size(), 35u);
    // The embedded copy is the repo's data file, row for row.
    auto on_disk = spec_table::parse(read_file(std::filesystem::path(HOTKERNEL_SOURCE_DIR) / "data" / "gpu-specs.csv"));
    ASSERT_EQ(on_disk.entries().size(), t.entries().size());
    for (const auto& s : t.entries()) {
        SCOPED_TRACE(s.key);
        EXPECT_FALSE(s.nvidia_smi_names.empty());
        EXPECT_FALSE(s.source.empty());
        ASSERT_TRUE(s.mem_gbs.has_value());
        EXPECT_GT(*s.mem_gbs, 100);
        EXPECT_TRUE(s.peak("fp32").has_value());
        EXPECT_TRUE(s.peak("fp16").has_value());
        EXPECT_TRUE(s.compute_capability.has_value());
        // Every row is found by its key and by each of its nvidia-smi names.
        EXPECT_EQ(key_of(s.key), s.key);
        for (const auto& n : s.nvidia_smi_names) EXPECT_EQ(key_of(n), s.key) << n;
    }
}

TEST(spec_table, h200_row_values) {
    const gpu_spec* s = spec_table::builtin().find("NVIDIA H200");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->key, "h200_sxm");
    EXPECT_DOUBLE_EQ(*s->peak("bf16"), 989.4);
    EXPECT_DOUBLE_EQ(*s->peak("fp16"), 989.4);
    EXPECT_DOUBLE_EQ(*s->peak("fp8"), 1978.9);
    EXPECT_DOUBLE_EQ(*s->peak("fp32"), 66.9);
    EXPECT_DOUBLE_EQ(*s->peak("tf32"), 494.7);
    EXPECT_DOUBLE_EQ(*s->peak("int8"), 1978.9);
    EXPECT_DOUBLE_EQ(*s->peak("BF16"), 989.4);  // dtype is case-insensitive
    EXPECT_DOUBLE_EQ(*s->mem_gbs, 4800);
    EXPECT_DOUBLE_EQ(*s->l2_mib, 60);
    EXPECT_EQ(*s->compute_capability, "9.0");
    EXPECT_EQ(*s->sm_count, 132);
    EXPECT_DOUBLE_EQ(*s->boost_mhz, 1980);
    EXPECT_DOUBLE_EQ(*s->tdp_w, 700);
    json j = s->to_json();
    EXPECT_EQ(j["key"], "h200_sxm");
    EXPECT_EQ(j["peak_tflops"]["bf16"], 989.4);
    EXPECT_EQ(j["l2_mib"], 60.0);
    EXPECT_FALSE(j["source"].get<std::string>().empty());
}

TEST(spec_table, lookup_by_key_name_bare_name_and_case) {
    EXPECT_EQ(key_of("h200"), "h200_sxm");
    EXPECT_EQ(key_of("H200_SXM"), "h200_sxm");
    EXPECT_EQ(key_of("  nvidia h200 "), "h200_sxm");
    EXPECT_EQ(key_of("NVIDIA H100 80GB HBM3"), "h100_sxm5");
    EXPECT_EQ(key_of("NVIDIA A100-SXM4-80GB"), "a100_sxm4_80gb");
    EXPECT_EQ(key_of("A100-SXM4-80GB"), "a100_sxm4_80gb");       // pre-R470 name, no prefix
    EXPECT_EQ(key_of("nvidia a100-pcie-40gb"), "a100_pcie_40gb");
    EXPECT_EQ(key_of("NVIDIA A100-PCIe-40GB"), "a100_pcie_40gb");
    EXPECT_EQ(key_of("Tesla T4"), "t4");
    EXPECT_EQ(key_of("T4"), "t4");
    EXPECT_EQ(key_of("NVIDIA GeForce RTX 4090"), "rtx_4090");
    EXPECT_EQ(key_of("rtx 4090"), "rtx_4090");
    EXPECT_EQ(key_of("Orin (nvgpu)"), "jetson_agx_orin_64gb");
}

TEST(spec_table, most_specific_name_wins) {
    EXPECT_EQ(key_of("NVIDIA H200 NVL"), "h200_nvl");
    EXPECT_EQ(key_of("NVIDIA GH200 144G HBM3e"), "gh200_144gb_hbm3e");
    EXPECT_EQ(key_of("NVIDIA L40S"), "l40s");
    EXPECT_EQ(key_of("NVIDIA L40"), "l40");
    EXPECT_EQ(key_of("NVIDIA A10G"), "a10g");
    EXPECT_EQ(key_of("NVIDIA A10"), "a10");
    EXPECT_EQ(key_of("NVIDIA GB200"), "gb200");
    EXPECT_EQ(key_of("NVIDIA B200"), "b200_hgx");
}

TEST(spec_table, mig_names_map_to_the_parent) {
    EXPECT_TRUE(is_mig_name("NVIDIA A100-SXM4-40GB MIG 1g.5gb"));
    EXPECT_FALSE(is_mig_name("NVIDIA A100-SXM4-40GB"));
    EXPECT_EQ(strip_mig_suffix("NVIDIA A100-SXM4-40GB MIG 1g.5gb"), "NVIDIA A100-SXM4-40GB");
    EXPECT_EQ(key_of("NVIDIA A100-SXM4-40GB MIG 1g.5gb"), "a100_sxm4_40gb");
    EXPECT_EQ(key_of("NVIDIA A100-SXM4-80GB MIG 3g.40gb"), "a100_sxm4_80gb");
    EXPECT_EQ(key_of("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me"), "h100_sxm5");
    EXPECT_EQ(key_of("NVIDIA H100 80GB HBM3 MIG 1c.2g.20gb"), "h100_sxm5");
    EXPECT_EQ(key_of("nvidia a100-sxm4-40gb mig 7g.40gb  "), "a100_sxm4_40gb");
    EXPECT_FALSE(is_mig_name("NVIDIA A100-SXM4-40GB MIG"));        // no profile
    EXPECT_FALSE(is_mig_name("NVIDIA A100-SXM4-40GB MIG 1g.5"));   // not a profile
    EXPECT_FALSE(is_mig_name("MIG 1g.5gb"));                       // no parent
}

TEST(spec_table, huge_names_do_not_crash) {
    // --gpu comes from users and agents; a long string must be an ordinary "unknown GPU".
    std::string huge(1 << 20, 'x');
    EXPECT_EQ(spec_table::builtin().find(huge), nullptr);
    EXPECT_EQ(spec_table::builtin().find(huge + " MIG 1g.5gb"), nullptr);
    EXPECT_FALSE(is_mig_name(std::string(1 << 20, ' ')));
}

TEST(spec_table, unknown_names_give_close_matches) {
    const auto& t = spec_table::builtin();
    EXPECT_EQ(t.find("NVIDIA H100"), nullptr);  // ambiguous: three H100 SKUs
    auto h100 = t.suggestions("NVIDIA H100");
    ASSERT_GE(h100.size(), 3u);
    std::vector<std::string> first3(h100.begin(), h100.begin() + 3);
    std::sort(first3.begin(), first3.end());
    EXPECT_EQ(first3, (std::vector<std::string>{"h100_nvl", "h100_pcie", "h100_sxm5"}));
    EXPECT_EQ(t.find("NVIDIA H2000"), nullptr);
    auto typo = t.suggestions("NVIDIA H2000");
    EXPECT_NE(std::find(typo.begin(), typo.end(), "h200_sxm"), typo.end());
    EXPECT_EQ(t.find(""), nullptr);
    EXPECT_EQ(t.find("NVIDIA RTX A2000"), nullptr);
    EXPECT_TRUE(t.suggestions("zzzzzzzzzzzzzzzzzzzz").empty());
}

TEST(spec_table, missing_dtypes_are_absent_not_zero) {
    const auto& t = spec_table::builtin();
    EXPECT_FALSE(t.find("NVIDIA A100-SXM4-80GB")->peak("fp8").has_value());
    EXPECT_FALSE(t.find("Tesla T4")->peak("bf16").has_value());
    EXPECT_DOUBLE_EQ(*t.find("Tesla T4")->peak("fp16"), 65);
    EXPECT_FALSE(t.find("Tesla V100-SXM2-16GB")->peak("int8").has_value());
    EXPECT_TRUE(t.find("Tesla T4")->to_json()["peak_tflops"]["bf16"].is_null());
}

TEST(spec_table, malformed_tables_are_rejected) {
    EXPECT_THROW(spec_table::parse(""), std::runtime_error);
    EXPECT_THROW(spec_table::parse("name,mem_gbs\nfoo,1\n"), std::runtime_error);  // no key column
    const std::string header = "key,nvidia_smi_names,cc,mem_gbs,bf16_tflops,source\n";
    EXPECT_THROW(spec_table::parse(header + "x,NVIDIA X,9.0,fast,1,S1\n"), std::runtime_error);
    EXPECT_THROW(spec_table::parse(header + "x,NVIDIA X,9.0,1,1,S1\ny,NVIDIA X,9.0,1,1,S1\n"), std::runtime_error);
    auto ok = spec_table::parse(header + "x,NVIDIA X;X Old,9.0,100,5,S1\n");
    ASSERT_EQ(ok.entries().size(), 1u);
    EXPECT_EQ(ok.find("x old")->key, "x");
    EXPECT_FALSE(ok.entries()[0].peak("fp8").has_value());
}
