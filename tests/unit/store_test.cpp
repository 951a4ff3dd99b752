// results/ on disk: atomic result files, corrupt files skipped and named, concurrent records.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "report/findings.h"
#include "store/results_store.h"
#include "util/errors.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {
json verify_result(const std::string& verdict, double speedup, const std::string& target = "gelu") {
    json r{{"verdict", verdict},
           {"target", target},
           {"n", 10},
           {"seed", 0},
           {"candidate_script", target + "_candidate.py"},
           {"baseline", {{"mean_ms", 1.0}, {"std_ms", 0.01}}},
           {"candidate", {{"mean_ms", 1.0 / speedup}, {"std_ms", 0.01}}},
           {"measurement", {{"gpu", nullptr}}}};
    if (verdict == "faster" || verdict == "slower" || verdict == "inconclusive") r["speedup"] = speedup;
    return r;
}

struct store_fixture : ::testing::Test {
    fs::path dir = make_temp_dir("hk-store-test");
    fs::path results = dir / "results";
    fs::path board = dir / "LEADERBOARD.md";
    void TearDown() override { fs::remove_all(dir); }
};
}  // namespace

TEST_F(store_fixture, record_writes_the_file_and_the_leaderboard) {
    auto o = record_result(verify_result("faster", 1.25), "fused", "me", results, board, "2026-11-30T03:34:10Z");
    EXPECT_TRUE(fs::exists(o.file));
    EXPECT_EQ(o.file.parent_path(), results / "gelu");
    EXPECT_EQ(o.file.filename().string().substr(0, 17), "20261130T033410Z-");
    json doc = json::parse(read_file(o.file));
    EXPECT_EQ(doc["format"], 1);
    EXPECT_EQ(doc["note"], "fused");
    EXPECT_EQ(doc["who"], "me");
    EXPECT_EQ(doc["result"]["verdict"], "faster");
    const std::string text = read_file(board);
    EXPECT_NE(text.find(o.row), std::string::npos);
    EXPECT_NE(o.row.find("1.250×"), std::string::npos) << o.row;
    EXPECT_EQ(o.rows, 1u);
    // Regenerating from the same files gives the same bytes.
    std::vector<result_entry> e;
    std::vector<skipped_file> s;
    scan_results(results, e, s);
    EXPECT_EQ(render_leaderboard(e, s, results.generic_string() + "/"), text);
}

// A result file recorded before warnings and flags carried ids (bare strings, {flag, message})
// still gives the LEADERBOARD.md the binary that wrote it gave, and so does its new shape.
TEST_F(store_fixture, a_result_file_of_the_older_findings_shape_regenerates_the_same_leaderboard) {
    const fs::path fixture = fs::path(HOTKERNEL_FIXTURES) / "results-format1";
    fs::copy(fixture / "results", results, fs::copy_options::recursive);
    const std::string expected = read_file(fixture / "LEADERBOARD.md");
    std::vector<result_entry> e;
    std::vector<skipped_file> s;
    scan_results(results, e, s);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_TRUE(s.empty());
    const json& old = e[0].doc["result"];
    ASSERT_TRUE(old["warnings"][0].is_string()) << "the fixture must keep the older shape";
    ASSERT_EQ(old["flags"][0].value("flag", ""), "speedup_over_10x");
    EXPECT_EQ(render_leaderboard(e, s, "results/"), expected);

    std::vector<result_entry> renewed = e;
    normalize_findings(renewed[0].doc["result"]);
    EXPECT_EQ(renewed[0].doc["result"]["flags"][0]["id"], "speedup_over_10x");
    EXPECT_EQ(render_leaderboard(renewed, s, "results/"), expected);

    // Recording a new-shape result beside it leaves the old row as it was.
    json fresh = verify_result("faster", 1.25, "cand");
    fresh["warnings"] = json::array({json(findings::single_run())});
    fresh["flags"] = json::array();
    auto o = record_result(fresh, "new", "me", results, board, "2026-12-01T10:00:00Z");
    EXPECT_EQ(o.rows, 2u);
    const std::size_t at = expected.find("| 1 | 19.940×");
    ASSERT_NE(at, std::string::npos);
    const std::string old_row = expected.substr(at, expected.find('\n', at) - at);
    EXPECT_NE(read_file(board).find(old_row + "\n| 2 | 1.250×"), std::string::npos) << read_file(board);
}

TEST_F(store_fixture, corrupt_and_foreign_files_are_skipped_and_named) {
    record_result(verify_result("slower", 0.9), "a", "me", results, board, "2026-11-30T03:00:00Z");
    fs::create_directories(results / "gelu");
    std::ofstream(results / "gelu" / "broken.json") << "{\"format\": 1, \"target\": ";
    std::ofstream(results / "README.md") << "hello";
    std::ofstream(results / "gelu" / "other.json") << "{\"format\": 7}";
    std::ofstream(results / "gelu" / ".x.json.tmp-abc") << "partial";  // an in-flight atomic write
    auto o = record_result(verify_result("incorrect", 1.0), "b", "me", results, board, "2026-11-30T03:01:00Z");
    EXPECT_EQ(o.rows, 2u);
    ASSERT_EQ(o.skipped.size(), 3u);
    EXPECT_EQ(o.skipped[0].rel_path, "README.md");
    EXPECT_EQ(o.skipped[1].rel_path, "gelu/broken.json");
    EXPECT_EQ(o.skipped[1].reason, "not valid JSON");
    EXPECT_EQ(o.skipped[2].rel_path, "gelu/other.json");
    const std::string text = read_file(board);
    EXPECT_NE(text.find("`gelu/broken.json`"), std::string::npos);
    EXPECT_EQ(text.find("tmp-abc"), std::string::npos);
    EXPECT_NE(text.find("| incorrect |"), std::string::npos);
}

TEST_F(store_fixture, concurrent_records_lose_no_row) {
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([&, i] {
            record_result(verify_result("faster", 1.0 + i / 10.0), "t" + std::to_string(i), "me", results, board,
                          "2026-11-30T03:00:0" + std::to_string(i) + "Z");
        });
    for (auto& t : threads) t.join();
    std::vector<result_entry> e;
    std::vector<skipped_file> s;
    scan_results(results, e, s);
    EXPECT_EQ(e.size(), 8u);
    EXPECT_TRUE(s.empty());
    const std::string text = read_file(board);
    for (int i = 0; i < 8; ++i) EXPECT_NE(text.find("| t" + std::to_string(i) + " |"), std::string::npos) << i;
}

TEST_F(store_fixture, unwritable_results_dir_is_a_clear_error) {
    fs::create_directories(dir);
    std::ofstream(dir / "not_a_dir") << "x";
    try {
        record_result(verify_result("faster", 1.1), "n", "w", dir / "not_a_dir", board, "2026-11-30T03:00:00Z");
        FAIL() << "expected tool_error";
    } catch (const tool_error& e) {
        EXPECT_NE(std::string(e.what()).find("not_a_dir"), std::string::npos) << e.what();
    }
    EXPECT_EQ(read_file(dir / "not_a_dir"), "x");
}

TEST(store, target_names_are_safe_folder_names) {
    EXPECT_EQ(result_target(json{{"target", "../../etc"}}), "_.._etc");
    EXPECT_EQ(result_target(json{{"target", "my kernel/v2"}}), "my_kernel_v2");
    EXPECT_EQ(result_target(json{{"candidate_script", "/x/gelu_candidate.py"}}), "gelu");
    EXPECT_EQ(result_target(json{{"candidate_script", "fast.py"}}), "fast");
    EXPECT_EQ(result_target(json::object()), "unnamed");
    EXPECT_EQ(safe_component(""), "unnamed");
    EXPECT_EQ(safe_component("..."), "unnamed");
}

TEST(store, check_verify_result_names_what_is_missing) {
    EXPECT_EQ(check_verify_result(verify_result("faster", 1.2)), "");
    EXPECT_NE(check_verify_result(json{{"ms", 1}}).find("verdict"), std::string::npos);
    EXPECT_NE(check_verify_result(json{{"verdict", "meh"}}).find("meh"), std::string::npos);
    EXPECT_NE(check_verify_result(json{{"verdict", "faster"}}).find("baseline"), std::string::npos);
}
