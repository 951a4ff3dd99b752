// The sequential stopping rule around the seed's verdict, and the per-sample clock check.
#include <gtest/gtest.h>

#include "measure/clock_check.h"
#include "stats/stopping.h"

using namespace hotkernel;

// b = {10, 10.1, 9.9}: mean 10, std 0.1; same for c shifted by d. threshold = 2*sqrt(2*0.01/3).
TEST(stopping, decisive_only_past_twice_the_threshold_and_after_three_pairs) {
    const std::vector<double> b{10, 10.1, 9.9};
    const double thr = 2 * std::sqrt(2 * 0.01 / 3);  // 0.163
    EXPECT_EQ(should_stop(b, {10 - 2.01 * thr, 10.1 - 2.01 * thr, 9.9 - 2.01 * thr}).kind, stop_kind::decisive);
    // decisive for the seed's rule (1.5 x threshold) but not past 2x: go on
    EXPECT_EQ(should_stop(b, {10 - 1.5 * thr, 10.1 - 1.5 * thr, 9.9 - 1.5 * thr}).kind, stop_kind::go_on);
    // two pairs are never enough, however large the gap
    EXPECT_EQ(should_stop({10, 10.1}, {5, 5.1}).kind, stop_kind::go_on);
}

TEST(stopping, settled_inconclusive_when_the_gap_is_under_half_the_threshold_after_four_pairs) {
    const std::vector<double> b{10, 10.2, 9.8, 10};
    const std::vector<double> same{10.01, 10.19, 9.81, 10.01};
    EXPECT_EQ(should_stop(b, same).kind, stop_kind::settled_inconclusive);
    EXPECT_NE(should_stop(b, same).why.find("too small"), std::string::npos);
    EXPECT_EQ(should_stop({10, 10.2, 9.8}, {10.01, 10.19, 9.81}).kind, stop_kind::go_on);  // 3 pairs: too early
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

TEST(clock_check, counts_samples_under_ninety_percent_of_the_max_clock) {
    run_record a = rec("baseline", 1, {1930, 1925, 1932});
    run_record b = rec("candidate", 1, {1930, 1700, 1500});  // 1700 and 1500 < 0.9 * 1980 = 1782
    json c = check_sample_clocks({&a, &b}, 1980);
    ASSERT_TRUE(c.is_object());
    EXPECT_EQ(c["samples"], 6);
    EXPECT_EQ(c["throttled_samples"], 2);
    EXPECT_DOUBLE_EQ(c["min_mhz"].get<double>(), 1500);
    EXPECT_DOUBLE_EQ(c["threshold_mhz"].get<double>(), 0.9 * 1980);
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
