// CI gates on a verify verdict: `--fail-on slower|not-faster|regression:<pct>`. Pure.
//
//   mixed           (several workloads, faster at some, slower at others) fails slower and
//                   not-faster, and is undecided for regression: a loss the mean does not hide.
//   slower          fails on slower, incorrect, invalid; inconclusive passes (nothing was shown
//                   slower). Never undecided.
//   not-faster      passes only on faster; fails on slower, incorrect, invalid; inconclusive is
//                   undecided (the gate needs a decision the runs did not give: retry or run more).
//   regression:P    fails on incorrect, invalid, or when the speedup's 95% interval lies wholly
//                   below 1/(1+P/100) (surely more than P% slower); passes when the interval lies
//                   wholly at or above it, or the verdict is faster; undecided when the interval
//                   straddles the bound (or there is none).
//
// The exit codes a CI reads (0 pass, 1 fail, 4 undecided) are the CLI's business (cli.cpp).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hotkernel {

enum class gate_kind { slower, not_faster, regression };
enum class gate_outcome { pass, fail, undecided };

struct gate_rule {
    gate_kind kind = gate_kind::slower;
    double regression_pct = 0;  ///< regression only: the tolerated slowdown, in percent (>= 0)
};

/// The rule from its text; std::nullopt with `error` saying what is wrong (the value cut short).
std::optional<gate_rule> parse_gate(std::string_view text, std::string& error);
/// The rule as the user writes it ("regression:5").
std::string gate_text(const gate_rule& rule);
std::string_view to_string(gate_outcome o);

struct gate_input {
    std::string verdict;                ///< faster, slower, inconclusive, incorrect, invalid
    std::optional<double> speedup;      ///< mean_b / mean_c
    std::optional<double> ci_low;       ///< the speedup's 95% interval
    std::optional<double> ci_high;
};

struct gate_result {
    gate_outcome outcome = gate_outcome::undecided;
    std::string reason;  ///< one sentence: why it passed, failed or could not decide
};

gate_result apply_gate(const gate_rule& rule, const gate_input& in);

}  // namespace hotkernel
