// The `plot` parameter, declared once for every tool that draws (roofline, verify, bench, record).
#pragma once
#include <string>

#include "registry/tool.h"

namespace hotkernel {

inline param_spec plot_param(const std::string& what) {
    param_spec p = make_param("plot", param_type::string,
                              "Also draw " + what +
                                  " to this file, PNG or SVG by its ending (.png, .svg); true: a PNG in hotkernel's "
                                  "runs folder. The result's plot gives {path, format, bytes}; over MCP a PNG also "
                                  "comes back as an image");
    p.or_true = true;
    return p;
}

/// The result's `plot` member: the file written (error instead of bytes when it could not be).
inline json plot_result_schema() {
    return json{{"type", "object"},
                {"description", "the picture asked for with plot"},
                {"properties",
                 {{"path", {{"type", "string"}}},
                  {"format", {{"type", "string"}, {"enum", json::array({"png", "svg"})}}},
                  {"bytes", {{"type", "integer"}}},
                  {"error", {{"type", "string"}, {"description", "why the file could not be written"}}}}},
                {"required", json::array({"path", "format"})}};
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
