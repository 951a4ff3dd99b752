#include <gtest/gtest.h>

#include "parsers/csv.h"

using namespace hotkernel;

TEST(csv, quoted_fields_keep_commas_quotes_and_newlines) {
    auto rows = parse_csv("\"a, b\",\"say \"\"hi\"\"\",\"two\nlines\"\nx,y,z\n");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0][0], "a, b");
    EXPECT_EQ(rows[0][1], "say \"hi\"");
    EXPECT_EQ(rows[0][2], "two\nlines");
    EXPECT_EQ(rows[1], (csv_row{"x", "y", "z"}));
}

TEST(csv, crlf_blank_lines_and_short_rows) {
    auto rows = parse_csv("a,b,c\r\n\r\n1,2\r\n");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[1].size(), 2u);
}

TEST(csv, trims_unquoted_fields_when_asked) {
    auto rows = parse_csv("NVIDIA H200, 580.159.04, 143771 MiB", {.trim_fields = true});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0][1], "580.159.04");
}

TEST(csv, unterminated_quote_does_not_crash) {
    auto rows = parse_csv("a,\"never closed");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0][1], "never closed");
}

TEST(csv, parse_number_handles_separators_units_and_junk) {
    EXPECT_DOUBLE_EQ(*parse_number("1,234,567"), 1234567.0);
    EXPECT_DOUBLE_EQ(*parse_number(" 45.5 %"), 45.5);
    EXPECT_DOUBLE_EQ(*parse_number("1980 MHz"), 1980.0);
    EXPECT_FALSE(parse_number("[N/A]").has_value());
    EXPECT_FALSE(parse_number("").has_value());
    EXPECT_FALSE(parse_number("n/a").has_value());
}
