// Descriptive statistics, with the documented edge cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "stats/summary.h"

using namespace hotkernel;

TEST(summary, hand_computed_sample) {
    // 1..8: mean 4.5, sample variance 6 (sum of squares 42 / 7), median 4.5,
    // numpy-style quartiles at positions 1.75 and 5.25: 2.75 and 6.25.
    auto s = summarize({8, 1, 7, 2, 6, 3, 5, 4});
    EXPECT_EQ(s.n, 8u);
    EXPECT_DOUBLE_EQ(s.mean, 4.5);
    EXPECT_DOUBLE_EQ(s.std, std::sqrt(6.0));
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 8);
    EXPECT_DOUBLE_EQ(s.median, 4.5);
    EXPECT_DOUBLE_EQ(s.q1, 2.75);
    EXPECT_DOUBLE_EQ(s.q3, 6.25);
    EXPECT_TRUE(s.finite);
    EXPECT_NEAR(s.cv(), std::sqrt(6.0) / 4.5, 1e-15);
}

TEST(summary, odd_count_median_is_the_middle_value) {
    auto s = summarize({3, 1, 2});
    EXPECT_DOUBLE_EQ(s.median, 2);
    EXPECT_DOUBLE_EQ(s.std, 1);
}

TEST(summary, empty_is_all_nan) {
    auto s = summarize({});
    EXPECT_EQ(s.n, 0u);
    EXPECT_TRUE(std::isnan(s.mean));
    EXPECT_TRUE(std::isnan(s.std));
    EXPECT_TRUE(std::isnan(s.min));
    EXPECT_TRUE(std::isnan(s.median));
    EXPECT_TRUE(std::isnan(s.cv()));
}

TEST(summary, single_sample_has_zero_std_and_no_cv) {
    auto s = summarize({2.5});
    EXPECT_DOUBLE_EQ(s.mean, 2.5);
    EXPECT_DOUBLE_EQ(s.std, 0);
    EXPECT_DOUBLE_EQ(s.median, 2.5);
    EXPECT_DOUBLE_EQ(s.q1, 2.5);
    EXPECT_TRUE(std::isnan(s.cv()));
}

TEST(summary, zero_variance) {
    auto s = summarize({1.25, 1.25, 1.25});
    EXPECT_DOUBLE_EQ(s.std, 0);
    EXPECT_DOUBLE_EQ(s.cv(), 0);
}

TEST(summary, nan_sample_poisons_the_centre_but_not_the_range) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto s = summarize({1, nan, 3});
    EXPECT_FALSE(s.finite);
    EXPECT_TRUE(std::isnan(s.mean));
    EXPECT_TRUE(std::isnan(s.std));
    EXPECT_TRUE(std::isnan(s.median));
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 3);
    auto j = summary_json_ms(s);
    EXPECT_TRUE(j["mean_ms"].is_null());
    EXPECT_EQ(j["min_ms"], 1.0);
}

TEST(summary, large_offset_does_not_lose_the_spread) {
    // A naive sum-of-squares formula cancels catastrophically here.
    auto s = summarize({1e9 + 1, 1e9 + 2, 1e9 + 3});
    EXPECT_NEAR(s.std, 1.0, 1e-6);
}

TEST(spread_upper_bound, six_processes_bound_the_spread_at_about_twice_its_estimate) {
    // chi-square(5) at 0.05 is 1.145476 (tables): sqrt(5 / 1.145476) = 2.0893; chi-square(9) at
    // 0.05 is 3.325113: sqrt(9 / 3.325113) = 1.6452.
    EXPECT_NEAR(spread_upper_bound(0.018, 6), 0.018 * 2.0893, 1e-5);
    EXPECT_NEAR(spread_upper_bound(1.0, 10), 1.6452, 1e-4);
    // More processes, a tighter bound; more confidence, a looser one; never under the estimate.
    EXPECT_LT(spread_upper_bound(1.0, 20), spread_upper_bound(1.0, 6));
    EXPECT_GT(spread_upper_bound(1.0, 6, 0.99), spread_upper_bound(1.0, 6, 0.95));
    EXPECT_GE(spread_upper_bound(1.0, 1000), 1.0);
    EXPECT_EQ(spread_upper_bound(0.0, 6), 0.0);
}

TEST(spread_upper_bound, no_bound_without_two_values_or_a_finite_spread) {
    EXPECT_TRUE(std::isnan(spread_upper_bound(0.1, 1)));
    EXPECT_TRUE(std::isnan(spread_upper_bound(0.1, 0)));
    EXPECT_TRUE(std::isnan(spread_upper_bound(std::numeric_limits<double>::quiet_NaN(), 6)));
    EXPECT_TRUE(std::isnan(spread_upper_bound(-0.1, 6)));
}
