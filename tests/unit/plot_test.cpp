// Plots: the layout maths, and the pictures checked by structure (a rendered SVG scanned for
// its elements, a PNG's header), never by pixels; the plot argument through the registry and
// the MCP image block.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>

#include "mcp/plot_image.h"
#include "mcp/server.h"
#include "plot/layout.h"
#include "plot/pictures.h"
#include "plot/save.h"
#include "process/fork_protocol.h"
#include "registry/tool.h"
#include "util/errors.h"
#include "util/files.h"

using namespace hotkernel;
using namespace hotkernel::plot;
namespace fs = std::filesystem;

// ---- layout maths -----------------------------------------------------------------------

TEST(plot_layout, linear_and_log_axes_map_ends_and_middles) {
    const axis x{0, 10, 100, 600, false};
    EXPECT_DOUBLE_EQ(x.at(0), 100);
    EXPECT_DOUBLE_EQ(x.at(10), 600);
    EXPECT_DOUBLE_EQ(x.at(5), 350);
    const axis y{0.01, 1000, 500, 100, true};  // y grows upwards: pixels fall
    EXPECT_DOUBLE_EQ(y.at(0.01), 500);
    EXPECT_DOUBLE_EQ(y.at(1000), 100);
    EXPECT_NEAR(y.at(1), 500 - 400.0 * 2 / 5, 1e-9);  // two of five decades up
    EXPECT_FALSE(y.contains(0));
    EXPECT_FALSE(y.contains(-1));
    EXPECT_TRUE(y.contains(3));
}

TEST(plot_layout, ranges_pad_widen_and_ignore_what_cannot_be_drawn) {
    double lo, hi;
    linear_range({2, 4}, 0.1, lo, hi);
    EXPECT_DOUBLE_EQ(lo, 1.8);
    EXPECT_DOUBLE_EQ(hi, 4.2);
    linear_range({5, 5}, 0.1, lo, hi);  // one value: 10% of it each side
    EXPECT_DOUBLE_EQ(lo, 4.5);
    EXPECT_DOUBLE_EQ(hi, 5.5);
    linear_range({0}, 0.1, lo, hi);
    EXPECT_DOUBLE_EQ(lo, -1);
    EXPECT_DOUBLE_EQ(hi, 1);
    linear_range({NAN}, 0.1, lo, hi);
    EXPECT_DOUBLE_EQ(lo, 0);
    EXPECT_DOUBLE_EQ(hi, 1);
    log_range({0.25, 206, -3, 0, NAN}, lo, hi);  // <= 0 and NaN dropped; whole decades
    EXPECT_DOUBLE_EQ(lo, 0.1);
    EXPECT_DOUBLE_EQ(hi, 1000);
    log_range({100}, lo, hi);  // a power of ten alone still gets a decade
    EXPECT_DOUBLE_EQ(lo, 100);
    EXPECT_DOUBLE_EQ(hi, 1000);
}

TEST(plot_layout, integer_ticks_land_on_whole_numbers) {
    // 3 pairs: 1, 2, 3 (a step of 0.2 accumulated to 2.0000000000000004 and lost every tick but 1)
    auto t = integer_ticks(1, 3);
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0].label, "1");
    EXPECT_EQ(t[2].value, 3.0);
    auto many = integer_ticks(1, 1000, 10);
    EXPECT_LE(many.size(), 12u);
    for (const auto& k : many) EXPECT_EQ(k.value, std::floor(k.value)) << k.label;
    EXPECT_EQ(integer_ticks(1, 1).size(), 1u);
    EXPECT_TRUE(integer_ticks(3, 1).empty());
}

TEST(plot_layout, ticks_are_nice_and_inside_the_range) {
    EXPECT_DOUBLE_EQ(nice_step(1, 5), 0.2);
    EXPECT_DOUBLE_EQ(nice_step(0.07, 6), 0.01);
    EXPECT_DOUBLE_EQ(nice_step(7, 6), 1);
    EXPECT_DOUBLE_EQ(nice_step(300, 6), 50);
    auto t = linear_ticks(0.93, 1.27, 6);
    ASSERT_FALSE(t.empty());
    EXPECT_DOUBLE_EQ(t.front().value, 0.95);
    EXPECT_EQ(t.front().label, "0.95");
    EXPECT_NEAR(t.back().value, 1.25, 1e-12);
    for (const auto& k : t) EXPECT_TRUE(k.value >= 0.93 && k.value <= 1.27) << k.value;
    auto z = linear_ticks(-1, 1, 4);  // zero is "0", never "-0" or 1e-17
    EXPECT_TRUE(std::any_of(z.begin(), z.end(), [](const tick& k) { return k.label == "0"; }));

    auto wide = log_ticks(0.01, 10000);  // six decades: decades only
    ASSERT_EQ(wide.size(), 7u);
    EXPECT_EQ(wide.front().label, "0.01");
    EXPECT_EQ(wide.back().label, "10k");
    auto narrow = log_ticks(1, 100);  // two decades: 1, 2, 5, 10, 20, 50, 100
    ASSERT_EQ(narrow.size(), 7u);
    EXPECT_EQ(narrow[1].label, "2");
    EXPECT_EQ(narrow[5].label, "50");
}

TEST(plot_layout, numbers_read_as_a_person_writes_them) {
    EXPECT_EQ(format_number(989.4), "989");
    EXPECT_EQ(format_number(0.0699, 3), "0.0699");
    EXPECT_EQ(format_number(1.230, 3), "1.23");
    EXPECT_EQ(format_number(4800, 4), "4800");
    EXPECT_EQ(format_number(10000), "10k");
    EXPECT_EQ(format_number(2.5e6), "2.5M");
    EXPECT_EQ(format_number(0), "0");
    EXPECT_EQ(format_number(NAN), "-");
    EXPECT_EQ(format_number(0.00012, 3), "1.2e-04");
}

TEST(plot_layout, labels_keep_their_order_move_little_and_never_overlap) {
    // Far apart: untouched.
    auto a = spread_labels({100, 200, 300}, 12, 3, 0, 500);
    EXPECT_DOUBLE_EQ(a[0], 100);
    EXPECT_DOUBLE_EQ(a[1], 200);
    EXPECT_DOUBLE_EQ(a[2], 300);
    // Three on one spot (given out of order): spread around it, order by wanted kept.
    auto b = spread_labels({250, 249, 251}, 12, 3, 0, 500);
    EXPECT_LT(b[1], b[0]);
    EXPECT_LT(b[0], b[2]);
    EXPECT_NEAR(b[2] - b[1], 30, 1e-9);
    EXPECT_NEAR((b[0] + b[1] + b[2]) / 3, 250, 1e-9);
    // Pressed against the edge: kept inside.
    auto c = spread_labels({2, 3}, 12, 3, 0, 500);
    EXPECT_GE(std::min(c[0], c[1]), 6);
    EXPECT_GE(std::fabs(c[0] - c[1]), 15 - 1e-9);
    // Cannot fit: evenly over the range, still in order.
    auto d = spread_labels({5, 6, 7, 8}, 12, 3, 0, 30);
    EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
    EXPECT_GE(d.front(), 0);
    EXPECT_LE(d.back(), 30);
    EXPECT_TRUE(spread_labels({}, 12, 3, 0, 10).empty());
}

// ---- the pictures, by structure ---------------------------------------------------------

namespace {

json verify_result(const std::string& verdict = "faster") {
    json r{{"verdict", verdict}, {"target", "gelu"},      {"n", 6},
           {"warmup", 1},        {"threshold_ms", 0.02}, {"baseline", {{"mean_ms", 1.0}}},
           {"candidate", {{"mean_ms", 0.8}}}};
    if (verdict == "faster") {
        r["speedup"] = 1.25;
        r["speedup_ci95"] = {{"low", 1.2}, {"high", 1.3}};
    }
    json runs = json::array();
    for (int i = 0; i <= 6; ++i) {  // index 1 twice: the warm-up pair, then the first timed pair
        const bool warm = i == 0;
        const int idx = warm ? 1 : i;
        runs.push_back({{"role", "baseline"}, {"index", idx}, {"warmup", warm}, {"ms", 1.0 + 0.01 * (i % 3)}, {"ok", true}});
        runs.push_back({{"role", "candidate"}, {"index", idx}, {"warmup", warm}, {"ms", 0.78 + 0.01 * i}, {"ok", true}});
    }
    r["runs"] = runs;
    return r;
}

/// A filled circle cairo wrote: <path style="...fill:rgb(...)..." d="M x+r y C ...">.
struct svg_dot {
    std::string fill;
    double x = 0, y = 0;
};

/// The drawn (not <defs>) filled paths that are circles, and the number of text runs (<g> of glyphs).
void scan_svg(const std::string& svg, std::vector<svg_dot>& dots, std::size_t& text_runs) {
    ASSERT_EQ(svg.rfind("<?xml", 0), 0u);
    ASSERT_NE(svg.find("<svg"), std::string::npos);
    ASSERT_NE(svg.find("</svg>"), std::string::npos);
    const std::size_t body = svg.find("</defs>");
    ASSERT_NE(body, std::string::npos);
    const std::string s = svg.substr(body);
    static const std::regex path_re(R"re(<path style="([^"]*)" d="M ([-0-9.]+) ([-0-9.]+) C [^"]*")re");
    for (auto it = std::sregex_iterator(s.begin(), s.end(), path_re); it != std::sregex_iterator(); ++it) {
        const std::string style = (*it)[1];
        const auto f = style.find("fill:rgb(");
        if (f == std::string::npos) continue;
        dots.push_back({style.substr(f + 9, style.find(')', f) - f - 9), std::stod((*it)[2]), std::stod((*it)[3])});
    }
    static const std::regex text_re(R"re(<g style="fill:rgb\([^"]*"[^>]*>\s*<use xlink:href="#glyph)re");
    text_runs = static_cast<std::size_t>(std::distance(std::sregex_iterator(s.begin(), s.end(), text_re), std::sregex_iterator()));
}

std::vector<const scene_item*> items(const picture& p, const std::string& kind, const std::string& role = "") {
    std::vector<const scene_item*> out;
    for (const auto& e : p.scene)
        if (e.kind == kind && (role.empty() || e.role == role)) out.push_back(&e);
    return out;
}

bool has_label(const picture& p, const std::string& needle) {
    for (const auto& e : p.scene)
        if (e.kind == "label" && e.text.find(needle) != std::string::npos) return true;
    return false;
}

/// Width and height from a PNG's signature and IHDR chunk.
bool png_size(const std::string& b, unsigned& w, unsigned& h) {
    if (b.size() < 24 || b.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || b.compare(12, 4, "IHDR") != 0) return false;
    auto be32 = [&](std::size_t at) {
        return (unsigned(static_cast<unsigned char>(b[at])) << 24) | (unsigned(static_cast<unsigned char>(b[at + 1])) << 16) |
               (unsigned(static_cast<unsigned char>(b[at + 2])) << 8) | unsigned(static_cast<unsigned char>(b[at + 3]));
    };
    w = be32(16);
    h = be32(20);
    return true;
}

#define SKIP_WITHOUT_PLOTS() \
    if (!plot::available()) GTEST_SKIP() << "this build has no plots (HOTKERNEL_PLOTS=OFF)"

}  // namespace

TEST(plot_pictures, verify_svg_has_every_timed_run_in_order_and_the_verdict_in_the_title) {
    SKIP_WITHOUT_PLOTS();
    const json r = verify_result();
    const picture p = draw_verify(r, format::svg);
    std::vector<svg_dot> dots;
    std::size_t text_runs = 0;
    scan_svg(p.bytes, dots, text_runs);
    // Filled dots by colour: 6 timed baseline runs, 6 timed candidate runs, 1 speedup point
    // (the warm-ups are rings, stroked, not filled).
    std::map<std::string, std::vector<svg_dot>> by_fill;
    for (const auto& d : dots) by_fill[d.fill].push_back(d);
    std::vector<std::size_t> counts;
    for (const auto& [fill, ds] : by_fill) counts.push_back(ds.size());
    std::sort(counts.begin(), counts.end());
    EXPECT_EQ(counts, (std::vector<std::size_t>{1, 6, 6}));
    // Placed in run order, and the faster side (the candidate, lower ms) lower on the page.
    const auto& scene_c = items(p, "point", "candidate");
    const auto& scene_b = items(p, "point", "baseline");
    ASSERT_EQ(scene_c.size(), 7u);  // with its warm-up
    ASSERT_EQ(scene_b.size(), 7u);
    for (const auto& [fill, ds] : by_fill) {
        if (ds.size() != 6) continue;
        for (std::size_t i = 1; i < ds.size(); ++i) EXPECT_GT(ds[i].x, ds[i - 1].x) << fill;
    }
    for (std::size_t i = 1; i < 7; ++i) EXPECT_GT(scene_c[i]->y, scene_b[i]->y) << "candidate below baseline at " << i;
    // The candidate's times rise run by run (0.79 .. 0.84 ms): its dots climb the page.
    for (std::size_t i = 2; i < 7; ++i) EXPECT_LT(scene_c[i]->y, scene_c[i - 1]->y);
    // Every label the scene holds was written as one run of glyphs in the file.
    EXPECT_EQ(text_runs, items(p, "label").size());
    ASSERT_FALSE(items(p, "label", "title").empty());
    EXPECT_NE(items(p, "label", "title").front()->text.find("faster"), std::string::npos);
    EXPECT_TRUE(has_label(p, "baseline 1 ms"));
    EXPECT_TRUE(has_label(p, "candidate 0.8 ms"));
    EXPECT_TRUE(has_label(p, "threshold +/-0.02 ms"));
    EXPECT_TRUE(has_label(p, "CI 1.2x to 1.3x"));
    EXPECT_TRUE(has_label(p, "time of one call [ms]"));
    EXPECT_EQ(items(p, "band", "threshold").size(), 1u);
    EXPECT_EQ(items(p, "line", "ci").size(), 1u);
}

TEST(plot_pictures, verify_without_a_speedup_says_so_instead_of_an_interval) {
    SKIP_WITHOUT_PLOTS();
    json r = verify_result("incorrect");
    r["runs"][3]["ok"] = false;  // a candidate run that failed its check: a cross
    const picture p = draw_verify(r, format::svg);
    EXPECT_TRUE(items(p, "line", "ci").empty());
    EXPECT_TRUE(has_label(p, "no speedup"));
    EXPECT_EQ(items(p, "cross", "candidate").size(), 1u);
    EXPECT_NE(items(p, "label", "title").front()->text.find("incorrect"), std::string::npos);
}

TEST(plot_pictures, roofline_places_ceilings_ridge_and_points_with_their_pct_of_floor) {
    SKIP_WITHOUT_PLOTS();
    // H200 bf16, memory-bound at 0.25 flop/B: floor 0.0699 ms; baseline 0.12 ms, candidate 0.085 ms.
    const double flops = 8.39e7;
    json r{{"gpu", "NVIDIA H200"},
           {"dtype", "bf16"},
           {"flops", flops},
           {"peak_tflops", 989.4},
           {"peak_mem_gbs", 4800},
           {"measured_mem_gbs", 4250},
           {"measured_mem_gbs_source", "calibration cache"},
           {"arithmetic_intensity", 0.25},
           {"ridge_point", 206.125},
           {"bound", "memory"},
           {"attainable_tflops", 1.2},
           {"attainable_ms", 0.0699},
           {"attainable_ms_measured", 0.079},
           {"points",
            {{{"label", "baseline"}, {"ms", 0.12}, {"achieved_tflops", flops / 0.12e9}, {"pct_of_floor", 58.24}},
             {{"label", "candidate"}, {"ms", 0.085}, {"achieved_tflops", flops / 0.085e9}, {"pct_of_floor", 82.2}}}}};
    const picture p = draw_roofline(r, format::svg);
    std::vector<svg_dot> dots;
    std::size_t text_runs = 0;
    scan_svg(p.bytes, dots, text_runs);
    EXPECT_EQ(dots.size(), 2u);  // the two measured points (the floors are rings)
    EXPECT_EQ(text_runs, items(p, "label").size());
    EXPECT_EQ(items(p, "line", "roof_datasheet").size(), 1u);
    EXPECT_EQ(items(p, "line", "roof_measured").size(), 1u);
    EXPECT_EQ(items(p, "line", "ridge").size(), 1u);
    EXPECT_TRUE(has_label(p, "ridge 206 flop/B"));
    EXPECT_TRUE(has_label(p, "peak 989 TFLOPS (bf16)"));
    EXPECT_TRUE(has_label(p, "datasheet 4800 GB/s"));
    EXPECT_TRUE(has_label(p, "measured 4250 GB/s (calibrated)"));
    EXPECT_TRUE(has_label(p, "baseline 0.12 ms: 58.2% of floor"));
    EXPECT_TRUE(has_label(p, "candidate 0.085 ms: 82.2% of floor"));
    EXPECT_TRUE(has_label(p, "arithmetic intensity [flop/byte]"));
    // Both points sit on the kernel's intensity; the faster one higher; the ridge right of them.
    const auto b = items(p, "point", "baseline"), c = items(p, "point", "candidate"), f = items(p, "point", "floor");
    ASSERT_EQ(b.size(), 1u);
    ASSERT_EQ(c.size(), 1u);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_DOUBLE_EQ(b[0]->x, c[0]->x);
    EXPECT_LT(c[0]->y, b[0]->y);
    EXPECT_LT(f[0]->y, c[0]->y);  // the floor above both: nothing beats it
    EXPECT_GT(items(p, "line", "ridge").front()->x, b[0]->x);
    // A dot in the file where the scene put each point (cairo writes a circle from its right edge).
    for (const auto* pt : {b[0], c[0]}) {
        const bool found = std::any_of(dots.begin(), dots.end(), [&](const svg_dot& d) {
            return std::fabs(d.x - 6 - pt->x) < 0.01 && std::fabs(d.y - pt->y) < 0.01;
        });
        EXPECT_TRUE(found) << pt->role;
    }
}

TEST(plot_pictures, bench_draws_each_runs_samples_and_its_reported_time) {
    SKIP_WITHOUT_PLOTS();
    json runs = json::array();
    for (int i = 1; i <= 4; ++i)
        runs.push_back({{"index", i}, {"ms", 1.0 + 0.01 * i}, {"line", {{"samples_ms", {1.0, 1.01, 1.02, 1.03, 1.04}}}}});
    const json r{{"target", "gelu"}, {"mean_ms", 1.025}, {"std_ms", 0.013}, {"runs", runs}};
    const picture p = draw_bench(r, format::svg);
    EXPECT_EQ(items(p, "point", "sample").size(), 20u);
    EXPECT_EQ(items(p, "line", "run").size(), 4u);
    EXPECT_TRUE(has_label(p, "mean of runs 1.025 ms"));
    EXPECT_NE(items(p, "label", "title").front()->text.find("bench gelu: 4 runs"), std::string::npos);
    // Samples of run 1 left of run 2's.
    const auto s = items(p, "point", "sample");
    EXPECT_LT(s[4]->x, s[5]->x);
}

TEST(plot_pictures, history_has_a_point_per_timed_record_and_crosses_for_the_rest) {
    SKIP_WITHOUT_PLOTS();
    std::vector<json> docs;
    const char* verdicts[] = {"inconclusive", "faster", "incorrect", "faster"};
    const double speedups[] = {1.01, 1.2, NAN, 1.4};
    for (int i = 0; i < 4; ++i) {
        json res{{"verdict", verdicts[i]}, {"measurement", {{"gpu", {{"name", "NVIDIA H200"}}}}}};
        if (std::isfinite(speedups[i])) {
            res["speedup"] = speedups[i];
            res["speedup_ci95"] = {{"low", speedups[i] - 0.05}, {"high", speedups[i] + 0.05}};
        }
        docs.push_back({{"recorded_utc", "2026-12-0" + std::to_string(i + 1) + "T10:00:00Z"}, {"result", res}});
    }
    const picture p = draw_history("gelu", docs, format::svg);
    EXPECT_EQ(items(p, "point").size(), 3u);
    EXPECT_EQ(items(p, "cross", "incorrect").size(), 1u);
    EXPECT_EQ(items(p, "line", "ci").size(), 3u);
    EXPECT_TRUE(has_label(p, "best 1.4x (2026-12-04)"));
    EXPECT_TRUE(has_label(p, "12-01 10:00"));
    EXPECT_NE(items(p, "label", "title").front()->text.find("history of gelu: 4 records on NVIDIA H200"),
              std::string::npos);
    const auto pts = items(p, "point", "faster");
    ASSERT_EQ(pts.size(), 2u);
    EXPECT_LT(pts[1]->y, pts[0]->y);  // 1.4x above 1.2x
    EXPECT_GT(pts[1]->x, pts[0]->x);  // and later
}

TEST(plot_pictures, png_of_the_same_drawing_decodes_at_the_canvas_size_and_stays_small) {
    SKIP_WITHOUT_PLOTS();
    const picture p = draw_verify(verify_result(), format::png);
    unsigned w = 0, h = 0;
    ASSERT_TRUE(png_size(p.bytes, w, h));
    EXPECT_EQ(w, static_cast<unsigned>(picture_width));
    EXPECT_EQ(h, static_cast<unsigned>(picture_height));
    EXPECT_LT(p.bytes.size(), 120u * 1024) << "an MCP image block should be a few tens of KB";
    EXPECT_EQ(p.bytes.substr(p.bytes.size() - 8, 4), "IEND");
}

// ---- the plot argument ------------------------------------------------------------------

TEST(plot_save, the_argument_names_png_svg_or_true_and_nothing_else) {
    SKIP_WITHOUT_PLOTS();
    EXPECT_EQ(check_plot_arg("a/b.PNG"), format::png);
    EXPECT_EQ(check_plot_arg("out.svg"), format::svg);
    EXPECT_EQ(check_plot_arg(default_plot), format::png);
    try {
        check_plot_arg("plot.pdf");
        FAIL() << "a .pdf was accepted";
    } catch (const usage_error& e) {
        EXPECT_NE(std::string(e.what()).find(".png or .svg"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("plot.pdf"), std::string::npos) << e.what();
    }
}

TEST(plot_save, writes_the_file_and_says_where_and_how_big) {
    SKIP_WITHOUT_PLOTS();
    const fs::path dir = make_temp_dir("plot-save");
    const json r = verify_result();
    const json out = save_plot((dir / "v.svg").string(), "verify", "gelu", [&](format f) { return draw_verify(r, f); });
    EXPECT_EQ(out["format"], "svg");
    EXPECT_EQ(out["path"], fs::absolute(dir / "v.svg").lexically_normal().string());
    EXPECT_EQ(out["bytes"].get<std::uintmax_t>(), fs::file_size(dir / "v.svg"));
    // No temporary left beside it (the write is atomic: temp file, then rename).
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
    EXPECT_EQ(files, 1u);
    // A folder that cannot be written: the result says why; nothing throws away the measurement.
    const json bad = save_plot("/proc/no-such/v.png", "verify", "gelu", [&](format f) { return draw_verify(r, f); });
    EXPECT_TRUE(bad.contains("error")) << bad;
    EXPECT_FALSE(bad.contains("bytes"));
    fs::remove_all(dir);
}

TEST(plot_save, plot_true_goes_to_the_runs_folder_as_png) {
    const std::string p = plot_path(default_plot, "roofline", "h200 sxm/x");
    EXPECT_EQ(fs::path(p).parent_path(), cache_dir() / "runs");
    EXPECT_EQ(fs::path(p).extension(), ".png");
    EXPECT_NE(fs::path(p).filename().string().find("-roofline-h200_sxm_x-"), std::string::npos) << p;
    EXPECT_EQ(plot_path("mine.svg", "roofline", "x"), "mine.svg");
}

TEST(plot_registry, plot_takes_a_path_or_true_on_every_drawing_tool) {
    for (const char* name : {"roofline", "verify", "bench", "record"}) {
        const tool_spec* t = find_tool(name);
        ASSERT_NE(t, nullptr) << name;
        const json schema = input_schema(*t);
        ASSERT_TRUE(schema["properties"].contains("plot")) << name;
        EXPECT_EQ(schema["properties"]["plot"]["type"], "string") << name;  // one type a property (registry_test)
        EXPECT_NE(schema["properties"]["plot"]["description"].get<std::string>().find("true: a PNG"), std::string::npos);
    }
    const tool_spec* roof = find_tool("roofline");
    const json base{{"gpu", "h200_sxm"}, {"flops", 1e9}, {"bytes", 1e9}};
    json a = base;
    a["plot"] = true;
    EXPECT_EQ(validate_args(*roof, a)["plot"], default_plot);
    a["plot"] = "true";  // what a client that keeps to the schema's string sends
    EXPECT_EQ(validate_args(*roof, a)["plot"], default_plot);
    a["plot"] = false;
    EXPECT_FALSE(validate_args(*roof, a).contains("plot"));
    a["plot"] = "r.svg";
    EXPECT_EQ(validate_args(*roof, a)["plot"], "r.svg");
    a["plot"] = 3;
    EXPECT_THROW(validate_args(*roof, a), usage_error);
}

// ---- over MCP: the image block ----------------------------------------------------------

TEST(plot_mcp, roofline_plot_true_answers_with_a_png_image_block_that_decodes) {
    SKIP_WITHOUT_PLOTS();
    const fs::path home = make_temp_dir("plot-mcp");
    const char* old = std::getenv("XDG_CACHE_HOME");
    const std::string saved = old ? old : "";
    ::setenv("XDG_CACHE_HOME", home.c_str(), 1);

    std::mutex m;
    std::condition_variable cv;
    json response;
    mcp_session_options o;
    o.tools = {*find_tool("roofline")};
    mcp_session s(std::move(o), [&](const json& msg) {
        std::lock_guard lock(m);
        if (msg.contains("id") && msg["id"] == 7) response = json::parse(dump_line(msg));
        cv.notify_all();
    });
    s.handle_line(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"roofline","arguments":)"
                  R"({"gpu":"h200_sxm","flops":83886080,"bytes":335544320,"baseline_ms":0.12,"candidate_ms":0.085,"plot":true}}})");
    {
        std::unique_lock lock(m);
        cv.wait_for(lock, std::chrono::seconds(30), [&] { return !response.is_null(); });
    }
    if (old) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
    else ::unsetenv("XDG_CACHE_HOME");

    ASSERT_TRUE(response.contains("result")) << response;
    const json& res = response["result"];
    ASSERT_NE(res.value("isError", false), true) << res;
    const json& plot = res["structuredContent"]["plot"];
    EXPECT_EQ(plot["format"], "png");
    EXPECT_EQ(fs::path(plot["path"].get<std::string>()).parent_path(), home / "hotkernel" / "runs");
    ASSERT_EQ(res["content"].size(), 2u) << "text, then the image";
    EXPECT_EQ(res["content"][0]["type"], "text");
    const json& img = res["content"][1];
    EXPECT_EQ(img["type"], "image");
    EXPECT_EQ(img["mimeType"], "image/png");
    const std::string png = base64_decode(img["data"].get<std::string>());
    unsigned w = 0, h = 0;
    ASSERT_TRUE(png_size(png, w, h));
    EXPECT_EQ(w, static_cast<unsigned>(picture_width));
    EXPECT_EQ(png.size(), plot["bytes"].get<std::size_t>());
    EXPECT_EQ(png, read_file(plot["path"].get<std::string>()));
    // The points it drew are in the result too.
    ASSERT_EQ(res["structuredContent"]["points"].size(), 2u);
    EXPECT_NEAR(res["structuredContent"]["points"][1]["pct_of_floor"].get<double>(),
                100 * res["structuredContent"]["attainable_ms"].get<double>() / 0.085, 1e-9);
    fs::remove_all(home);
}

TEST(plot_mcp, no_image_for_an_svg_or_a_plot_that_was_not_written) {
    json call{{"content", json::array({{{"type", "text"}, {"text", "{}"}}})},
              {"structuredContent", {{"plot", {{"path", "/x.svg"}, {"format", "svg"}, {"bytes", 10}}}}}};
    add_plot_image(call);
    EXPECT_EQ(call["content"].size(), 1u);
    call["structuredContent"]["plot"] = {{"path", "/no/such.png"}, {"format", "png"}, {"error", "cannot write"}};
    add_plot_image(call);
    EXPECT_EQ(call["content"].size(), 1u);
    call["structuredContent"].erase("plot");
    add_plot_image(call);
    EXPECT_EQ(call["content"].size(), 1u);
}
