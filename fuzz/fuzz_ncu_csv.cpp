// libFuzzer target: the Nsight Compute details-CSV parser must never crash or hang on any
// bytes (it reads files users hand to top_kernels, and live ncu output mixed with the program's).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/ncu_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    hotkernel::ncu_report rep = hotkernel::parse_ncu_csv(text);
    for (const auto& launch : rep.launches) {
        (void)hotkernel::ncu_classify(launch);
        (void)launch.find("Duration");
        for (const auto& m : launch.metrics)
            if (m.value) (void)hotkernel::ncu_time_to_ns(*m.value, m.unit);
    }
    return 0;
}
