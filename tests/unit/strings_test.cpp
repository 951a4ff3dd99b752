#include <gtest/gtest.h>

#include "util/strings.h"

using namespace hotkernel;

TEST(strings, kebab_and_snake_round_trip) {
    EXPECT_EQ(to_kebab("measured_mem_gbs"), "measured-mem-gbs");
    EXPECT_EQ(to_snake("measured-mem-gbs"), "measured_mem_gbs");
}

TEST(strings, split_lines_accepts_crlf_and_keeps_empty_lines) {
    auto lines = split_lines("a\r\n\nb\n");
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "a");
    EXPECT_EQ(lines[1], "");
    EXPECT_EQ(lines[2], "b");
}

TEST(strings, closest_matches_suggests_the_near_name) {
    auto m = closest_matches("measured_mem_gb", {"flops", "bytes", "measured_mem_gbs", "dtype"});
    ASSERT_FALSE(m.empty());
    EXPECT_EQ(m.front(), "measured_mem_gbs");
    EXPECT_TRUE(closest_matches("zzzzzz", {"flops", "bytes"}).empty());
}

TEST(strings, tail_text_keeps_the_end_from_a_line_start) {
    std::string s;
    for (int i = 0; i < 1000; ++i) s += "line " + std::to_string(i) + "\n";
    auto t = tail_text(s, 100);
    EXPECT_LT(t.size(), 110u);
    EXPECT_NE(t.find("line 999"), std::string::npos);
    EXPECT_EQ(t.rfind("…line", 0), 0u);
}
