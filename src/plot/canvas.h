// The one place that draws: a thin layer over cairo (an image surface for PNG, an SVG surface
// for SVG, the same calls for both), fonts from the system (DejaVu Sans through cairo's toy font
// API, i.e. fontconfig). Every element drawn is also kept in a scene (its kind, role, position
// and text), so tests can check what a picture shows without reading pixels or glyphs.
// A build without cairo (-DHOTKERNEL_PLOTS=OFF) has the same interface; its constructor throws.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hotkernel::plot {

enum class format { png, svg };
const char* format_name(format f);

struct rgb {
    double r = 0, g = 0, b = 0;
};

enum class anchor { left, center, right };

/// One drawn element, in canvas pixels (y grows downwards).
struct scene_item {
    std::string kind;  ///< "point", "cross", "line", "band", "label"
    std::string role;  ///< what it shows: "baseline", "candidate", "roof", "title", ...
    double x = 0, y = 0;
    std::string text;  ///< labels only
};

/// true when this build can draw (linked with cairo).
bool available();

class canvas {
public:
    /// A white canvas of width x height pixels (SVG: points). Throws tool_error in a build
    /// without plots.
    canvas(format f, int width, int height);
    ~canvas();
    canvas(const canvas&) = delete;
    canvas& operator=(const canvas&) = delete;

    int width() const { return m_width; }
    int height() const { return m_height; }

    void line(double x0, double y0, double x1, double y1, rgb c, double width, bool dashed = false,
              const std::string& role = "");
    void polyline(const std::vector<std::pair<double, double>>& pts, rgb c, double width, bool dashed = false,
                  const std::string& role = "");
    /// A filled rectangle with opacity `alpha` (bands, bars).
    void band(double x, double y, double w, double h, rgb c, double alpha, const std::string& role = "");
    /// An unfilled rectangle (the frame of a plot area).
    void box(double x, double y, double w, double h, rgb c, double width);
    /// A dot of radius r: filled, or a ring when hollow.
    void point(double x, double y, double r, rgb c, bool hollow, const std::string& role);
    /// An x mark (a run or record that has no time to show).
    void cross(double x, double y, double r, rgb c, const std::string& role);
    /// Text whose baseline starts (left), centres or ends (right) at (x, y); rotated a quarter
    /// turn anticlockwise when vertical (a y-axis title).
    void text(double x, double y, const std::string& s, double size, rgb c, anchor a = anchor::left, bool bold = false,
              const std::string& role = "label", bool vertical = false);
    /// Width of `s` in pixels at this size.
    double text_width(const std::string& s, double size, bool bold = false);

    /// Later drawing is clipped to this rectangle until unclip().
    void clip(double x, double y, double w, double h);
    void unclip();

    /// Ends the drawing and returns the file's bytes (PNG or SVG).
    std::string finish();
    const std::vector<scene_item>& scene() const { return m_scene; }

private:
    struct impl;
    std::unique_ptr<impl> m_impl;
    int m_width = 0, m_height = 0;
    std::vector<scene_item> m_scene;
};

}  // namespace hotkernel::plot
