#include "plot/layout.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace hotkernel::plot {

double axis::at(double v) const {
    double t;
    if (log) t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    else t = (v - lo) / (hi - lo);
    return px_lo + t * (px_hi - px_lo);
}

bool axis::contains(double v) const {
    if (!std::isfinite(v) || (log && v <= 0)) return false;
    const double eps = (hi - lo) * 1e-9;
    return v >= lo - eps && v <= hi + eps;
}

void linear_range(const std::vector<double>& values, double pad, double& lo, double& hi) {
    lo = INFINITY;
    hi = -INFINITY;
    for (double v : values)
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (!std::isfinite(lo)) {
        lo = 0;
        hi = 1;
        return;
    }
    if (hi == lo) {
        const double w = lo == 0 ? 1 : std::fabs(lo) * 0.1;
        lo -= w;
        hi += w;
        return;
    }
    const double span = hi - lo;
    lo -= span * pad;
    hi += span * pad;
}

void log_range(const std::vector<double>& values, double& lo, double& hi) {
    double a = INFINITY, b = -INFINITY;
    for (double v : values)
        if (std::isfinite(v) && v > 0) {
            a = std::min(a, v);
            b = std::max(b, v);
        }
    if (!std::isfinite(a)) {
        lo = 1;
        hi = 10;
        return;
    }
    lo = std::pow(10.0, std::floor(std::log10(a)));
    hi = std::pow(10.0, std::ceil(std::log10(b)));
    if (hi <= lo) hi = lo * 10;
}

double nice_step(double span, int target_count) {
    if (!(span > 0) || target_count < 1) return 1;
    const double raw = span / target_count;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    const double m = f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10;
    return m * mag;
}

std::vector<tick> linear_ticks(double lo, double hi, int target_count) {
    std::vector<tick> out;
    if (!(hi > lo)) return out;
    const double step = nice_step(hi - lo, target_count);
    const double first = std::ceil(lo / step - 1e-9) * step;
    for (double v = first; v <= hi + step * 1e-9; v += step) {
        const double clean = std::fabs(v) < step * 1e-9 ? 0.0 : v;  // no "-0" or 1e-17
        out.push_back({clean, format_number(clean, 4)});
        if (out.size() > 100) break;
    }
    return out;
}

std::vector<tick> integer_ticks(long long lo, long long hi, int target_count) {
    std::vector<tick> out;
    if (hi < lo) return out;
    const long long step = std::max(1LL, static_cast<long long>(std::llround(nice_step(static_cast<double>(hi - lo), target_count))));
    const long long first = lo % step == 0 ? lo : lo + (step - ((lo % step) + step) % step);
    for (long long v = first; v <= hi && out.size() <= 100; v += step) out.push_back({static_cast<double>(v), std::to_string(v)});
    return out;
}

std::vector<tick> log_ticks(double lo, double hi) {
    std::vector<tick> out;
    if (!(lo > 0) || !(hi > lo)) return out;
    const int d0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
    const int d1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
    const bool minor = d1 - d0 < 3;
    for (int d = d0; d <= d1; ++d)
        for (double m : {1.0, 2.0, 5.0}) {
            if (m != 1.0 && !minor) continue;
            const double v = m * std::pow(10.0, d);
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back({v, format_number(v)});
        }
    return out;
}

std::string format_number(double v, int digits) {
    if (!std::isfinite(v)) return "-";
    if (v == 0) return "0";
    const double a = std::fabs(v);
    auto trimmed = [](std::string s) {
        if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
            while (!s.empty() && s.back() == '0') s.pop_back();
            if (!s.empty() && s.back() == '.') s.pop_back();
        }
        return s;
    };
    if (a >= 1e6 - 0.5) return trimmed(fmt::format("{:.{}g}", v / 1e6, digits)) + "M";
    if (a >= 1e4) return trimmed(fmt::format("{:.{}g}", v / 1e3, digits)) + "k";
    if (a < 1e-3) return fmt::format("{:.{}e}", v, std::max(0, digits - 2));
    // Fixed notation with `digits` significant digits.
    const int mag = static_cast<int>(std::floor(std::log10(a)));
    const int decimals = std::max(0, digits - 1 - mag);
    return trimmed(fmt::format("{:.{}f}", v, decimals));
}

std::vector<double> spread_labels(const std::vector<double>& wanted, double size, double gap, double lo, double hi) {
    const std::size_t n = wanted.size();
    std::vector<double> out(n);
    if (n == 0) return out;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return wanted[a] < wanted[b]; });
    const double pitch = size + gap;
    const double room_lo = lo + size / 2, room_hi = hi - size / 2;
    if (pitch * static_cast<double>(n - 1) > room_hi - room_lo) {
        for (std::size_t k = 0; k < n; ++k)
            out[order[k]] = n == 1 ? (lo + hi) / 2
                                   : room_lo + (room_hi - room_lo) * static_cast<double>(k) / static_cast<double>(n - 1);
        return out;
    }
    // Clusters of labels that touch, each centred on the mean of what its members want.
    struct cluster {
        double sum = 0;
        std::size_t first = 0, count = 0;
        double start(double p) const { return sum / static_cast<double>(count) - p * static_cast<double>(count - 1) / 2; }
    };
    std::vector<cluster> cs;
    for (std::size_t k = 0; k < n; ++k) {
        cs.push_back({wanted[order[k]], k, 1});
        while (cs.size() > 1) {
            cluster& b = cs[cs.size() - 1];
            cluster& a = cs[cs.size() - 2];
            const double a_end = std::clamp(a.start(pitch), room_lo, room_hi - pitch * static_cast<double>(a.count - 1)) +
                                 pitch * static_cast<double>(a.count - 1);
            const double b_start = std::clamp(b.start(pitch), room_lo, room_hi - pitch * static_cast<double>(b.count - 1));
            if (b_start - a_end >= pitch - 1e-9) break;
            a.sum += b.sum;
            a.count += b.count;
            cs.pop_back();
        }
    }
    for (const auto& c : cs) {
        const double s = std::clamp(c.start(pitch), room_lo, room_hi - pitch * static_cast<double>(c.count - 1));
        for (std::size_t i = 0; i < c.count; ++i) out[order[c.first + i]] = s + pitch * static_cast<double>(i);
    }
    return out;
}

frame inset(double width, double height, double margin_left, double margin_top, double margin_right,
            double margin_bottom) {
    return frame{margin_left, margin_top, width - margin_right, height - margin_bottom};
}

}  // namespace hotkernel::plot
