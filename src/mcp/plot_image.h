// A tool result's PNG plot as an MCP image content block, so an agent sees the picture.
#pragma once
#include "util/json.h"

namespace hotkernel {

/// When call_result's structuredContent has plot {format: "png", path}, appends to its content
/// an image block (base64 PNG, read from that file) after the text. Anything else: unchanged.
void add_plot_image(json& call_result);

}  // namespace hotkernel
