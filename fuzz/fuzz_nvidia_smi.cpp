// libFuzzer target: the nvidia-smi query parsers must never crash or hang on any bytes; a row
// with the wrong field count is a documented std::runtime_error, anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "parsers/nvidia_smi.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    using namespace hotkernel;
    (void)is_missing_value(text);
    (void)invalid_query_field(text);
    try {
        for (const auto& g : parse_gpu_query(text)) (void)g.name.size();
    } catch (const std::runtime_error&) {
    }
    try {
        // A subset of fields, as gpu_query sends when an old driver rejects compute_cap.
        (void)parse_gpu_query(text, {"index", "name", "uuid", "driver_version", "memory.total", "power.limit",
                                     "clocks.max.sm"});
    } catch (const std::runtime_error&) {
    }
    try {
        for (const auto& c : parse_clock_query(text)) (void)dump_line(clock_state_json(c));
    } catch (const std::runtime_error&) {
    }
    if (size >= 8) {
        std::uint64_t mask = 0;
        for (int i = 0; i < 8; ++i) mask = (mask << 8) | data[i];
        (void)decode_clock_event_reasons(mask);
    }
    return 0;
}
