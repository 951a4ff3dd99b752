#include "util/schema_version.h"

#include <charconv>

#include <fmt/format.h>

#include "util/strings.h"
#include "version.h"

namespace hotkernel {

const char* hotkernel_version() { return HOTKERNEL_VERSION; }

void stamp_schema(json& object) {
    if (!object.is_object()) return;
    object["schema_version"] = fmt::format("{}.{}", schema_major, schema_minor);
    object["hotkernel_version"] = hotkernel_version();
}

std::string newer_schema(const json& object) {
    if (!object.is_object() || !object.contains("schema_version")) return "";
    const json& v = object["schema_version"];
    const std::string text = v.is_string() ? v.get<std::string>() : dump_line(v);
    int major = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), major);
    const bool well_formed = ec == std::errc() && (end == text.data() + text.size() || *end == '.');
    if (well_formed && major <= schema_major) return "";
    const std::string by = object.contains("hotkernel_version") && object["hotkernel_version"].is_string()
                               ? " (written by hotkernel " + shorten(object["hotkernel_version"].get<std::string>(), 40) + ")"
                               : "";
    if (!well_formed)
        return fmt::format("its schema_version '{}'{} is not MAJOR.MINOR", shorten(text, 40), by);
    return fmt::format("its schema_version {}{} is newer than this hotkernel reads ({}.x, hotkernel {}); upgrade "
                       "hotkernel to read it",
                       shorten(text, 40), by, schema_major, hotkernel_version());
}

}  // namespace hotkernel
