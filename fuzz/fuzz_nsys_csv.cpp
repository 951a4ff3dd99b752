// libFuzzer target: the Nsight Systems kernel-summary parser must never crash or hang on any bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/nsys_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    hotkernel::nsys_kern_sum sum = hotkernel::parse_nsys_kern_sum(text);
    for (const auto& k : sum.kernels) (void)k.name.size();
    return 0;
}
