// LEADERBOARD.md is a pure function of the result entries: cells, ordering, sections, bytes.
#include <gtest/gtest.h>

#include <algorithm>

#include "store/leaderboard.h"

using namespace hotkernel;

namespace {
result_entry entry(const std::string& path, const std::string& target, const std::string& gpu,
                   const std::string& verdict, double speedup, const std::string& when, const std::string& note = "n") {
    json r{{"verdict", verdict},
           {"n", 10},
           {"seed", 7},
           {"candidate_script", "targets/" + target + "_candidate.py"},
           {"baseline", {{"mean_ms", 2.0}, {"std_ms", 0.01}}},
           {"candidate", {{"mean_ms", 2.0 / speedup}, {"std_ms", 0.02}}}};
    if (verdict != "incorrect" && verdict != "invalid") {
        r["speedup"] = speedup;
        r["speedup_ci95"] = {{"low", speedup * 0.99}, {"high", speedup * 1.01}};
    }
    r["measurement"] = gpu.empty() ? json{{"gpu", nullptr}} : json{{"gpu", {{"name", gpu}}}};
    return {path, json{{"format", 1}, {"target", target}, {"recorded_utc", when}, {"note", note}, {"who", "me"},
                       {"result", r}}};
}

std::vector<result_entry> sample() {
    return {entry("gelu/a.json", "gelu", "NVIDIA H200", "faster", 1.2, "2026-11-30T01:00:00Z"),
            entry("gelu/b.json", "gelu", "NVIDIA H200", "faster", 1.5, "2026-11-30T00:00:00Z"),
            entry("gelu/c.json", "gelu", "NVIDIA H200", "invalid", 3.0, "2026-11-30T02:00:00Z"),
            entry("gelu/d.json", "gelu", "NVIDIA H200", "incorrect", 9.0, "2026-11-30T03:00:00Z"),
            entry("gelu/e.json", "gelu", "NVIDIA H200", "slower", 0.8, "2026-11-30T04:00:00Z"),
            entry("gelu/f.json", "gelu", "NVIDIA H200", "inconclusive", 1.01, "2026-11-30T05:00:00Z"),
            entry("gelu/g.json", "gelu", "", "faster", 1.1, "2026-11-30T05:00:00Z"),
            entry("add/h.json", "add", "NVIDIA H200", "faster", 2.0, "2026-11-30T05:00:00Z", "a | b\nc")};
}

std::size_t pos(const std::string& text, const std::string& needle) {
    auto p = text.find(needle);
    EXPECT_NE(p, std::string::npos) << needle;
    return p;
}
}  // namespace

TEST(leaderboard, same_entries_same_bytes_in_any_order) {
    auto e = sample();
    const std::string a = render_leaderboard(e, {});
    EXPECT_EQ(a, render_leaderboard(e, {}));
    std::reverse(e.begin(), e.end());
    EXPECT_EQ(a, render_leaderboard(e, {}));
    std::rotate(e.begin(), e.begin() + 3, e.end());
    EXPECT_EQ(a, render_leaderboard(e, {}));
}

TEST(leaderboard, speedup_cell_only_for_faster) {
    auto e = sample();
    EXPECT_EQ(speedup_cell(e[0].doc["result"]), "1.200×");
    EXPECT_EQ(speedup_cell(e[2].doc["result"]), "invalid");
    EXPECT_EQ(speedup_cell(e[3].doc["result"]), "incorrect");
    EXPECT_EQ(speedup_cell(e[4].doc["result"]), "no gain");  // slower
    EXPECT_EQ(speedup_cell(e[5].doc["result"]), "no gain");  // inconclusive
    const std::string row = render_row(e[4], 1);
    EXPECT_EQ(row.find("0.8"), std::string::npos) << "a slower row must not show a speedup: " << row;
}

TEST(leaderboard, sections_per_target_and_gpu_sorted) {
    const std::string t = render_leaderboard(sample(), {});
    auto add = pos(t, "## add on NVIDIA H200");
    auto gelu_cpu = pos(t, "## gelu on CPU (no GPU)");
    auto gelu_h200 = pos(t, "## gelu on NVIDIA H200");
    EXPECT_LT(add, gelu_cpu);
    EXPECT_LT(gelu_cpu, gelu_h200);
    EXPECT_NE(t.find("8 result files"), std::string::npos);
}

TEST(leaderboard, best_first_then_no_gain_then_incorrect_then_invalid) {
    const std::string t = render_leaderboard(sample(), {});
    const auto section = t.substr(pos(t, "## gelu on NVIDIA H200"));
    auto b = pos(section, "`gelu/b.json`");  // faster 1.5
    auto a = pos(section, "`gelu/a.json`");  // faster 1.2
    auto f = pos(section, "`gelu/f.json`");  // inconclusive, newer
    auto e = pos(section, "`gelu/e.json`");  // slower, older
    auto d = pos(section, "`gelu/d.json`");  // incorrect
    auto c = pos(section, "`gelu/c.json`");  // invalid
    EXPECT_LT(b, a);
    EXPECT_LT(a, f);
    EXPECT_LT(f, e);
    EXPECT_LT(e, d);
    EXPECT_LT(d, c);
    EXPECT_NE(section.find("| 1 | 1.500× | 1.485–1.515 | faster |"), std::string::npos) << section;
}

TEST(leaderboard, rows_cite_n_seed_and_escape_pipes) {
    auto e = sample();
    const std::string row = render_row(e[7], 1);
    EXPECT_NE(row.find("| 10 | 7 |"), std::string::npos) << row;
    EXPECT_NE(row.find("a \\| b c"), std::string::npos) << row;
    EXPECT_NE(row.find("add_candidate.py"), std::string::npos);
    EXPECT_NE(row.find("2 ± 0.01"), std::string::npos);
}

TEST(leaderboard, skipped_files_are_named_and_bad_docs_rejected) {
    const std::string t = render_leaderboard(sample(), {{"gelu/junk.json", "not valid JSON"}});
    EXPECT_NE(t.find("`gelu/junk.json`: not valid JSON"), std::string::npos);
    EXPECT_EQ(check_result_doc(json::array()), "not a JSON object");
    EXPECT_NE(check_result_doc(json{{"format", 2}}).find("unknown format"), std::string::npos);
    auto bad = sample()[0];
    bad.doc["result"]["verdict"] = "great";
    EXPECT_FALSE(check_result_doc(bad.doc).empty());
    bad.doc["result"]["verdict"] = "faster";
    bad.doc["result"].erase("speedup");
    EXPECT_FALSE(check_result_doc(bad.doc).empty());
    EXPECT_EQ(check_result_doc(sample()[0].doc), "");
}

TEST(leaderboard, empty_results_say_how_to_start) {
    const std::string t = render_leaderboard({}, {});
    EXPECT_NE(t.find("No results yet"), std::string::npos);
    EXPECT_NE(t.find("0 result files"), std::string::npos);
}
