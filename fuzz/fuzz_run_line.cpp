// libFuzzer target: the bench-contract result-line parser reads whatever a user's script
// printed (any bytes, invalid UTF-8, NaN, huge numbers); it must never crash or throw.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/run_line.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    bool changed = false;
    std::string repaired = hotkernel::repair_utf8(text, &changed);
    // Repair is idempotent: a repaired string is valid UTF-8 and so unchanged the second time.
    bool changed_again = true;
    (void)hotkernel::repair_utf8(repaired, &changed_again);
    if (changed_again) __builtin_trap();
    hotkernel::run_line r = hotkernel::parse_run_line(text);
    if (r.valid()) {
        (void)hotkernel::dump_line(r.line);
        if (!(r.ms >= 0)) __builtin_trap();  // a valid line has a finite, non-negative ms
    }
    return 0;
}
