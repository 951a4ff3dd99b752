// The `plot` parameter, declared once for every tool that draws (roofline, verify, bench, record).
#pragma once
#include <string>

#include "registry/tool.h"

namespace hotkernel {

inline param_spec plot_param(const std::string& what) {
    param_spec p = make_param("plot", param_type::string, "A .png/.svg path, or true: a PNG");
    p.details = "Draws " + what + " to that file; true: a PNG in the runs folder, which MCP also returns as an image.";
    p.or_true = true;
    return p;
}

/// The result's `plot` member: the file written (error instead of bytes when it could not be).
inline json plot_result_schema() {
    return json{{"type", "object"}, {"description", "{path, format, bytes}; error instead of bytes if not written"}};
}

/// "plot: PATH (png, 41234 bytes)\n" for a readable rendering; "" without a plot.
inline std::string plot_line(const json& r) {
    if (!r.contains("plot") || !r["plot"].is_object()) return "";
    const json& p = r["plot"];
    if (p.contains("error")) return "plot: not written: " + p.value("error", std::string()) + "\n";
    return "plot: " + p.value("path", std::string()) + " (" + p.value("format", std::string()) + ", " +
           std::to_string(p.value("bytes", 0)) + " bytes)\n";
}

}  // namespace hotkernel
