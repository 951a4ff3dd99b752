// Plot layout maths, pure (no cairo, no I/O): axes that map data to pixels (linear or log),
// their ticks and tick labels, and where direct labels go so that they do not overlap.
//
// Edge cases: an empty or one-value range is widened around the value (a linear axis by 10% of
// it, or by 1 when it is 0; a log axis to the decade around it); a log axis drops values <= 0
// when it picks its range (they cannot be drawn on it).
#pragma once
#include <string>
#include <vector>

namespace hotkernel::plot {

/// A range of data values laid onto a range of pixels. On a log axis lo and hi are > 0.
/// px_lo may be greater than px_hi (a y axis grows upwards, pixels grow downwards).
struct axis {
    double lo = 0, hi = 1;
    double px_lo = 0, px_hi = 1;
    bool log = false;

    /// The pixel of a value (values outside the range map outside the pixel range).
    double at(double v) const;
    bool contains(double v) const;
};

/// A tick: its value and its label as drawn.
struct tick {
    double value = 0;
    std::string label;
};

/// [lo, hi] holding every finite value, padded by `pad` of its span on each side (linear).
/// Empty input gives [0, 1].
void linear_range(const std::vector<double>& values, double pad, double& lo, double& hi);

/// [lo, hi] on whole decades holding every finite value > 0 (log). None gives [1, 10].
void log_range(const std::vector<double>& values, double& lo, double& hi);

/// 1, 2 or 5 times a power of ten, near span / target_count: the step of "nice" ticks.
double nice_step(double span, int target_count);

/// Ticks of a linear axis at multiples of nice_step() inside [lo, hi].
std::vector<tick> linear_ticks(double lo, double hi, int target_count = 6);
/// Ticks at whole numbers only (pair and run indices): a step of 1, 2, 5, 10, ... computed
/// without accumulating a fractional step (which drifts off the integers).
std::vector<tick> integer_ticks(long long lo, long long hi, int target_count = 10);

/// Ticks of a log axis: every decade inside [lo, hi]; with fewer than 3 decades also 2x and 5x.
/// Labels: 0.01, 0.1, 1, 10, 100, 1k, 10k (see format_number).
std::vector<tick> log_ticks(double lo, double hi);

/// A number as a tick or label shows it: up to `digits` significant digits, no trailing zeros,
/// k/M suffixes from 10 000 on, scientific below 1e-3 (1e-05). NaN and infinities: "-".
std::string format_number(double v, int digits = 3);

/// Positions for labels that want to sit at `wanted` (pixels along one direction), each
/// `size` pixels tall, kept `gap` apart and inside [lo, hi]: the order of the labels is kept
/// and each moves as little as it can (sweep from the ends, then centred on its cluster).
/// When they cannot all fit, they are spread evenly over [lo, hi].
std::vector<double> spread_labels(const std::vector<double>& wanted, double size, double gap, double lo, double hi);

/// The plot area inside a canvas of width x height once the margins are taken.
struct frame {
    double left = 0, top = 0, right = 0, bottom = 0;  ///< pixel edges of the plot area
    double width() const { return right - left; }
    double height() const { return bottom - top; }
};
frame inset(double width, double height, double margin_left, double margin_top, double margin_right,
            double margin_bottom);

}  // namespace hotkernel::plot
