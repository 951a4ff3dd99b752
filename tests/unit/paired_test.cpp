// Paired ratios and the Student-t interval on their logs, against hand computation.
#include <gtest/gtest.h>

#include <cmath>

#include "stats/paired.h"

using namespace hotkernel;

TEST(paired, hand_computed_interval) {
    // log-ratios 0.1, 0.2, 0.3: mean 0.2, sd 0.1, t(0.975, 2) = 4.302652729749464,
    // half-width 4.3026527 * 0.1 / sqrt(3) = 0.248414; CI = exp(0.2 -/+ 0.248414).
    std::vector<double> b{std::exp(0.1), std::exp(0.2), std::exp(0.3)}, c{1, 1, 1};
    auto p = paired_ratio(b, c);
    ASSERT_TRUE(p.ci_valid) << p.note;
    EXPECT_EQ(p.n_pairs, 3u);
    EXPECT_NEAR(p.t_quantile, 4.302652729749464, 1e-9);
    EXPECT_NEAR(p.log_ratio_sd, 0.1, 1e-12);
    EXPECT_NEAR(p.geomean_ratio, std::exp(0.2), 1e-12);
    EXPECT_NEAR(p.ci_low, 0.9527394893706003, 1e-9);
    EXPECT_NEAR(p.ci_high, 1.5658264554844905, 1e-9);
    EXPECT_NEAR(p.speedup, 1.2254774946039402, 1e-12);  // mean_b / mean_c
    EXPECT_NEAR(p.ratios[2], std::exp(0.3), 1e-12);
}

TEST(paired, large_n_uses_a_t_near_1_96) {
    std::vector<double> b, c;
    for (int i = 0; i < 1000; ++i) {
        b.push_back(2.0 + (i % 2 ? 0.01 : -0.01));
        c.push_back(1.0);
    }
    auto p = paired_ratio(b, c);
    EXPECT_NEAR(p.t_quantile, 1.9623, 1e-3);
    EXPECT_LT(p.ci_low, 2.0);
    EXPECT_GT(p.ci_high, 2.0);
}

TEST(paired, identical_ratios_collapse_the_interval) {
    auto p = paired_ratio({2, 4, 6}, {1, 2, 3});
    ASSERT_TRUE(p.ci_valid);
    EXPECT_DOUBLE_EQ(p.ci_low, 2.0);
    EXPECT_DOUBLE_EQ(p.ci_high, 2.0);
    EXPECT_DOUBLE_EQ(p.speedup, 2.0);
}

TEST(paired, edge_cases_give_no_interval) {
    auto one = paired_ratio({2}, {1});
    EXPECT_FALSE(one.ci_valid);
    EXPECT_DOUBLE_EQ(one.speedup, 2.0);
    EXPECT_FALSE(one.note.empty());

    auto zero = paired_ratio({1, 1}, {0, 1});
    EXPECT_FALSE(zero.ci_valid);
    EXPECT_TRUE(std::isnan(zero.ratios[0]));

    auto none = paired_ratio({}, {});
    EXPECT_FALSE(none.ci_valid);
    EXPECT_TRUE(std::isnan(none.speedup));

    auto uneven = paired_ratio({2, 2, 2}, {1, 1});  // only the common prefix pairs
    EXPECT_EQ(uneven.n_pairs, 2u);
}
