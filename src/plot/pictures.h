// The four pictures, each drawn once from a tool's result onto a canvas (PNG or SVG alike):
// roofline, verify, bench and a target's history from results/. Every one titles what it
// shows, puts units on its axes and labels its lines and points where they are drawn.
#pragma once
#include <string>
#include <vector>

#include "plot/canvas.h"
#include "util/json.h"

namespace hotkernel::plot {

/// Canvas size of every picture [px]: a PNG of it is a few tens of KB.
inline constexpr int picture_width = 880;
inline constexpr int picture_height = 540;

struct picture {
    std::string bytes;               ///< the file (PNG or SVG)
    std::vector<scene_item> scene;   ///< what was drawn where (canvas.h)
};

/// The roofline tool's result: datasheet ceilings (peak_tflops, peak_mem_gbs), the measured
/// bandwidth's when present (measured_mem_gbs), the ridge, the kernel's intensity and floor, and
/// its `points` ({label, ms, achieved_tflops, pct_of_floor}), each labelled with its % of floor.
picture draw_roofline(const json& result, format f);

/// A verify result (its `runs`, in launch order): every timed run's time by pair, warm-ups
/// hollow, each side's mean, the seed's threshold as a band around the baseline mean, and the
/// paired speedup with its 95% CI beside; the verdict in the title.
picture draw_verify(const json& result, format f);

/// A bench result: the samples inside each run (from its line's samples_ms) and the time the
/// run reported, by run, with the mean across runs.
picture draw_bench(const json& result, format f);

/// One target's records (result files' documents: {recorded_utc, note, result: {verdict,
/// speedup, speedup_ci95, ...}}), oldest first: the speedup with its CI per record, coloured by
/// verdict; incorrect and invalid records as crosses on the bottom line.
picture draw_history(const std::string& target, const std::vector<json>& docs, format f);

}  // namespace hotkernel::plot
