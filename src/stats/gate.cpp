#include "stats/gate.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "util/strings.h"
#include "util/words.h"

namespace hotkernel {

std::optional<gate_rule> parse_gate(std::string_view text, std::string& error) {
    const std::string t = trim(text);
    if (t == "slower") return gate_rule{gate_kind::slower, 0};
    if (t == "not-faster" || t == "not_faster") return gate_rule{gate_kind::not_faster, 0};
    constexpr std::string_view prefix = "regression:";
    if (t.starts_with(prefix)) {
        std::string pct = t.substr(prefix.size());
        if (!pct.empty() && pct.back() == '%') pct.pop_back();
        double v = 0;
        const auto [end, ec] = std::from_chars(pct.data(), pct.data() + pct.size(), v);
        if (ec == std::errc() && end == pct.data() + pct.size() && std::isfinite(v) && v >= 0 && v < 1000)
            return gate_rule{gate_kind::regression, v};
        error = fmt::format("the regression bound '{}' is not a percentage in 0..1000 (e.g. regression:5 fails when the "
                            "candidate is surely more than 5% slower)",
                            shorten(pct, 40));
        return std::nullopt;
    }
    error = fmt::format("'{}' is not a gate; use slower, not-faster or regression:<pct> (e.g. regression:5)",
                        shorten(t, 60));
    return std::nullopt;
}

std::string gate_text(const gate_rule& rule) {
    switch (rule.kind) {
        case gate_kind::slower: return "slower";
        case gate_kind::not_faster: return "not-faster";
        case gate_kind::regression: return fmt::format("regression:{:g}", rule.regression_pct);
    }
    return "slower";
}

std::string_view to_string(gate_outcome o) {
    switch (o) {
        case gate_outcome::pass: return "pass";
        case gate_outcome::fail: return "fail";
        case gate_outcome::undecided: return "undecided";
    }
    return "undecided";
}

gate_result apply_gate(const gate_rule& rule, const gate_input& in) {
    const std::string& v = in.verdict;
    if (v == "incorrect") return {gate_outcome::fail, "the candidate is incorrect"};
    if (v == "invalid") return {gate_outcome::fail, "the comparison is invalid (see reasons)"};
    // Faster at some workloads, slower at others: a loss the mean over them must not hide.
    if (v == "mixed" && rule.kind != gate_kind::regression)
        return {gate_outcome::fail, "the candidate is slower at some workloads (verdict mixed)"};
    if (v == "mixed")
        return {gate_outcome::undecided, "the candidate is slower at some workloads (verdict mixed): hold each "
                                         "workload's speedup against the bound (the result's workloads)"};
    switch (rule.kind) {
        case gate_kind::slower:
            if (v == "slower") return {gate_outcome::fail, "the candidate is slower"};
            return {gate_outcome::pass, fmt::format("the candidate is not slower (verdict {})", v)};
        case gate_kind::not_faster:
            if (v == "faster") return {gate_outcome::pass, "the candidate is faster"};
            if (v == "slower") return {gate_outcome::fail, "the candidate is slower"};
            return {gate_outcome::undecided,
                    fmt::format("the verdict is inconclusive and this gate needs the candidate shown faster; run more "
                                "pairs ({}) or retry",
                                words::param("n"))};
        case gate_kind::regression: {
            const double bound = 1.0 / (1.0 + rule.regression_pct / 100.0);
            const bool have_ci = in.ci_low && in.ci_high && std::isfinite(*in.ci_low) && std::isfinite(*in.ci_high);
            if (have_ci && *in.ci_high < bound)
                return {gate_outcome::fail,
                        fmt::format("the speedup's 95% interval {:.4f}-{:.4f} lies below {:.4f}: surely more than {:g}% "
                                    "slower",
                                    *in.ci_low, *in.ci_high, bound, rule.regression_pct)};
            if (v == "faster") return {gate_outcome::pass, "the candidate is faster"};
            if (have_ci && *in.ci_low >= bound)
                return {gate_outcome::pass,
                        fmt::format("the speedup's 95% interval {:.4f}-{:.4f} lies at or above {:.4f}: within {:g}%",
                                    *in.ci_low, *in.ci_high, bound, rule.regression_pct)};
            if (!have_ci)
                return {gate_outcome::undecided, "there is no speedup interval to hold against the regression bound"};
            return {gate_outcome::undecided,
                    fmt::format("the speedup's 95% interval {:.4f}-{:.4f} straddles {:.4f} ({:g}% slower); run more "
                                "pairs ({}) or retry",
                                *in.ci_low, *in.ci_high, bound, rule.regression_pct, words::param("n"))};
        }
    }
    return {gate_outcome::undecided, "unknown gate"};
}

}  // namespace hotkernel
