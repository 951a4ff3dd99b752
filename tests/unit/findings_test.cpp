// The warnings catalogue: ids declared once and well formed, the runner's flags declared, the
// one shape results carry, and that no source builds a warning without an id.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "python/interpreter.h"
#include "report/findings.h"
#include "util/words.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {

bool is_snake_case(std::string_view s) {
    return std::regex_match(std::string(s), std::regex("[a-z][a-z0-9]*(_[a-z0-9]+)*"));
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST(findings, every_id_is_snake_case_unique_and_says_what_it_means_and_what_to_do) {
    std::set<std::string_view> seen;
    for (const auto& row : finding_catalogue()) {
        EXPECT_TRUE(is_snake_case(row.name)) << row.name;
        EXPECT_TRUE(seen.insert(row.name).second) << "declared twice: " << row.name;
        EXPECT_FALSE(row.meaning.empty()) << row.name;
        EXPECT_FALSE(row.action.empty()) << row.name;
        EXPECT_EQ(&info(row.id), &row);
        EXPECT_EQ(find_finding(row.name), &row);
    }
    EXPECT_EQ(find_finding("no_such_finding"), nullptr);
}

TEST(findings, flags_are_exactly_the_implausible_results) {
    std::set<std::string> flags;
    for (const auto& row : finding_catalogue())
        if (row.kind == finding_kind::flag) flags.insert(std::string(row.name));
    EXPECT_EQ(flags, (std::set<std::string>{"speedup_over_10x", "reported_time_exceeds_wall", "under_roofline_floor", "under_measured_floor",
                                            "persisting_l2", "work_outside_timed_region", "signal_handler"}));
}

TEST(findings, every_flag_the_trusted_runner_emits_is_declared_as_a_flag) {
    const std::string runner(embedded_python("hotkernel_harness.py"));
    ASSERT_FALSE(runner.empty());
    // The helper itself writes the key results carry.
    EXPECT_NE(runner.find("flags.append({\"id\": name, \"message\": message})"), std::string::npos)
        << "_flag in python/hotkernel_harness.py must append {\"id\": name, \"message\": message}";
    const std::regex call(R"(_flag\(\s*[^,()]+,\s*\"([^\"]*)\")");
    std::size_t calls = 0;
    for (auto it = std::sregex_iterator(runner.begin(), runner.end(), call); it != std::sregex_iterator(); ++it) {
        const std::string id = (*it)[1];
        ++calls;
        const finding_info* row = find_finding(id);
        ASSERT_NE(row, nullptr) << "python/hotkernel_harness.py emits flag '" << id
                                << "', which src/report/findings.cpp does not declare";
        EXPECT_EQ(row->kind, finding_kind::flag) << id;
    }
    // Every call site has a literal id the regex read (a call with a computed id would escape the check).
    std::size_t all_calls = 0;
    for (std::size_t p = runner.find("_flag(self."); p != std::string::npos; p = runner.find("_flag(self.", p + 1))
        ++all_calls;
    EXPECT_GE(calls, 2u);
    EXPECT_EQ(calls, all_calls);
}

TEST(findings, a_builder_gives_its_id_and_a_message_with_the_values) {
    const json j = findings::speedup_over_10x(12.5);
    EXPECT_EQ(j, (json{{"id", "speedup_over_10x"}, {"message", j["message"]}}));
    EXPECT_NE(j["message"].get<std::string>().find("12.5x"), std::string::npos);
    json warnings = json::array();
    warnings.push_back(findings::listing_truncated(3, 10));
    EXPECT_EQ(warnings[0]["id"], "listing_truncated");
    // The message names the parameter by reference: each interface renders it its own way.
    EXPECT_EQ(render_words(warnings[0]["message"].get<std::string>(), front_end::cli),
              "showing the first 3 of 10 lines; pass --max-lines 0 for all of them");
    EXPECT_EQ(render_words(warnings[0]["message"].get<std::string>(), front_end::mcp),
              "showing the first 3 of 10 lines; pass max_lines: 0 for all of them");
}

TEST(findings, results_carry_one_shape_whatever_the_handler_pushed) {
    json r{{"warnings", json::array({"a bare string", json(findings::single_run())})},
           {"flags", json::array({json{{"flag", "speedup_over_10x"}, {"message", "m"}},
                                  json{{"id", "persisting_l2"}, {"message", "p"}, {"role", "candidate"}},
                                  json{{"id", "persisting_l2"}, {"message", "p again"}, {"role", "candidate"}},
                                  json{{"flag", "persisting_l2"}, {"message", "p"}, {"role", "baseline"}},
                                  json{{"flag", "reported_time_exceeds_wall"}, {"message", "run 1"}},
                                  json{{"flag", "reported_time_exceeds_wall"}, {"message", "run 2"}}})}};
    normalize_findings(r);
    EXPECT_EQ(r["warnings"][0], (json{{"id", "unclassified"}, {"message", "a bare string"}}));
    EXPECT_EQ(r["warnings"][1]["id"], "single_run");
    EXPECT_EQ(r["flags"][0], (json{{"id", "speedup_over_10x"}, {"message", "m"}}));
    // A runner flag comes once per id and role (each run reports it); the comparison's own flags all stay.
    ASSERT_EQ(r["flags"].size(), 5u) << r["flags"].dump();
    EXPECT_EQ(r["flags"][1], (json{{"id", "persisting_l2"}, {"message", "p"}, {"role", "candidate"}}));
    EXPECT_EQ(r["flags"][2], (json{{"id", "persisting_l2"}, {"message", "p"}, {"role", "baseline"}}));
    EXPECT_EQ(r["flags"][3]["message"], "run 1");
    EXPECT_EQ(r["flags"][4]["message"], "run 2");
    for (const auto* key : {"warnings", "flags"})
        for (const auto& f : r[key]) {
            EXPECT_TRUE(f["id"].is_string() && f["message"].is_string()) << f.dump();
            EXPECT_FALSE(f.contains("flag")) << f.dump();
        }
    const json again = r;
    normalize_findings(r);
    EXPECT_EQ(r, again);
}

TEST(findings, messages_and_ids_read_from_either_shape) {
    EXPECT_EQ(finding_message(json("old")), "old");
    EXPECT_EQ(finding_message(json{{"flag", "x"}, {"message", "m"}}), "m");
    EXPECT_EQ(finding_message(json{{"id", "x"}, {"message", "m"}}), "m");
    EXPECT_EQ(finding_id_of(json("old")), "unclassified");
    EXPECT_EQ(finding_id_of(json{{"flag", "speedup_over_10x"}, {"message", "m"}}), "speedup_over_10x");
    EXPECT_EQ(finding_id_of(json{{"id", "single_run"}, {"message", "m"}}), "single_run");
}

TEST(findings, the_docs_list_every_id) {
    const std::string md = findings_markdown();
    for (const auto& row : finding_catalogue())
        EXPECT_NE(md.find("| `" + std::string(row.name) + "` |"), std::string::npos) << row.name;
}

// Every warning and flag a result carries is built by a findings:: builder, so it has an id: no
// site pushes a string (a literal, fmt::format, a concatenation) or builds a {"flag": ...} object.
TEST(findings, no_site_builds_a_bare_string_warning_or_a_flag_object) {
    const std::regex bare(R"(\b(warnings|flags)\.(push_back|emplace_back)\(\s*("|fmt::format|std::string|[^;]*\+\s*"))");
    const std::regex flag_object(R"(\{\s*"flag"\s*,)");
    const fs::path src = fs::path(HOTKERNEL_SOURCE_DIR) / "src";
    std::vector<std::string> found;
    std::size_t files = 0;
    for (const auto& e : fs::recursive_directory_iterator(src)) {
        if (!e.is_regular_file() || (e.path().extension() != ".cpp" && e.path().extension() != ".h")) continue;
        ++files;
        const std::string text = read_text(e.path());
        for (const auto* re : {&bare, &flag_object})
            for (auto it = std::sregex_iterator(text.begin(), text.end(), *re); it != std::sregex_iterator(); ++it)
                found.push_back(fs::relative(e.path(), src).generic_string() + ": " + it->str());
    }
    EXPECT_GT(files, 50u) << "the scan found no sources under " << src;
    EXPECT_TRUE(found.empty()) << "give these a findings:: builder in src/report/findings.cpp:\n"
                               << ::testing::PrintToString(found);
    // The patterns catch what they are for.
    EXPECT_TRUE(std::regex_search(std::string(R"x(warnings.push_back("n = 1");)x"), bare));
    EXPECT_TRUE(std::regex_search(std::string(R"x(warnings.push_back(fmt::format("{}", x));)x"), bare));
    EXPECT_TRUE(std::regex_search(std::string(R"x(warnings.push_back("a (" + u + ")");)x"), bare));
    EXPECT_TRUE(std::regex_search(std::string(R"x(flags.push_back(json{{"flag", "x"}, {"message", m}});)x"), flag_object));
    EXPECT_FALSE(std::regex_search(std::string("warnings.push_back(findings::single_run());"), bare));
    EXPECT_FALSE(std::regex_search(std::string("if (auto w = lock_wait_warning(runs)) warnings.push_back(*w);"), bare));
}

TEST(findings, the_catalogue_has_no_unclassified_id) {
    EXPECT_EQ(find_finding(legacy_string_id), nullptr);
    EXPECT_EQ(findings_markdown().find("| `unclassified` |"), std::string::npos);
}
