// canvas in a build without cairo (-DHOTKERNEL_PLOTS=OFF): every drawing is refused up front.
#include "plot/canvas.h"
#include "util/errors.h"

namespace hotkernel::plot {

const char* format_name(format f) { return f == format::png ? "png" : "svg"; }

bool available() { return false; }

struct canvas::impl {};

canvas::canvas(format, int, int) {
    throw tool_error("this build has no plots (hotkernel was built with -DHOTKERNEL_PLOTS=OFF, without cairo); "
                     "drop the plot argument, or use a build with plots (the default; needs libcairo2-dev)");
}
canvas::~canvas() = default;
void canvas::line(double, double, double, double, rgb, double, bool, const std::string&) {}
void canvas::polyline(const std::vector<std::pair<double, double>>&, rgb, double, bool, const std::string&) {}
void canvas::band(double, double, double, double, rgb, double, const std::string&) {}
void canvas::box(double, double, double, double, rgb, double) {}
void canvas::point(double, double, double, rgb, bool, const std::string&) {}
void canvas::cross(double, double, double, rgb, const std::string&) {}
void canvas::text(double, double, const std::string&, double, rgb, anchor, bool, const std::string&, bool) {}
double canvas::text_width(const std::string&, double, bool) { return 0; }
void canvas::clip(double, double, double, double) {}
void canvas::unclip() {}
std::string canvas::finish() { return {}; }

}  // namespace hotkernel::plot
