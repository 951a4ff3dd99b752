// SASS / res-usage / PTX parsers on the real CUDA 13.0 captures from the H200 and on samples
// of instruction forms the captures lack (128-bit loads, tensor cores, spills, fat binaries).
#include <gtest/gtest.h>

#include <limits>

#include "parsers/sass.h"
#include "util/errors.h"
#include "util/files.h"
#include "fixtures.h"

using namespace hotkernel;

namespace {
using hotkernel::test_fixtures::fixture;
}  // namespace

TEST(sass, real_cubin_listing) {
    const auto l = parse_sass(fixture("h200/cuobjdump-13.0-sass-cubin.txt"));
    EXPECT_EQ(l.format, "cuobjdump");
    ASSERT_EQ(l.functions.size(), 1u);
    const auto& f = l.functions[0];
    EXPECT_EQ(f.name, "_Z5saxpyIfEviT_PKS0_PS0_");
    EXPECT_EQ(f.arch, "sm_90");
    EXPECT_EQ(f.instruction_count, 20u);  // 0x0000..0x0130; trailing NOPs are padding
    EXPECT_EQ(f.mix.at("LDG"), 2u);
    EXPECT_EQ(f.mix.at("STG"), 1u);
    EXPECT_EQ(f.mix.count("NOP"), 0u);
    EXPECT_EQ(f.widest_global_load_bits, 32);
    EXPECT_EQ(f.widest_global_store_bits, 32);
    EXPECT_TRUE(f.tensor_core.empty());
    EXPECT_EQ(f.local_loads + f.local_stores, 0u);
    EXPECT_EQ(f.lines.front(), "Function : _Z5saxpyIfEviT_PKS0_PS0_");
    EXPECT_EQ(f.lines[8], "/*0070*/  @P0 EXIT ;");
    EXPECT_EQ(l.archs, std::vector<std::string>{"sm_90"});
}

TEST(sass, real_demangled_listing_keeps_the_demangled_name) {
    const auto l = parse_sass(fixture("h200/cuobjdump-13.0-sass-cubin-demangled.txt"));
    ASSERT_EQ(l.functions.size(), 1u);
    EXPECT_EQ(l.functions[0].name, "void saxpy<float>(int, T1, const T1 *, T1 *)");
}

TEST(sass, real_fat_executable_skips_the_empty_entry) {
    const auto l = parse_sass(fixture("h200/cuobjdump-13.0-sass-exe.txt"));
    ASSERT_EQ(l.functions.size(), 1u);  // the first ELF entry has no functions
    EXPECT_EQ(l.functions[0].arch, "sm_90");
    EXPECT_EQ(l.functions[0].instruction_count, 20u);
    EXPECT_EQ(l.archs, std::vector<std::string>{"sm_90"});
}

TEST(sass, real_triton_listing_with_nvdisasm_warning) {
    const auto l = parse_sass(fixture("h200/cuobjdump-13.0-sass-triton.txt"));
    ASSERT_EQ(l.functions.size(), 1u);
    const auto& f = l.functions[0];
    EXPECT_EQ(f.name, "softmax_kernel");
    EXPECT_EQ(f.arch, "sm_90a");
    ASSERT_EQ(l.tool_warnings.size(), 1u);
    EXPECT_NE(l.tool_warnings[0].find("switching to Old format"), std::string::npos);
    EXPECT_EQ(f.mix.at("LDG"), 8u);
    EXPECT_EQ(f.mix.at("STG"), 8u);
    EXPECT_EQ(f.mix.at("SHFL"), 14u);
    EXPECT_EQ(f.widest_global_load_bits, 32);
    EXPECT_EQ(f.instruction_count, 207u);
}

TEST(sass, real_nvdisasm_listing_matches_cuobjdump) {
    const auto nv = parse_sass(fixture("h200/nvdisasm-13.0-triton.txt"));
    const auto cu = parse_sass(fixture("h200/cuobjdump-13.0-sass-triton.txt"));
    EXPECT_EQ(nv.format, "nvdisasm");
    ASSERT_EQ(nv.functions.size(), 1u);
    EXPECT_EQ(nv.functions[0].name, "softmax_kernel");
    EXPECT_EQ(nv.functions[0].arch, "sm_90a");  // from EF_CUDA_SM90 + EF_CUDA_ACCELERATORS
    EXPECT_EQ(nv.functions[0].instruction_count, cu.functions[0].instruction_count);
    EXPECT_EQ(nv.functions[0].mix, cu.functions[0].mix);
    EXPECT_EQ(nv.tool_warnings.size(), 2u);
    EXPECT_NE(std::find(nv.functions[0].lines.begin(), nv.functions[0].lines.end(), ".L_x_0:"), nv.functions[0].lines.end());
}

TEST(sass, wide_loads_tensor_cores_spills_and_fat_binary_archs) {
    const std::string text =
        "\n\tcode for sm_80\n\t\tFunction : _Z4gemmPKfPf\n"
        "        /*0000*/                   LDG.E.128 R4, desc[UR4][R2.64] ;  /* 0x0000000402047981 */\n"
        "                                                                       /* 0x000ea2000c1e1d00 */\n"
        "        /*0010*/                   LDGSTS.E.BYPASS.LTC128B.128 [R1], desc[UR4][R2.64] ;\n"
        "        /*0020*/                   HMMA.16816.F32.BF16 R8, R12, R16, R8 ;\n"
        "        /*0030*/                   HMMA.16816.F32.BF16 R20, R12, R18, R20 ;\n"
        "        /*0040*/                   STL.64 [R1+0x8], R4 ;\n"
        "        /*0050*/                   LDL.64 R4, [R1+0x8] ;\n"
        "        /*0060*/                   STG.E.64 desc[UR4][R6.64], R8 ;\n"
        "        /*0070*/                   LDG.E.U16 R9, desc[UR4][R2.64] ;\n"
        "        /*0080*/                   EXIT ;\n"
        "\t\t..........\n"
        "\n\tcode for sm_90a\n\t\tFunction : _Z4gemmPKfPf\n"
        "        /*0000*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24 ;\n"
        "        /*0010*/                   EXIT ;\n"
        "\t\t..........\n";
    const auto l = parse_sass(text);
    ASSERT_EQ(l.functions.size(), 2u);
    EXPECT_EQ(l.archs, (std::vector<std::string>{"sm_80", "sm_90a"}));
    const auto& a = l.functions[0];
    EXPECT_EQ(a.arch, "sm_80");
    EXPECT_EQ(a.widest_global_load_bits, 128);
    EXPECT_EQ(a.widest_global_store_bits, 64);
    EXPECT_EQ(a.tensor_core.at("HMMA.16816.F32.BF16"), 2u);
    EXPECT_EQ(a.local_loads, 1u);
    EXPECT_EQ(a.local_stores, 1u);
    EXPECT_EQ(a.instruction_count, 9u);
    EXPECT_EQ(l.functions[1].tensor_core.at("HGMMA.64x128x16.F32.BF16"), 1u);
}

TEST(sass, access_widths_and_tensor_opcodes) {
    EXPECT_EQ(memory_access_bits("LDG.E"), 32);
    EXPECT_EQ(memory_access_bits("LDG.E.128.CONSTANT"), 128);
    EXPECT_EQ(memory_access_bits("LDG.E.LTC128B.64"), 64);  // LTC128B is a cache hint, not a width
    EXPECT_EQ(memory_access_bits("LDG.E.S8"), 8);
    EXPECT_EQ(memory_access_bits("LDG.E.ENL2.256"), 256);
    for (const char* op : {"HMMA", "HGMMA", "IMMA", "IGMMA", "BMMA", "DMMA", "QGMMA", "UTCHMMA", "UTCQMMA", "OMMA"})
        EXPECT_TRUE(is_tensor_core_opcode(op)) << op;
    for (const char* op : {"FFMA", "IMAD", "MMA", "LDSM"}) EXPECT_FALSE(is_tensor_core_opcode(op)) << op;
}

TEST(sass, garbage_gives_nothing) {
    EXPECT_TRUE(parse_sass("").functions.empty());
    EXPECT_TRUE(parse_sass("hello\n/*0000*/ NOP ;\n").functions.empty());  // no function header
}

TEST(res_usage, cuobjdump_resource_lines) {
    const auto r = parse_res_usage(
        "\nResource usage:\n Common:\n  GLOBAL:0\n Function softmax_kernel:\n"
        "  REG:29 STACK:0 SHARED:1024 LOCAL:0 CONSTANT[0]:568 TEXTURE:0 SURFACE:0 SAMPLER:0\n");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].function, "softmax_kernel");
    EXPECT_EQ(*r[0].registers, 29);
    EXPECT_EQ(*r[0].shared_bytes, 1024);
    EXPECT_EQ(*r[0].constant0_bytes, 568);
}

TEST(res_usage, huge_numbers_in_a_corrupt_listing_are_capped_not_thrown) {
    // std::stoi threw out_of_range on these (and terminated disassemble).
    const auto r = parse_res_usage(" Function k:\n  REG:99999999999999999999 STACK:4294967296 SHARED:12\n");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(*r[0].registers, std::numeric_limits<int>::max());
    EXPECT_EQ(*r[0].stack_bytes, std::numeric_limits<int>::max());
    EXPECT_EQ(*r[0].shared_bytes, 12);
    const auto p = parse_ptx(".visible .entry k(\n)\n{\nld.global.v99999999999.f99999999999x99999 {%f1}, [%rd1];\n}\n");
    EXPECT_GT(p.widest_global_load_bits, 0);
}

TEST(ptx, real_exe_ptx_and_triton_ptx) {
    const auto p = parse_ptx(fixture("h200/cuobjdump-13.0-ptx-exe.txt"));
    EXPECT_EQ(p.version, "9.0");
    EXPECT_EQ(p.target, "sm_90");
    EXPECT_EQ(p.entries, std::vector<std::string>{"_Z5saxpyIfEviT_PKS0_PS0_"});
    EXPECT_EQ(p.widest_global_load_bits, 32);   // ld.global.f32
    EXPECT_EQ(p.widest_global_store_bits, 32);
    EXPECT_EQ(p.mix.at("ld"), 6u);
    EXPECT_EQ(p.mix.at("ret"), 1u);
    const auto t = parse_ptx(fixture("h200/triton-3.6-cache/ASBCTLMBXQLCZAFXI3W3CL2WTDYCFKQSUYUI4EKCHXHXPQELJDGQ/softmax_kernel.ptx"));
    EXPECT_EQ(t.target, "sm_90a");
    EXPECT_EQ(t.entries, std::vector<std::string>{"softmax_kernel"});
    EXPECT_GT(t.instruction_count, 100u);
    EXPECT_TRUE(t.tensor_core.empty());
}

TEST(ptx, vector_widths_mma_and_local) {
    const auto p = parse_ptx(
        ".version 8.7\n.target sm_90a\n.visible .entry k(\n)\n{\n"
        "ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\n"
        "@%p1 st.global.v2.b64 [%rd2], {%rd3, %rd4};\n"
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f1}, %rd5, %rd6, 1, 1, 1, 0, 0;\n"
        "ld.local.u32 %r9, [%rd7];\n"
        "}\n");
    EXPECT_EQ(p.widest_global_load_bits, 128);
    EXPECT_EQ(p.widest_global_store_bits, 128);
    EXPECT_EQ(p.tensor_core.size(), 2u);
    EXPECT_EQ(p.local_loads, 1u);
}

TEST(sass, real_fat_executable_with_two_archs) {
    // nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 on the H200.
    const auto l = parse_sass(fixture("h200/cuobjdump-13.0-sass-exe-sm80-sm90.txt"));
    EXPECT_EQ(l.archs, (std::vector<std::string>{"sm_80", "sm_90"}));
    ASSERT_EQ(l.functions.size(), 2u);
    EXPECT_EQ(l.functions[0].arch, "sm_80");
    EXPECT_EQ(l.functions[1].arch, "sm_90");
    EXPECT_EQ(l.functions[0].name, l.functions[1].name);
    EXPECT_GT(l.functions[0].instruction_count, 10u);
}
