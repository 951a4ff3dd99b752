// libFuzzer target: the SASS / PTX / res-usage readers behind disassemble must never crash or
// hang on any bytes (a truncated cuobjdump listing, a binary file passed by mistake).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/sass.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    hotkernel::sass_listing listing = hotkernel::parse_sass(text);
    for (const auto& f : listing.functions)
        for (const auto& [op, n] : f.mix) (void)hotkernel::is_tensor_core_opcode(op);
    (void)hotkernel::parse_res_usage(text);
    (void)hotkernel::parse_ptx(text);
    (void)hotkernel::memory_access_bits(text.substr(0, 64));
    return 0;
}
