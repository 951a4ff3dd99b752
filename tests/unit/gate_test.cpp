#include "stats/gate.h"

#include <gtest/gtest.h>

namespace hotkernel {
namespace {

gate_rule rule(const std::string& text) {
    std::string why;
    auto r = parse_gate(text, why);
    EXPECT_TRUE(r.has_value()) << text << ": " << why;
    return r.value_or(gate_rule{});
}

gate_outcome outcome(const std::string& gate, const std::string& verdict, std::optional<double> lo = std::nullopt,
                     std::optional<double> hi = std::nullopt) {
    return apply_gate(rule(gate), gate_input{.verdict = verdict, .speedup = std::nullopt, .ci_low = lo, .ci_high = hi})
        .outcome;
}

TEST(Gate, ParsesTheThreeFormsAndSaysWhatIsWrongOtherwise) {
    EXPECT_EQ(rule("slower").kind, gate_kind::slower);
    EXPECT_EQ(rule("not-faster").kind, gate_kind::not_faster);
    EXPECT_EQ(rule("regression:5").regression_pct, 5);
    EXPECT_EQ(rule("regression:2.5%").regression_pct, 2.5);
    EXPECT_EQ(gate_text(rule("regression:2.5%")), "regression:2.5");
    std::string why;
    EXPECT_FALSE(parse_gate("slowr", why));
    EXPECT_NE(why.find("slower, not-faster or regression:<pct>"), std::string::npos) << why;
    EXPECT_FALSE(parse_gate("regression:-1", why));
    EXPECT_FALSE(parse_gate("regression:abc", why));
    EXPECT_FALSE(parse_gate("regression:", why));
    EXPECT_FALSE(parse_gate(std::string(100000, 'x'), why));
    EXPECT_LT(why.size(), 200u);  // the value is echoed cut short
}

TEST(Gate, IncorrectAndInvalidFailEveryGate) {
    for (const char* g : {"slower", "not-faster", "regression:5"}) {
        EXPECT_EQ(outcome(g, "incorrect"), gate_outcome::fail) << g;
        EXPECT_EQ(outcome(g, "invalid", 0.99, 1.01), gate_outcome::fail) << g;
    }
}

TEST(Gate, SlowerFailsOnlyOnAShownSlowdown) {
    EXPECT_EQ(outcome("slower", "slower"), gate_outcome::fail);
    EXPECT_EQ(outcome("slower", "inconclusive"), gate_outcome::pass);
    EXPECT_EQ(outcome("slower", "faster"), gate_outcome::pass);
}

TEST(Gate, NotFasterNeedsADecision) {
    EXPECT_EQ(outcome("not-faster", "faster"), gate_outcome::pass);
    EXPECT_EQ(outcome("not-faster", "slower"), gate_outcome::fail);
    EXPECT_EQ(outcome("not-faster", "inconclusive"), gate_outcome::undecided);
}

TEST(Gate, RegressionHoldsTheIntervalAgainstTheBound) {
    // regression:5 -> bound 1/1.05 = 0.95238
    EXPECT_EQ(outcome("regression:5", "slower", 0.90, 0.94), gate_outcome::fail);      // surely > 5% slower
    EXPECT_EQ(outcome("regression:5", "slower", 0.97, 0.99), gate_outcome::pass);      // slower, but within 5%
    EXPECT_EQ(outcome("regression:5", "inconclusive", 0.93, 1.02), gate_outcome::undecided);  // straddles
    EXPECT_EQ(outcome("regression:5", "inconclusive", 0.96, 1.03), gate_outcome::pass);
    EXPECT_EQ(outcome("regression:5", "faster", 1.01, 1.05), gate_outcome::pass);
    EXPECT_EQ(outcome("regression:5", "inconclusive"), gate_outcome::undecided);  // no interval
    // regression:0: any sure slowdown fails
    EXPECT_EQ(outcome("regression:0", "slower", 0.98, 0.995), gate_outcome::fail);
}

TEST(Gate, EveryOutcomeSaysWhy) {
    const auto r = apply_gate(rule("regression:5"), gate_input{.verdict = "slower", .speedup = 0.92, .ci_low = 0.9,
                                                                .ci_high = 0.94});
    EXPECT_NE(r.reason.find("more than 5% slower"), std::string::npos) << r.reason;
    EXPECT_NE(apply_gate(rule("not-faster"), gate_input{.verdict = "inconclusive"}).reason.find("retry"),
              std::string::npos);
}

}  // namespace
}  // namespace hotkernel
