// The version of the JSON hotkernel writes (tool results, results/ files, --json-out): every
// object carries `schema_version` ("MAJOR.MINOR") and `hotkernel_version`. A reader accepts its
// own major version and older ones (a file without the field is from before it existed: 0) and
// refuses a newer major, which may mean something else by the same keys.
#pragma once
#include <string>

#include "util/json.h"

namespace hotkernel {

inline constexpr int schema_major = 1;
inline constexpr int schema_minor = 1;

/// This build's version (cmake/hotkernel_version.cmake: from git tags). The one reader of the
/// generated version.h, so a new version recompiles one file.
const char* hotkernel_version();
/// Adds schema_version and hotkernel_version to a result object (nothing else is touched).
void stamp_schema(json& object);
/// "" when this hotkernel can read `object`; else why not, and what to do.
std::string newer_schema(const json& object);

}  // namespace hotkernel
