// The MCP framing helpers: the id of a line that does not parse, lone surrogate escapes, and
// what a parse failure says.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "mcp/framing.h"

using namespace hotkernel;

namespace {
std::optional<json> id_of(std::string_view line) { return scan_request_id(line); }
}  // namespace

TEST(scan_request_id, reads_string_and_integer_ids_of_well_formed_lines) {
    EXPECT_EQ(id_of(R"({"jsonrpc":"2.0","id":7,"method":"ping"})"), json(7));
    EXPECT_EQ(id_of(R"({"jsonrpc":"2.0","id":-3,"method":"ping"})"), json(-3));
    EXPECT_EQ(id_of(R"(  {"method":"ping", "id" : "abc-1"})"), json("abc-1"));
    EXPECT_EQ(id_of(R"({"id":"a\"b\\c\u00e9"})"), json("a\"b\\c\xc3\xa9"));
    EXPECT_EQ(id_of("\xEF\xBB\xBF{\"id\":1}"), json(1));  // a BOM, which the parser skips too
}

TEST(scan_request_id, skips_nested_members_named_id) {
    EXPECT_EQ(id_of(R"({"params":{"id":99,"x":[{"id":5}]},"id":2})"), json(2));
    EXPECT_EQ(id_of(R"({"params":{"id":99}})"), std::nullopt);
    EXPECT_EQ(id_of(R"({"params":"\"id\":4","method":"x"})"), std::nullopt);  // inside a string
}

TEST(scan_request_id, the_last_id_wins_as_in_the_parser) {
    EXPECT_EQ(id_of(R"({"id":1,"id":2})"), json(2));
    EXPECT_EQ(id_of(R"({"id":1,"id":null})"), std::nullopt);
    EXPECT_EQ(id_of(R"({"i\u0064":8})"), json(8));  // an escaped key is still "id"
}

TEST(scan_request_id, refuses_ids_that_are_not_strings_or_integers) {
    for (const char* line : {R"({"id":null})", R"({"id":1.5})", R"({"id":1e3})", R"({"id":true})",
                             R"({"id":{"a":1}})", R"({"id":[1]})", R"({"id":01})", R"([{"id":1}])", R"("id")", "",
                             R"({"id":"\ud83d"})", "{\"id\":\"\xff\"}"})
        EXPECT_EQ(id_of(line), std::nullopt) << line;
    EXPECT_EQ(id_of(R"({"id":99999999999999999999999})"), std::nullopt);  // past 64 bits: a float to the parser
}

TEST(scan_request_id, finds_the_id_of_lines_that_do_not_parse) {
    // A lone surrogate, invalid UTF-8 and an out-of-range number elsewhere in the message.
    EXPECT_EQ(id_of(R"({"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"\ud83d"}})"), json(11));
    EXPECT_EQ(id_of("{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"params\":{\"gpu\":\"\xff\xfe\"}}"), json("q"));
    EXPECT_EQ(id_of(R"({"jsonrpc":"2.0","params":{"flops":1e999},"id":12})"), json(12));
    // The start of an oversized line: the id before the cut is found, the rest never read.
    EXPECT_EQ(id_of(R"({"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"arguments":{"gpu":"xxxxxx)"), json(13));
    EXPECT_EQ(id_of(R"({"jsonrpc":"2.0","params":{"arguments":{"gpu":"xxxxxx)"), std::nullopt);
    EXPECT_EQ(id_of(R"({"id":14 "method":"x"})"), json(14));  // a missing comma after the id
}

TEST(scan_request_id, bounds_the_id_it_returns) {
    const std::string ok(max_scanned_id_bytes, 'a');
    const std::string long_id(max_scanned_id_bytes + 1, 'a');
    EXPECT_EQ(id_of("{\"id\":\"" + ok + "\"}"), json(ok));
    EXPECT_EQ(id_of("{\"id\":\"" + long_id + "\"}"), std::nullopt);
}

TEST(scan_request_id, deep_nesting_costs_no_recursion) {
    const std::string deep = std::string(200000, '[') + std::string(200000, ']');
    EXPECT_EQ(id_of("{\"params\":" + deep + ",\"id\":5}"), json(5));
}

TEST(replace_lone_surrogates, replaces_lone_halves_and_keeps_pairs) {
    EXPECT_EQ(replace_lone_surrogates(R"({"a":"x\ud83d"})"), std::optional<std::string>(R"({"a":"x\ufffd"})"));
    EXPECT_EQ(replace_lone_surrogates(R"({"a":"\ude00y"})"), std::optional<std::string>(R"({"a":"\ufffdy"})"));
    EXPECT_EQ(replace_lone_surrogates(R"({"a":"\uD83D\u0041"})"), std::optional<std::string>(R"({"a":"\ufffd\u0041"})"));
    EXPECT_EQ(replace_lone_surrogates(R"({"a":"\ud83d\ude00"})"), std::nullopt);  // a valid pair (an emoji)
    EXPECT_EQ(replace_lone_surrogates(R"({"a":"\\ud83d"})"), std::nullopt);      // an escaped backslash, then text
    EXPECT_EQ(replace_lone_surrogates(R"({"a":"plain"})"), std::nullopt);
    // Both halves reversed: two lone ones.
    EXPECT_EQ(replace_lone_surrogates(R"(["\ude00\ud83d"])"), std::optional<std::string>(R"(["\ufffd\ufffd"])"));
}

TEST(replace_lone_surrogates, the_result_parses_with_the_replacement_character) {
    const auto mended = replace_lone_surrogates(R"({"id":1,"params":{"name":"cut \ud83d"}})");
    ASSERT_TRUE(mended);
    const json j = json::parse(*mended);
    EXPECT_EQ(j["params"]["name"], "cut \xEF\xBF\xBD");
}

TEST(parse_failure, says_why_without_echoing_the_line) {
    EXPECT_NE(parse_failure("{\"a\":\"\xff\"}").find("not valid UTF-8 (byte 6 of 9)"), std::string::npos)
        << parse_failure("{\"a\":\"\xff\"}");
    EXPECT_NE(parse_failure(R"({"a":1e999})").find("out of range"), std::string::npos);
    const std::string secret = "{\"a\":" + std::string(5000, 'z') + "}";
    const std::string why = parse_failure(secret);
    EXPECT_NE(why.find("not valid JSON at byte"), std::string::npos) << why;
    EXPECT_EQ(why.find("zzz"), std::string::npos) << why;
    EXPECT_LE(why.size(), 200u);
}

TEST(scan_request_id, agrees_with_the_parser_on_random_lines) {
    // The fuzzer's property (fuzz/fuzz_mcp.cpp), on lines built from JSON pieces.
    std::mt19937 rng(19);
    const std::vector<std::string> pieces = {"{", "}", "[", "]", "\"", ":", ",", " ", "\"id\"", "\"i\\u0064\"", "1", "-7",
                                             "1.5", "1e999", "\"x\"", "\"\\ud83d\"", "\"\\\"\"", "null", "true",
                                             "\"jsonrpc\"", "\"2.0\"", "\xff", "\\", "0", "01"};
    std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1), len(1, 24);
    int parsed_objects = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string line = i % 2 ? "{\"id\":" : "{";
        for (std::size_t k = 0, n = len(rng); k < n; ++k) line += pieces[pick(rng)];
        if (i % 3 == 0) line += "}";
        const json parsed = json::parse(line, nullptr, false);
        if (!parsed.is_object()) continue;
        ++parsed_objects;
        const bool has = parsed.contains("id") && (parsed["id"].is_string() || parsed["id"].is_number_integer());
        const auto scanned = scan_request_id(line);
        ASSERT_EQ(has, scanned.has_value()) << line;
        if (has) {
            ASSERT_EQ(*scanned, parsed["id"]) << line;
        }
    }
    EXPECT_GT(parsed_objects, 100);
}

TEST(measure_line, finds_the_nesting_and_the_longest_string_as_decoded) {
    EXPECT_EQ(measure_line(R"({"a":[{"b":1}]})").depth, 3);
    EXPECT_EQ(measure_line(R"({"a":"[[[["})").depth, 1);  // brackets in strings do not count
    EXPECT_EQ(measure_line(R"({"abc":"hello"})").longest_string, 5u);
    EXPECT_EQ(measure_line(R"({"k":"a\"b\\c"})").longest_string, 5u);      // a"b\c
    EXPECT_EQ(measure_line(R"({"k":"\u00e9\u20ac"})").longest_string, 5u);  // 2 + 3 bytes
    EXPECT_EQ(measure_line(R"({"k":"\ud83d\ude00"})").longest_string, 4u);  // one emoji
    const std::string big(5000, 'x');
    EXPECT_EQ(measure_line("{\"" + big + "\":1}").longest_string, 5000u);  // a key counts too
    EXPECT_EQ(measure_line("{\"k\":\"" + big).longest_string, 5000u);     // a line cut inside it
}
