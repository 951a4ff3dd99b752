#include "plot/pictures.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "plot/layout.h"

namespace hotkernel::plot {
namespace {

constexpr rgb ink{0.13, 0.13, 0.13};
constexpr rgb muted{0.42, 0.42, 0.42};
constexpr rgb grid{0.89, 0.89, 0.89};
constexpr rgb blue{0.12, 0.42, 0.70};     // baseline; datasheet
constexpr rgb orange{0.85, 0.37, 0.01};   // candidate
constexpr rgb green{0.10, 0.55, 0.20};    // faster; measured
constexpr rgb red{0.78, 0.12, 0.12};      // slower, incorrect
constexpr rgb purple{0.45, 0.25, 0.62};   // the ridge

constexpr double title_size = 17, sub_size = 12, tick_size = 11, label_size = 12;

double num(const json& j, const char* key, double fallback = NAN) {
    if (!j.is_object()) return fallback;
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string str(const json& j, const char* key, const std::string& fallback = "") {
    if (!j.is_object()) return fallback;
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string ms_text(double ms) { return format_number(ms, 4) + " ms"; }

rgb verdict_colour(const std::string& v) {
    if (v == "faster") return green;
    if (v == "slower" || v == "mixed" || v == "incorrect" || v == "invalid") return red;
    return muted;
}

void titles(canvas& c, const std::string& title, const std::string& sub, rgb title_colour = ink) {
    c.text(24, 30, title, title_size, title_colour, anchor::left, true, "title");
    if (!sub.empty()) c.text(24, 50, sub, sub_size, muted, anchor::left, false, "subtitle");
}

/// Frame, grid, ticks and axis titles of one plot area.
void axes(canvas& c, const frame& f, const axis& x, const axis& y, const std::vector<tick>& xt,
          const std::vector<tick>& yt, const std::string& xtitle, const std::string& ytitle) {
    for (const auto& t : yt) {
        const double py = y.at(t.value);
        c.line(f.left, py, f.right, py, grid, 1);
        c.text(f.left - 6, py + 4, t.label, tick_size, muted, anchor::right, false, "tick");
    }
    for (const auto& t : xt) {
        const double px = x.at(t.value);
        c.line(px, f.top, px, f.bottom, grid, 1);
        if (!t.label.empty()) c.text(px, f.bottom + 16, t.label, tick_size, muted, anchor::center, false, "tick");
    }
    c.box(f.left, f.top, f.width(), f.height(), muted, 1);
    c.text((f.left + f.right) / 2, f.bottom + 36, xtitle, label_size, ink, anchor::center, false, "axis");
    c.text(f.left - 52, (f.top + f.bottom) / 2, ytitle, label_size, ink, anchor::center, false, "axis", true);
}

/// Labels at the right of a plot area, each at its wanted y when they fit, nudged apart when not,
/// with a thin leader when moved.
struct side_label {
    double y;
    std::string text;
    rgb colour;
    std::string role;
};
void right_labels(canvas& c, double x, double from_x, const std::vector<side_label>& labels, double top, double bottom) {
    std::vector<double> want;
    for (const auto& l : labels) want.push_back(l.y);
    const std::vector<double> at = spread_labels(want, label_size, 3, top, bottom);
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (std::fabs(at[i] - labels[i].y) > 1) c.line(from_x, labels[i].y, x - 3, at[i], labels[i].colour, 0.8);
        c.text(x, at[i] + 4, labels[i].text, label_size, labels[i].colour, anchor::left, false, labels[i].role);
    }
}

/// A vertical interval with caps (a CI).
void error_bar(canvas& c, double x, double y_lo, double y_hi, rgb col, double width, double cap) {
    c.line(x, y_lo, x, y_hi, col, width, false, "ci");
    c.line(x - cap, y_lo, x + cap, y_lo, col, width);
    c.line(x - cap, y_hi, x + cap, y_hi, col, width);
}

picture finished(canvas& c) {
    picture out;
    out.bytes = c.finish();
    out.scene = c.scene();
    return out;
}

}  // namespace

// ---- roofline ---------------------------------------------------------------------------

picture draw_roofline(const json& r, format fmt_) {
    canvas c(fmt_, picture_width, picture_height);
    const double peak = num(r, "peak_tflops"), bw = num(r, "peak_mem_gbs");
    const double bw_m = num(r, "measured_mem_gbs");
    const double ai = num(r, "arithmetic_intensity"), ridge = num(r, "ridge_point");
    const double floor_ms = num(r, "attainable_ms"), floor_m = num(r, "attainable_ms_measured");
    const std::string dtype = str(r, "dtype");
    const bool has_measured = std::isfinite(bw_m) && bw_m > 0;
    const double ridge_m = has_measured ? peak * 1000 / bw_m : NAN;
    const json points = r.value("points", json::array());

    // x: the kernel's intensity and the ridges, a decade of room each side.
    std::vector<double> xs{ridge / 10, ridge * 10};
    if (ai > 0) xs.insert(xs.end(), {ai / 4, ai * 4});
    if (has_measured) xs.push_back(ridge_m);
    double xlo, xhi;
    log_range(xs, xlo, xhi);
    // The points' labels go right of them when the kernel sits in the left half, else in a margin.
    const bool inside =
        ai > 0 && (std::log10(ai) - std::log10(xlo)) / (std::log10(xhi) - std::log10(xlo)) < 0.55;
    const frame f = inset(picture_width, picture_height, 84, 70, inside ? 40 : 250, 62);
    // y: the roofs over that span, and every point.
    std::vector<double> ys{peak * 2.5, std::min(peak, xlo * bw / 1000)};
    if (has_measured) ys.push_back(xlo * bw_m / 1000);
    for (const auto& p : points) ys.push_back(num(p, "achieved_tflops"));
    double ylo, yhi;
    log_range(ys, ylo, yhi);
    const axis x{xlo, xhi, f.left, f.right, true}, y{ylo, yhi, f.bottom, f.top, true};

    const std::string gpu = str(r, "gpu", "GPU");
    titles(c, fmt::format("Roofline of {} on {} ({})", str(r, "target", "the kernel"), gpu, dtype),
           fmt::format("attainable TFLOPS against arithmetic intensity; the kernel at {} flop/B is {}-bound, floor {}",
                       format_number(ai), str(r, "bound", "?"), ms_text(floor_ms)));
    axes(c, f, x, y, log_ticks(xlo, xhi), log_ticks(ylo, yhi), "arithmetic intensity [flop/byte]",
         fmt::format("attainable [TFLOPS{}]", dtype == "int8" ? ", TOPS" : ""));

    c.clip(f.left, f.top, f.width(), f.height());
    auto roof = [&](double gbs, rgb col, bool dashed, const std::string& role) {
        const double knee = peak * 1000 / gbs;
        c.polyline({{x.at(xlo), y.at(xlo * gbs / 1000)}, {x.at(knee), y.at(peak)}, {x.at(xhi), y.at(peak)}}, col,
                   dashed ? 2 : 2.5, dashed, role);
    };
    roof(bw, blue, false, "roof_datasheet");
    if (has_measured) roof(bw_m, green, true, "roof_measured");
    c.line(x.at(ridge), y.at(peak), x.at(ridge), f.bottom, purple, 1, true, "ridge");
    if (ai > 0) c.line(x.at(ai), f.top, x.at(ai), f.bottom, muted, 0.8, true, "intensity");
    c.unclip();

    // Ceilings, labelled on themselves.
    {
        // Above the flat roof at its right end, unless that is where the kernel's floor sits.
        const std::string text = fmt::format("peak {} TFLOPS ({})", format_number(peak), dtype);
        const double w = c.text_width(text, label_size), px = ai > 0 ? x.at(ai) : -1e9;
        double at = f.right - 6 - w;
        if (px > at - 10 && px < f.right + 4) at = px + 12 + w <= f.right - 4 ? px + 12 : px - 12 - w;
        c.text(at, y.at(peak) - 7, text, label_size, blue, anchor::left, false, "roof_label");
    }
    {
        // Under the slope near its start: a rising line never crosses level text below and right of it.
        const double lx = std::pow(10.0, std::log10(xlo) + (std::log10(xhi) - std::log10(xlo)) * 0.03);
        c.text(x.at(lx) + 4, y.at(lx * bw / 1000) + 18, fmt::format("datasheet {} GB/s", format_number(bw, 4)),
               label_size, blue, anchor::left, false, "roof_label");
        if (has_measured)
            c.text(x.at(lx) + 4, y.at(lx * bw / 1000) + 34,
                   fmt::format("measured {} GB/s{}", format_number(bw_m, 4),
                               str(r, "measured_mem_gbs_source") == "argument" ? "" : " (calibrated)"),
                   label_size, green, anchor::left, false, "roof_label");
    }
    c.text(x.at(ridge) + 5, f.bottom - 8, fmt::format("ridge {} flop/B", format_number(ridge)), label_size, purple,
           anchor::left, false, "ridge_label");

    // The floor at the kernel's intensity, and each measured point with its % of the floor.
    std::vector<side_label> labels;
    if (ai > 0) {
        const double att = num(r, "attainable_tflops");
        c.point(x.at(ai), y.at(att), 5, ink, true, "floor");
        labels.push_back({y.at(att), fmt::format("floor {} (datasheet)", ms_text(floor_ms)), ink, "floor_label"});
        if (std::isfinite(floor_m)) {
            const double att_m = num(r, "flops") / (floor_m * 1e9);
            c.point(x.at(ai), y.at(att_m), 4, green, true, "floor_measured");
            labels.push_back({y.at(att_m), fmt::format("floor {} (measured)", ms_text(floor_m)), green, "floor_label"});
        }
        for (const auto& p : points) {
            const std::string label = str(p, "label", "kernel");
            const rgb col = label == "baseline" ? blue : label == "candidate" ? orange : ink;
            const double t = num(p, "achieved_tflops");
            if (!(t > 0)) continue;
            c.point(x.at(ai), y.at(t), 6, col, false, label);
            std::string text = fmt::format("{} {}: {}% of floor", label, ms_text(num(p, "ms")),
                                           format_number(num(p, "pct_of_floor"), 3));
            labels.push_back({y.at(t), text, col, label + "_label"});
        }
        // Right of the floor the roof only rises, so below the floor's height the labels stay clear of it.
        const double top = inside ? std::min(y.at(num(r, "attainable_tflops")) + 8, f.bottom - 80) : f.top;
        right_labels(c, inside ? x.at(ai) + 14 : f.right + 12, x.at(ai) + 7, labels, top, f.bottom);
    } else {
        c.text(f.left + 12, f.top + 24, "flops = 0: the kernel only moves bytes; its floor is bytes / bandwidth",
               label_size, ink, anchor::left, false, "note");
    }
    return finished(c);
}

// ---- verify -----------------------------------------------------------------------------

picture draw_verify(const json& r, format fmt_) {
    canvas c(fmt_, picture_width, picture_height);
    const frame f = inset(picture_width, picture_height, 84, 70, 330, 62);
    const frame g = inset(picture_width, picture_height, picture_width - 160, 70, 60, 62);  // the speedup panel
    const std::string verdict = str(r, "verdict", "?");
    const double mean_b = num(r["baseline"], "mean_ms"), mean_c = num(r["candidate"], "mean_ms");
    const double thr = num(r, "threshold_ms");
    const json runs = r.value("runs", json::array());

    std::vector<double> ys{mean_b, mean_c};
    if (std::isfinite(thr) && std::isfinite(mean_b)) ys.insert(ys.end(), {mean_b - thr, mean_b + thr});
    std::size_t max_index = 1;
    for (const auto& run : runs) {
        ys.push_back(num(run, "ms"));
        max_index = std::max<std::size_t>(max_index, run.value("index", 1));
    }
    double ylo, yhi;
    linear_range(ys, 0.08, ylo, yhi);
    const axis x{0.4, static_cast<double>(max_index) + 0.6, f.left, f.right, false}, y{ylo, yhi, f.bottom, f.top, false};

    std::string head = fmt::format("verify {}: {}", str(r, "target", "?"), verdict);
    const double sp = num(r, "speedup");
    if (std::isfinite(sp) && (verdict == "faster" || verdict == "slower"))
        head += fmt::format(" (candidate {}x the baseline's speed)", format_number(sp, 3));
    titles(c, head,
           fmt::format("each run in launch order, {} pairs (ABBA{}); dashed: the means; band: the seed's threshold",
                       r.value("n", 0), r.value("warmup", 0) > 0 ? ", hollow = warm-up" : ""),
           verdict_colour(verdict));
    const std::vector<tick> xt = integer_ticks(1, static_cast<long long>(max_index));
    axes(c, f, x, y, xt, linear_ticks(ylo, yhi), "pair (run order)", "time of one call [ms]");

    std::vector<side_label> labels;
    if (std::isfinite(thr) && std::isfinite(mean_b)) {
        c.band(f.left, y.at(mean_b + thr), f.width(), y.at(mean_b - thr) - y.at(mean_b + thr), blue, 0.12, "threshold");
        labels.push_back({y.at(mean_b + thr),
                          fmt::format("threshold +/-{}", ms_text(thr)), muted, "threshold_label"});
    }
    for (const auto& [role, col, dx] : {std::tuple{"baseline", blue, -0.12}, std::tuple{"candidate", orange, 0.12}}) {
        std::vector<std::pair<double, double>> trail;
        for (const auto& run : runs) {
            if (str(run, "role") != role) continue;
            const double ms = num(run, "ms");
            if (!std::isfinite(ms)) continue;
            const double px = x.at(static_cast<double>(run.value("index", 1)) + dx), py = y.at(ms);
            const bool warm = run.value("warmup", false);
            if (run.contains("ok") && run["ok"].is_boolean() && !run["ok"].get<bool>()) c.cross(px, py, 5, red, role);
            else c.point(px, py, 4.5, col, warm, role);
            if (!warm) trail.emplace_back(px, py);
        }
        c.polyline(trail, col, 1, false, std::string(role) + "_trail");
        const double mean = std::string(role) == "baseline" ? mean_b : mean_c;
        if (std::isfinite(mean)) {
            c.line(f.left, y.at(mean), f.right, y.at(mean), col, 1.5, true, std::string(role) + "_mean");
            labels.push_back({y.at(mean), fmt::format("{} {}", role, ms_text(mean)), col, std::string(role) + "_label"});
        }
    }
    right_labels(c, f.right + 10, f.right, labels, f.top, f.bottom);

    // The speedup and its 95% CI, against 1x.
    const json& ci = r.value("speedup_ci95", json::object());
    const double lo = num(ci, "low"), hi = num(ci, "high");
    c.text((g.left + g.right) / 2, g.top - 8, "speedup (95% CI)", label_size, ink, anchor::center, true, "ci_title");
    if (std::isfinite(sp)) {
        double slo, shi;
        linear_range({1.0, sp, lo, hi}, 0.15, slo, shi);
        const axis s{slo, shi, g.bottom, g.top, false};
        const frame gf{g.left, g.top, g.right, g.bottom};
        for (const auto& t : linear_ticks(slo, shi, 6)) {
            c.line(gf.left, s.at(t.value), gf.right, s.at(t.value), grid, 1);
            c.text(gf.right + 5, s.at(t.value) + 4, t.label + "x", tick_size, muted, anchor::left, false, "tick");
        }
        c.box(gf.left, gf.top, gf.width(), gf.height(), muted, 1);
        c.line(gf.left, s.at(1), gf.right, s.at(1), ink, 1, true, "no_change");
        c.text(gf.right - 3, s.at(1) - 4, "1x: same", tick_size, ink, anchor::right, false, "no_change_label");
        const double cx = (gf.left + gf.right) / 2;
        const rgb col = verdict_colour(verdict);
        if (std::isfinite(lo) && std::isfinite(hi)) {
            error_bar(c, cx, s.at(lo), s.at(hi), col, 2.5, 8);
        }
        c.point(cx, s.at(sp), 5.5, col, false, "speedup");
        c.text(cx + 12, s.at(sp) + 4, format_number(sp, 3) + "x", label_size, col, anchor::left, true, "speedup_label");
        if (std::isfinite(lo) && std::isfinite(hi))
            c.text((gf.left + gf.right) / 2, gf.bottom + 20,
                   fmt::format("CI {}x to {}x", format_number(lo, 3), format_number(hi, 3)), tick_size, col,
                   anchor::center, false, "ci_label");
    } else {
        c.text((g.left + g.right) / 2, (g.top + g.bottom) / 2, "no speedup", label_size, muted, anchor::center, false,
               "ci_none");
        c.text((g.left + g.right) / 2, (g.top + g.bottom) / 2 + 18, "(" + verdict + ")", label_size, muted,
               anchor::center, false, "ci_none");
    }
    return finished(c);
}

// ---- bench ------------------------------------------------------------------------------

picture draw_bench(const json& r, format fmt_) {
    canvas c(fmt_, picture_width, picture_height);
    const frame f = inset(picture_width, picture_height, 84, 70, 190, 62);
    const json runs = r.value("runs", json::array());
    const double mean = num(r, "mean_ms");
    std::vector<double> ys{mean};
    for (const auto& run : runs) {
        ys.push_back(num(run, "ms"));
        const json& line = run.value("line", json::object());
        if (line.is_object() && line.contains("samples_ms") && line["samples_ms"].is_array())
            for (const auto& s : line["samples_ms"])
                if (s.is_number()) ys.push_back(s.get<double>());
    }
    double ylo, yhi;
    linear_range(ys, 0.08, ylo, yhi);
    const double n = std::max<double>(1, static_cast<double>(runs.size()));
    const axis x{0.4, n + 0.6, f.left, f.right, false}, y{ylo, yhi, f.bottom, f.top, false};
    std::string what = str(r, "target");
    if (what.empty()) what = std::filesystem::path(str(r, "script", "script")).filename().string();
    titles(c, fmt::format("bench {}: {} runs, mean {} +/- {}", what, runs.size(), ms_text(mean),
                          ms_text(num(r, "std_ms"))),
           "dots: the samples inside each run; bar: the time the run reported (its median sample for protocol 3)");
    const std::vector<tick> xt = integer_ticks(1, static_cast<long long>(n), 12);
    axes(c, f, x, y, xt, linear_ticks(ylo, yhi), "run", "time of one call [ms]");

    for (const auto& run : runs) {
        const double i = static_cast<double>(run.value("index", 1));
        const json& line = run.value("line", json::object());
        if (line.is_object() && line.contains("samples_ms") && line["samples_ms"].is_array()) {
            const auto& ss = line["samples_ms"];
            const double k = static_cast<double>(ss.size());
            for (std::size_t j = 0; j < ss.size(); ++j) {
                if (!ss[j].is_number()) continue;
                const double dx = k > 1 ? -0.25 + 0.5 * static_cast<double>(j) / (k - 1) : 0;  // in sample order
                c.point(x.at(i + dx), y.at(ss[j].get<double>()), 2.5, blue, true, "sample");
            }
        }
        const double ms = num(run, "ms");
        if (!std::isfinite(ms)) continue;
        if (run.contains("ok") && run["ok"].is_boolean() && !run["ok"].get<bool>())
            c.cross(x.at(i), y.at(ms), 6, red, "run_failed");
        else
            c.line(x.at(i - 0.3), y.at(ms), x.at(i + 0.3), y.at(ms), ink, 2.5, false, "run");
    }
    if (std::isfinite(mean)) {
        c.line(f.left, y.at(mean), f.right, y.at(mean), orange, 1.5, true, "mean");
        right_labels(c, f.right + 10, f.right, {{y.at(mean), "mean of runs " + ms_text(mean), orange, "mean_label"}},
                     f.top, f.bottom);
    }
    return finished(c);
}

// ---- history ----------------------------------------------------------------------------

picture draw_history(const std::string& target, const std::vector<json>& docs, format fmt_) {
    canvas c(fmt_, picture_width, picture_height);
    const frame f = inset(picture_width, picture_height, 84, 70, 190, 76);
    std::vector<double> ys{1.0};
    double best = NAN;
    std::size_t best_i = 0;
    std::vector<std::string> gpus;
    for (std::size_t i = 0; i < docs.size(); ++i) {
        const json& res = docs[i].value("result", json::object());
        const double sp = num(res, "speedup");
        const json& ci = res.value("speedup_ci95", json::object());
        for (double v : {sp, num(ci, "low"), num(ci, "high")}) ys.push_back(v);
        if (str(res, "verdict") == "faster" && (!std::isfinite(best) || sp > best)) {
            best = sp;
            best_i = i;
        }
        const json& gpu = res.value("measurement", json::object()).value("gpu", json());
        const std::string name = gpu.is_object() ? str(gpu, "name", "CPU") : "CPU (no GPU)";
        if (std::find(gpus.begin(), gpus.end(), name) == gpus.end()) gpus.push_back(name);
    }
    double ylo, yhi;
    linear_range(ys, 0.1, ylo, yhi);
    const double n = std::max<double>(1, static_cast<double>(docs.size()));
    const axis x{0.4, n + 0.6, f.left, f.right, false}, y{ylo, yhi, f.bottom, f.top, false};
    std::string head = fmt::format("history of {}: {} record{}", target, docs.size(), docs.size() == 1 ? "" : "s");
    if (gpus.size() == 1) head += " on " + gpus.front();
    if (std::isfinite(best)) head += fmt::format(", best {}x", format_number(best, 3));
    titles(c, head, "speedup (mean_b / mean_c) of each recorded verify with its 95% CI; green faster, red slower, "
                    "grey no gain; x: incorrect or invalid");
    // Ticks at records, labelled with their date; at most ~10 labelled.
    std::vector<tick> xt;
    const std::size_t every = std::max<std::size_t>(1, (docs.size() + 9) / 10);
    for (std::size_t i = 0; i < docs.size(); ++i) {
        std::string when = str(docs[i], "recorded_utc");  // 2026-12-01T15:04:05Z -> 12-01 15:04
        when = when.size() >= 16 ? when.substr(5, 5) + " " + when.substr(11, 5) : when;
        xt.push_back({static_cast<double>(i + 1), i % every == 0 ? when : ""});
    }
    axes(c, f, x, y, xt, linear_ticks(ylo, yhi), "recorded (UTC, oldest first)", "speedup [x the baseline]");
    c.line(f.left, y.at(1), f.right, y.at(1), ink, 1, true, "no_change");
    std::vector<side_label> labels{{y.at(1), "1x: the baseline", ink, "no_change_label"}};
    std::vector<std::pair<double, double>> trail;
    for (std::size_t i = 0; i < docs.size(); ++i) {
        const json& res = docs[i].value("result", json::object());
        const std::string v = str(res, "verdict");
        const double px = x.at(static_cast<double>(i + 1));
        const double sp = num(res, "speedup");
        if (v == "incorrect" || v == "invalid" || !std::isfinite(sp)) {
            c.cross(px, f.bottom - 12, 5, red, v.empty() ? "record" : v);
            c.text(px, f.bottom - 22, v.empty() ? "no speedup" : v, tick_size, red, anchor::center, false, "cross_label");
            continue;
        }
        const json& ci = res.value("speedup_ci95", json::object());
        const double lo = num(ci, "low"), hi = num(ci, "high");
        const rgb col = verdict_colour(v);
        if (std::isfinite(lo) && std::isfinite(hi)) {
            error_bar(c, px, y.at(lo), y.at(hi), col, 2, 5);
        }
        c.point(px, y.at(sp), 5, col, false, v);
        trail.emplace_back(px, y.at(sp));
    }
    if (std::isfinite(best)) {
        const double py = y.at(best);
        labels.push_back({py, fmt::format("best {}x ({})", format_number(best, 3),
                                          str(docs[best_i], "recorded_utc").substr(0, 10)),
                          green, "best_label"});
        c.line(x.at(static_cast<double>(best_i + 1)), py, f.right, py, green, 0.8, true);
    }
    right_labels(c, f.right + 10, f.right, labels, f.top, f.bottom);
    return finished(c);
}

}  // namespace hotkernel::plot
