// Lean results: a tool with a lean projection writes its full result beside its script, answers
// with the projection and the file's path unless detail=full, and never loses the record.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "registry/lean.h"
#include "registry/tool.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {
struct big_args {
    std::string script;
    long long n = 0;
};

json big_handler(const big_args& a, tool_context&) {
    json runs = json::array();
    for (long long i = 0; i < a.n; ++i) runs.push_back(json{{"index", i}, {"line", std::string(100, 'x')}});
    return json{{"target", "gelu"}, {"mean_ms", 1.234567891}, {"n", a.n}, {"runs", runs},
                {"warnings", json::array({json{{"id", "no_flops"}, {"message", "pass " + words::param("flops")}}})}};
}

tool_spec big_tool() {
    tool_spec t;
    t.name = "big";
    t.title = "Big";
    t.description = "Returns a big result.";
    t.output_schema = {{"type", "object"}};
    t.lean = [](const json& full) { return round_numbers(pick(full, {"mean_ms", "n", "warnings", "full_record"})); };
    t.record_beside = "script";
    return make_tool<big_args>(std::move(t),
                               {param(&big_args::script, {.name = "script", .summary = "script", .required = true}),
                                param(&big_args::n, {.name = "n", .summary = "runs", .default_value = 3})},
                               big_handler);
}

struct scratch {
    fs::path dir = make_temp_dir("hk-lean-test-");
    fs::path script = dir / "k.py";
    scratch() { std::ofstream(script) << "print('{\"ms\": 1}')\n"; }
    ~scratch() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};
}  // namespace

TEST(lean, the_tool_takes_detail_and_its_default_is_lean_over_mcp_and_full_in_the_cli) {
    const tool_spec t = big_tool();
    const param_spec& d = t.params.back();
    EXPECT_EQ(d.name, "detail");
    EXPECT_EQ(d.default_value, "lean");
    EXPECT_EQ(d.cli_default, "full");
    EXPECT_EQ(d.choices, (std::vector<std::string>{"lean", "full"}));
}

TEST(lean, a_lean_result_names_the_file_that_holds_the_full_one_beside_the_script) {
    scratch s;
    const tool_spec t = big_tool();
    tool_context ctx;
    ctx.words = front_end::mcp;
    const json lean = call_tool(t, {{"script", s.script.string()}}, ctx);
    EXPECT_FALSE(lean.contains("runs"));
    EXPECT_EQ(lean["mean_ms"], 1.2346);  // five significant digits
    EXPECT_EQ(lean["warnings"][0]["message"], "pass 'flops'");  // rendered before it was written or projected
    const fs::path file = lean["full_record"].get<std::string>();
    EXPECT_TRUE(file.is_absolute());
    EXPECT_EQ(file.parent_path(), s.dir / ".hotkernel" / "runs");
    EXPECT_TRUE(fs::exists(s.dir / ".hotkernel" / ".gitignore"));
    const json full = json::parse(read_file(file));
    EXPECT_EQ(full["runs"].size(), 3u);
    EXPECT_EQ(full["mean_ms"], 1.234567891);
    EXPECT_EQ(full["full_record"], file.string());
    EXPECT_EQ(full["warnings"][0]["message"], "pass 'flops'");

    const json whole = call_tool(t, {{"script", s.script.string()}, {"detail", "full"}}, ctx);
    EXPECT_EQ(whole["runs"].size(), 3u);
    EXPECT_TRUE(fs::exists(whole["full_record"].get<std::string>()));
    EXPECT_NE(whole["full_record"], lean["full_record"]);  // every call its own file
}

TEST(lean, without_a_writable_folder_the_cache_takes_it_and_without_either_the_result_is_whole) {
    scratch s;
    std::ofstream(s.dir / ".hotkernel") << "a file where the folder would go\n";  // root too cannot write there
    const char* old = std::getenv("XDG_CACHE_HOME");
    const std::string saved = old ? old : "";
    const fs::path writable = s.dir / "cache";
    ::setenv("XDG_CACHE_HOME", writable.c_str(), 1);
    const tool_spec t = big_tool();
    tool_context ctx;
    const json lean = call_tool(t, {{"script", s.script.string()}}, ctx);
    EXPECT_EQ(fs::path(lean["full_record"].get<std::string>()).parent_path(), writable / "hotkernel" / "runs");
    EXPECT_FALSE(lean.contains("runs"));

    ::setenv("XDG_CACHE_HOME", (s.dir / ".hotkernel" / "below-a-file").c_str(), 1);
    const json whole = call_tool(t, {{"script", s.script.string()}}, ctx);
    if (old) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
    else ::unsetenv("XDG_CACHE_HOME");
    EXPECT_TRUE(whole["full_record"].is_null());
    EXPECT_EQ(whole["runs"].size(), 3u);
    EXPECT_EQ(whole["warnings"].back()["id"], "full_record_unwritten");
}

TEST(lean, round_numbers_keeps_integers_and_cuts_floats) {
    const json r = round_numbers(json{{"a", 0.000123456789}, {"b", 7}, {"c", json::array({2.0 / 3.0})}});
    EXPECT_EQ(r["a"], 0.00012346);
    EXPECT_EQ(r["b"], 7);
    EXPECT_EQ(r["c"][0], 0.66667);
}
