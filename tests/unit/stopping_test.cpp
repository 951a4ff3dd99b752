// The sequential stopping rule around the seed's verdict, and the per-sample clock check.
#include <gtest/gtest.h>

#include "measure/clock_check.h"
#include "stats/stopping.h"

using namespace hotkernel;

// b = {10, 10.1, 9.9}: mean 10, std 0.1; same for c shifted by d. threshold = 2*sqrt(2*0.01/3).
TEST(stopping, decisive_past_two_and_a_half_thresholds_after_three_pairs) {
    const std::vector<double> b{10, 10.1, 9.9};
    const double thr = 2 * std::sqrt(2 * 0.01 / 3);  // 0.163
    EXPECT_EQ(should_stop(b, {10 - 2.51 * thr, 10.1 - 2.51 * thr, 9.9 - 2.51 * thr}).kind, stop_kind::decisive);
    // decisive for the seed's rule (2 x threshold) but not past 2.5x: go on
    EXPECT_EQ(should_stop(b, {10 - 2.0 * thr, 10.1 - 2.0 * thr, 9.9 - 2.0 * thr}).kind, stop_kind::go_on);
}

// Two pairs (one ABBA cycle): decisive only past 10 thresholds where no spread between processes
// was measured, past 5 and 3x that spread where it was; never inconclusive.
TEST(stopping, one_abba_cycle_settles_only_a_large_effect) {
    const std::vector<double> b{10, 10.01}, c{9.9, 9.91};  // threshold 0.01414, |diff| 0.1: 7 thresholds, 1%
    EXPECT_EQ(should_stop(b, c).kind, stop_kind::go_on);   // not measured: 10 thresholds needed
    EXPECT_EQ(should_stop({10, 10.1}, {5, 5.1}).kind, stop_kind::decisive);
    EXPECT_NE(should_stop({10, 10.1}, {5, 5.1}).why.find("one ABBA cycle"), std::string::npos);
    stopping_rule rule;
    rule.fast_min_effect = 0.003;  // 3x a measured spread of 0.1%
    EXPECT_EQ(should_stop(b, c, rule).kind, stop_kind::decisive);
    rule.fast_min_effect = 0.02;  // 3x a spread of 0.67%: a 1% effect is not enough
    EXPECT_EQ(should_stop(b, c, rule).kind, stop_kind::go_on);
    rule.fast_min_effect = 0.003;
    rule.fast_pairs = 0;  // off: three pairs at least
    EXPECT_EQ(should_stop(b, c, rule).kind, stop_kind::go_on);
    EXPECT_EQ(should_stop({10, 10.1}, {5, 5.1}, rule).kind, stop_kind::go_on);
}

TEST(stopping, a_decisive_stop_needs_an_effect_of_min_effect) {
    const std::vector<double> b{10, 10.001, 9.999};
    const std::vector<double> c{9.99, 9.991, 9.989};  // 0.1% faster, far past the threshold
    EXPECT_EQ(should_stop(b, c).kind, stop_kind::decisive);
    stopping_rule rule;
    rule.min_effect = 0.002;  // the process spread: 0.2%
    EXPECT_EQ(should_stop(b, c, rule).kind, stop_kind::go_on);
    rule.min_effect = 0.0005;
    EXPECT_EQ(should_stop(b, c, rule).kind, stop_kind::decisive);
}

TEST(stopping, settled_inconclusive_once_the_seed_rule_says_inconclusive_after_three_pairs) {
    const std::vector<double> b{10, 10.2, 9.8};
    const std::vector<double> same{10.01, 10.19, 9.81};
    EXPECT_EQ(should_stop(b, same).kind, stop_kind::settled_inconclusive);
    EXPECT_NE(should_stop(b, same).why.find("inconclusive"), std::string::npos);
    EXPECT_EQ(should_stop({10, 10.2}, {10.01, 10.19}).kind, stop_kind::go_on);  // 2 pairs: too early
    // between one and 2.5 thresholds: the seed's rule is decisive, but not clearly: go on
    const double thr = 2 * std::sqrt(2 * 0.04 / 3);
    EXPECT_EQ(should_stop(b, {10 - 1.5 * thr, 10.2 - 1.5 * thr, 9.8 - 1.5 * thr}).kind, stop_kind::go_on);
}

TEST(stopping, unequal_sides_or_no_spread_never_stop) {
    EXPECT_EQ(should_stop({10, 10.1, 9.9}, {9, 9.1}).kind, stop_kind::go_on);
    EXPECT_EQ(should_stop({}, {}).kind, stop_kind::go_on);
}

namespace {
run_record rec(const char* role, std::size_t i, json mhz) {
    run_record r;
    r.role = role;
    r.index = i;
    r.line = json{{"ms", 1.0}, {"sample_sm_clock_mhz", std::move(mhz)}};
    return r;
}
}  // namespace

TEST(clock_check, counts_samples_under_eighty_percent_of_the_max_clock) {
    // A healthy H100's dips under load (1742 MHz, 88%) are not throttling; 1500 and 1200 are.
    run_record a = rec("baseline", 1, {1930, 1742, 1932});
    run_record b = rec("candidate", 1, {1930, 1500, 1200});  // 1500 and 1200 < 0.8 * 1980 = 1584
    json c = check_sample_clocks({&a, &b}, 1980);
    ASSERT_TRUE(c.is_object());
    EXPECT_EQ(c["samples"], 6);
    EXPECT_EQ(c["throttled_samples"], 2);
    EXPECT_DOUBLE_EQ(c["min_mhz"].get<double>(), 1200);
    EXPECT_DOUBLE_EQ(c["threshold_mhz"].get<double>(), 0.8 * 1980);
    ASSERT_EQ(c["throttled_runs"].size(), 1u);
    EXPECT_EQ(c["throttled_runs"][0], "candidate 1 (2 of 3 samples)");
    const auto f = throttle_warning(c);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->id, finding_id::sample_clocks_throttled);
    const std::string& w = f->message;
    EXPECT_NE(w.find("2 of 6 timed samples were followed by"), std::string::npos) << w;
    EXPECT_NE(w.find("candidate 1"), std::string::npos) << w;
}

TEST(clock_check, no_readings_is_null_and_no_max_uses_the_fastest_reading) {
    run_record a;
    a.line = json{{"ms", 1.0}};
    EXPECT_TRUE(check_sample_clocks({&a}, 1980).is_null());
    run_record b = rec("baseline", 1, {2000, 1000, nullptr, -5});
    json c = check_sample_clocks({&b}, NAN);
    EXPECT_EQ(c["samples"], 2);
    EXPECT_DOUBLE_EQ(c["reference_mhz"].get<double>(), 2000);
    EXPECT_EQ(c["throttled_samples"], 1);
    EXPECT_FALSE(throttle_warning(check_sample_clocks({&a}, 1980)).has_value());
}
