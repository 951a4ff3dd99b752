#include <gtest/gtest.h>

#include "util/errors.h"
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

TEST(strings, split_command_line_like_a_shell) {
    EXPECT_EQ(split_command_line("python3 a.py --x 1"), (std::vector<std::string>{"python3", "a.py", "--x", "1"}));
    EXPECT_EQ(split_command_line("bash -c 'echo a b' \"x \\\"y\\\"\" c\\ d"),
              (std::vector<std::string>{"bash", "-c", "echo a b", "x \"y\"", "c d"}));
    EXPECT_EQ(split_command_line("  ''  "), std::vector<std::string>{""});
    EXPECT_THROW(split_command_line("a 'b"), usage_error);
    EXPECT_EQ(join_command_line({"a", "b c", "it's"}), "a 'b c' 'it'\\''s'");
}

TEST(strings, case_insensitive_regex) {
    EXPECT_EQ(case_insensitive_regex("gelu"), "[gG][eE][lL][uU]");
    EXPECT_EQ(case_insensitive_regex("(?i)ab"), "[aA][bB]");
    EXPECT_EQ(case_insensitive_regex("a\\d+[a-z]x"), "[aA]\\d+[a-z][xX]");
    EXPECT_EQ(case_insensitive_regex("[]a]b"), "[]a][bB]");
}
