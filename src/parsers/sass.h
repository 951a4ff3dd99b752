// SASS listings (`cuobjdump -sass`, `nvdisasm`), `cuobjdump -res-usage` and PTX text: the
// functions, their instruction mix, tensor-core instructions, widest global load/store,
// local-memory traffic and the architecture of each section of a fat binary. Pure.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hotkernel {

struct sass_function {
    std::string name;                 ///< as printed (mangled for C++)
    std::string arch;                 ///< sm_90, sm_90a, ... ("" when the listing says none)
    std::vector<std::string> lines;   ///< readable text: header, labels and instructions (no encodings)
    std::size_t instruction_count = 0;        ///< without the trailing NOP padding
    std::map<std::string, std::size_t> mix;   ///< by base opcode (LDG, FFMA, HGMMA, ...)
    std::map<std::string, std::size_t> tensor_core;  ///< full opcode -> count (HMMA.16816.F32, HGMMA.64x128x16...)
    int widest_global_load_bits = 0;  ///< 0: no global load
    int widest_global_store_bits = 0;
    std::size_t local_loads = 0;      ///< LDL
    std::size_t local_stores = 0;     ///< STL
    std::optional<int> registers;     ///< from SHI_REGISTERS when the listing has it
};

struct sass_listing {
    std::vector<sass_function> functions;    ///< de-duplicated by (arch, name), in order
    std::vector<std::string> archs;          ///< every arch section seen, in order, unique
    std::vector<std::string> tool_warnings;  ///< "nvdisasm warning : ..." lines
    std::string format;                      ///< "cuobjdump" or "nvdisasm"
};

sass_listing parse_sass(std::string_view text);

/// Width in bits of a memory instruction from its opcode modifiers
/// (LDG.E -> 32, LDG.E.64 -> 64, LDG.E.128 -> 128, LDG.E.U16 -> 16, LDG.E.ENL2.256 -> 256).
int memory_access_bits(std::string_view opcode);

/// True for a tensor-core MMA opcode (HMMA, HGMMA, IMMA, IGMMA, BMMA, DMMA, QGMMA, UTCHMMA, ...).
bool is_tensor_core_opcode(std::string_view base_opcode);

/// `cuobjdump -res-usage`: per function REG/STACK/SHARED/LOCAL/CONSTANT[0].
struct resource_usage {
    std::string function;
    std::optional<int> registers, stack_bytes, shared_bytes, local_bytes, constant0_bytes;
};
std::vector<resource_usage> parse_res_usage(std::string_view text);

/// The headline facts of a PTX module.
struct ptx_summary {
    std::string version;                  ///< ".version 8.7" -> "8.7"
    std::string target;                   ///< ".target sm_90a" -> "sm_90a"
    std::vector<std::string> entries;     ///< .entry names
    std::size_t instruction_count = 0;
    std::map<std::string, std::size_t> mix;          ///< by opcode root (ld, st, fma, mma, wgmma, ...)
    std::map<std::string, std::size_t> tensor_core;  ///< mma.sync..., wgmma.mma_async...
    int widest_global_load_bits = 0;
    int widest_global_store_bits = 0;
    std::size_t local_loads = 0;
    std::size_t local_stores = 0;
};
ptx_summary parse_ptx(std::string_view text);

}  // namespace hotkernel
