// Where a picture goes: the `plot` argument (a path ending .png or .svg, or `true` for a PNG in
// hotkernel's runs folder), checked before the tool runs, and the file written atomically.
#pragma once
#include <functional>
#include <string>

#include "plot/pictures.h"
#include "util/json.h"

namespace hotkernel::plot {

/// The argument `plot: true` arrives as (the registry turns JSON true into this word).
inline constexpr const char* default_plot = "true";

/// The format `arg` asks for. Throws usage_error for a path that ends in neither .png nor .svg,
/// and tool_error in a build without plots (so a long run is not made for nothing).
format check_plot_arg(const std::string& arg);

/// The file `arg` names; for default_plot, <cache>/runs/<UTC stamp>-<tool>-<what>.png.
std::string plot_path(const std::string& arg, const std::string& tool, const std::string& what);

/// Draws the picture in the format `arg` asks for and writes it atomically. Returns
/// {path, format, bytes}; when the file cannot be written, {path, format, error} (the tool's
/// result is still worth having).
json save_plot(const std::string& arg, const std::string& tool, const std::string& what,
               const std::function<picture(format)>& draw);

}  // namespace hotkernel::plot
