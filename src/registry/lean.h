// Helpers for a tool's lean projection (tool_spec::lean): the fields a caller acts on, copied
// from the full result, their numbers cut to the digits anyone reads.
#pragma once
#include <initializer_list>
#include <string_view>

#include "util/json.h"

namespace hotkernel {

/// The listed keys of `obj` that it has, in the order listed (nested objects whole).
json pick(const json& obj, std::initializer_list<std::string_view> keys);
/// `v` with every floating-point number rounded to `digits` significant digits (integers kept).
json round_numbers(json v, int digits = 5);

}  // namespace hotkernel
