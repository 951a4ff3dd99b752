// canvas over cairo: the image surface for PNG, the SVG surface for SVG.
#include <cairo-svg.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "plot/canvas.h"
#include "util/errors.h"
#include "util/strings.h"

namespace hotkernel::plot {
namespace {

constexpr const char* font_family = "DejaVu Sans";

// Whether fontconfig will find a configuration file: $FONTCONFIG_FILE (absolute, or under
// $FONTCONFIG_PATH or /etc/fonts) or fonts.conf there. Asking fontconfig itself would load it,
// and print the error this is here to avoid.
bool fontconfig_file_exists() {
    std::error_code ec;
    const char* named = std::getenv("FONTCONFIG_FILE");
    const std::string file = named && *named ? named : "fonts.conf";
    if (file.front() == '/') return std::filesystem::exists(file, ec);
    std::vector<std::string> dirs;
    if (const char* path = std::getenv("FONTCONFIG_PATH"))
        for (const auto& d : split(path, ':'))
            if (!d.empty()) dirs.push_back(d);
    dirs.push_back("/etc/fonts");
    for (const auto& d : dirs)
        if (std::filesystem::exists(std::filesystem::path(d) / file, ec)) return true;
    return false;
}

// A machine with no fontconfig configuration (minimal GPU images have none, and the portable
// binary's fontconfig looks where Debian keeps it) would print "Fontconfig error: Cannot load
// default config file" on every drawing and find no font folders: it gets the usual ones instead.
// Where a configuration exists, it is used as it is.
void ensure_font_config() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (fontconfig_file_exists()) return;
        static constexpr const char* fallback =
            "<?xml version=\"1.0\"?><!DOCTYPE fontconfig SYSTEM \"fonts.dtd\"><fontconfig>"
            "<dir>/usr/share/fonts</dir><dir>/usr/local/share/fonts</dir><dir prefix=\"xdg\">fonts</dir>"
            "<cachedir prefix=\"xdg\">fontconfig</cachedir></fontconfig>";
        FcConfig* config = FcConfigCreate();
        if (!config) return;
        // Once set, it is the process's configuration for good (fontconfig versions differ on
        // whether setting it takes a reference, so ours is kept, not dropped).
        if (!FcConfigParseAndLoadFromMemory(config, reinterpret_cast<const FcChar8*>(fallback), FcTrue) ||
            !FcConfigSetCurrent(config))
            FcConfigDestroy(config);
    });
}

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
}

}  // namespace

const char* format_name(format f) { return f == format::png ? "png" : "svg"; }

bool available() { return true; }

struct canvas::impl {
    format fmt;
    std::string svg_bytes;  // the SVG surface streams here as it draws
    cairo_surface_t* surface = nullptr;
    cairo_t* cr = nullptr;

    void set_font(double size, bool bold) {
        cairo_select_font_face(cr, font_family, CAIRO_FONT_SLANT_NORMAL,
                               bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
        cairo_set_font_size(cr, size);
    }
    void colour(rgb c, double alpha = 1) { cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha); }
};

canvas::canvas(format f, int width, int height) : m_impl(std::make_unique<impl>()), m_width(width), m_height(height) {
    ensure_font_config();
    m_impl->fmt = f;
    if (f == format::svg) {
        m_impl->surface = cairo_svg_surface_create_for_stream(append_bytes, &m_impl->svg_bytes, width, height);
        cairo_svg_surface_restrict_to_version(m_impl->surface, CAIRO_SVG_VERSION_1_1);
    } else {
        m_impl->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    }
    if (cairo_surface_status(m_impl->surface) != CAIRO_STATUS_SUCCESS)
        throw tool_error(fmt::format("cannot start a {}x{} {} drawing: {}", width, height, format_name(f),
                                     cairo_status_to_string(cairo_surface_status(m_impl->surface))));
    m_impl->cr = cairo_create(m_impl->surface);
    cairo_set_source_rgb(m_impl->cr, 1, 1, 1);
    cairo_paint(m_impl->cr);
    cairo_set_line_join(m_impl->cr, CAIRO_LINE_JOIN_ROUND);
}

canvas::~canvas() {
    if (m_impl->cr) cairo_destroy(m_impl->cr);
    if (m_impl->surface) cairo_surface_destroy(m_impl->surface);
}

void canvas::line(double x0, double y0, double x1, double y1, rgb c, double width, bool dashed,
                  const std::string& role) {
    polyline({{x0, y0}, {x1, y1}}, c, width, dashed, role);
}

void canvas::polyline(const std::vector<std::pair<double, double>>& pts, rgb c, double width, bool dashed,
                      const std::string& role) {
    if (pts.size() < 2) return;
    cairo_t* cr = m_impl->cr;
    cairo_new_path(cr);
    cairo_move_to(cr, pts[0].first, pts[0].second);
    for (std::size_t i = 1; i < pts.size(); ++i) cairo_line_to(cr, pts[i].first, pts[i].second);
    m_impl->colour(c);
    cairo_set_line_width(cr, width);
    const double dash[] = {5.0, 4.0};
    cairo_set_dash(cr, dash, dashed ? 2 : 0, 0);
    cairo_stroke(cr);
    cairo_set_dash(cr, dash, 0, 0);
    if (!role.empty()) m_scene.push_back({"line", role, pts.front().first, pts.front().second, ""});
}

void canvas::band(double x, double y, double w, double h, rgb c, double alpha, const std::string& role) {
    cairo_t* cr = m_impl->cr;
    cairo_new_path(cr);
    cairo_rectangle(cr, x, y, w, h);
    m_impl->colour(c, alpha);
    cairo_fill(cr);
    if (!role.empty()) m_scene.push_back({"band", role, x, y, ""});
}

void canvas::box(double x, double y, double w, double h, rgb c, double width) {
    cairo_t* cr = m_impl->cr;
    cairo_new_path(cr);
    cairo_rectangle(cr, x, y, w, h);
    m_impl->colour(c);
    cairo_set_line_width(cr, width);
    cairo_stroke(cr);
}

void canvas::point(double x, double y, double r, rgb c, bool hollow, const std::string& role) {
    cairo_t* cr = m_impl->cr;
    cairo_new_path(cr);
    cairo_arc(cr, x, y, r, 0, 2 * M_PI);
    m_impl->colour(c);
    if (hollow) {
        cairo_set_line_width(cr, 1.2);
        cairo_stroke(cr);
    } else {
        cairo_fill(cr);
    }
    m_scene.push_back({"point", role, x, y, ""});
}

void canvas::cross(double x, double y, double r, rgb c, const std::string& role) {
    cairo_t* cr = m_impl->cr;
    cairo_new_path(cr);
    cairo_move_to(cr, x - r, y - r);
    cairo_line_to(cr, x + r, y + r);
    cairo_move_to(cr, x - r, y + r);
    cairo_line_to(cr, x + r, y - r);
    m_impl->colour(c);
    cairo_set_line_width(cr, 2);
    cairo_stroke(cr);
    m_scene.push_back({"cross", role, x, y, ""});
}

double canvas::text_width(const std::string& s, double size, bool bold) {
    m_impl->set_font(size, bold);
    cairo_text_extents_t ext;
    cairo_text_extents(m_impl->cr, s.c_str(), &ext);
    return ext.x_advance;
}

void canvas::text(double x, double y, const std::string& s, double size, rgb c, anchor a, bool bold,
                  const std::string& role, bool vertical) {
    cairo_t* cr = m_impl->cr;
    const double w = text_width(s, size, bold);  // also sets the font
    const double shift = a == anchor::left ? 0 : a == anchor::center ? w / 2 : w;
    cairo_save(cr);
    cairo_translate(cr, x, y);
    if (vertical) cairo_rotate(cr, -M_PI / 2);
    cairo_move_to(cr, -shift, 0);
    m_impl->colour(c);
    cairo_show_text(cr, s.c_str());
    cairo_restore(cr);
    m_scene.push_back({"label", role, x, y, s});
}

void canvas::clip(double x, double y, double w, double h) {
    cairo_save(m_impl->cr);
    cairo_new_path(m_impl->cr);
    cairo_rectangle(m_impl->cr, x, y, w, h);
    cairo_clip(m_impl->cr);
}

void canvas::unclip() { cairo_restore(m_impl->cr); }

std::string canvas::finish() {
    cairo_destroy(m_impl->cr);
    m_impl->cr = nullptr;
    std::string out;
    if (m_impl->fmt == format::svg) {
        cairo_surface_finish(m_impl->surface);
        out = std::move(m_impl->svg_bytes);
    } else {
        cairo_surface_flush(m_impl->surface);
        cairo_surface_write_to_png_stream(m_impl->surface, append_bytes, &out);
    }
    const cairo_status_t st = cairo_surface_status(m_impl->surface);
    cairo_surface_destroy(m_impl->surface);
    m_impl->surface = nullptr;
    if (st != CAIRO_STATUS_SUCCESS || out.empty())
        throw tool_error(fmt::format("drawing the {} failed: {}", format_name(m_impl->fmt), cairo_status_to_string(st)));
    return out;
}

}  // namespace hotkernel::plot
