// libFuzzer target: the CSV reader and number parser must never crash or hang on any bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto rows = hotkernel::parse_csv(text);
    for (const auto& row : rows)
        for (const auto& field : row) (void)hotkernel::parse_number(field);
    (void)hotkernel::parse_csv(text, {.separator = ';', .trim_fields = true});
    return 0;
}
