// The bench contract's result line, on real Python outputs captured into tests/fixtures/run_line.
#include <gtest/gtest.h>

#include "parsers/run_line.h"
#include "util/files.h"

using namespace hotkernel;

namespace {
run_line parse_fixture(const std::string& name) {
    return parse_run_line(read_file(std::string(HOTKERNEL_FIXTURES) + "/run_line/" + name));
}
}  // namespace

TEST(run_line, takes_the_last_json_object_with_ms) {
    auto r = parse_fixture("two_result_lines.txt");
    ASSERT_TRUE(r.valid()) << r.message;
    EXPECT_DOUBLE_EQ(r.ms, 0.4321);
    EXPECT_EQ(r.ok, true);
    EXPECT_EQ(r.line["seed"], 0);
    EXPECT_EQ(r.line["iters"], 100);
    EXPECT_EQ(r.candidates, 2);
    EXPECT_FALSE(r.line.contains("note"));  // the first result line lost
}

TEST(run_line, no_line_when_only_a_traceback) {
    auto r = parse_fixture("no_line.txt");
    EXPECT_EQ(r.error, run_line_error::no_line);
    EXPECT_NE(r.message.find("no JSON line"), std::string::npos);
    EXPECT_EQ(parse_fixture("empty.txt").error, run_line_error::no_line);
}

TEST(run_line, python_nan_and_infinity_are_named) {
    auto r = parse_fixture("ms_nan.txt");
    EXPECT_EQ(r.error, run_line_error::ms_not_finite);
    EXPECT_NE(r.message.find("NaN"), std::string::npos) << r.message;
    // Other bare non-finite values are kept as readable strings in the stored line.
    EXPECT_EQ(r.line["error"]["max_abs"], "Infinity");
    auto i = parse_fixture("ms_inf.txt");
    EXPECT_EQ(i.error, run_line_error::ms_not_finite);
    EXPECT_NE(i.message.find("Infinity"), std::string::npos);
}

TEST(run_line, ms_must_be_a_non_negative_number) {
    auto s = parse_fixture("ms_string.txt");
    EXPECT_EQ(s.error, run_line_error::ms_not_number);
    EXPECT_NE(s.message.find("\"0.5\""), std::string::npos) << s.message;
    auto n = parse_fixture("ms_negative.txt");
    EXPECT_EQ(n.error, run_line_error::ms_negative);
    EXPECT_NE(n.message.find("-1"), std::string::npos);
    auto o = parse_fixture("ok_string.txt");
    EXPECT_EQ(o.error, run_line_error::ok_not_bool);
}

TEST(run_line, ok_false_is_a_valid_line_with_a_failed_check) {
    auto r = parse_fixture("ok_false.txt");
    ASSERT_TRUE(r.valid());
    EXPECT_EQ(r.ok, false);
    EXPECT_DOUBLE_EQ(r.line["error"]["tol"].get<double>(), 0.01);
}

TEST(run_line, invalid_utf8_is_replaced_not_fatal) {
    auto r = parse_fixture("invalid_utf8.txt");
    ASSERT_TRUE(r.valid()) << r.message;
    EXPECT_TRUE(r.had_invalid_utf8);
    EXPECT_DOUBLE_EQ(r.ms, 3.25);
    EXPECT_EQ(r.line["device"], "caf\xC3\xA9\xEF\xBF\xBD");
}

TEST(run_line, crlf_arrays_truncated_lines_and_objects_without_ms_are_ignored) {
    auto r = parse_fixture("crlf_and_decoys.txt");
    ASSERT_TRUE(r.valid()) << r.message;
    EXPECT_DOUBLE_EQ(r.ms, 1.0);
    EXPECT_EQ(r.candidates, 1);
}

TEST(run_line, absent_ok_means_no_claim_and_strings_with_nan_are_untouched) {
    auto r = parse_run_line("{\"ms\": 2, \"name\": \"NaN Infinity\"}\n");
    ASSERT_TRUE(r.valid());
    EXPECT_FALSE(r.ok.has_value());
    EXPECT_EQ(r.line["name"], "NaN Infinity");
    auto n = parse_run_line("{\"ms\": null, \"ok\": false}");
    EXPECT_EQ(n.error, run_line_error::ms_not_number);
}

TEST(run_line, repair_utf8_rejects_overlong_and_surrogates) {
    bool changed = false;
    EXPECT_EQ(repair_utf8("ok \xC3\xA9", &changed), "ok \xC3\xA9");
    EXPECT_FALSE(changed);
    EXPECT_EQ(repair_utf8("\xC0\xAF", &changed), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
    EXPECT_TRUE(changed);
    EXPECT_EQ(repair_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
    EXPECT_EQ(repair_utf8("\xF0\x9F\x98"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated 4-byte
}
