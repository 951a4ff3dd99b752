// Interface words: a reference renders as the CLI spells a parameter or a call, or as MCP does,
// wherever it sits in a message or a result.
#include <gtest/gtest.h>

#include "util/words.h"

using namespace hotkernel;

TEST(words, a_parameter_is_a_flag_in_the_cli_and_its_name_over_mcp) {
    const std::string text = "pass " + words::param("min_bytes") + " for a weight";
    EXPECT_EQ(render_words(text, front_end::cli), "pass --min-bytes for a weight");
    EXPECT_EQ(render_words(text, front_end::mcp), "pass 'min_bytes' for a weight");
}

TEST(words, a_parameter_with_a_value_is_typed_as_each_interface_takes_it) {
    const std::string gpu = words::param("gpu", "NVIDIA H200");
    EXPECT_EQ(render_words(gpu, front_end::cli), "--gpu \"NVIDIA H200\"");
    EXPECT_EQ(render_words(gpu, front_end::mcp), "gpu: \"NVIDIA H200\"");
    const std::string inputs = words::param("inputs", json::array({"x", "w_q", "scales"}));
    EXPECT_EQ(render_words(inputs, front_end::cli), "--inputs x,w_q,scales");
    EXPECT_EQ(render_words(inputs, front_end::mcp), "inputs: [\"x\",\"w_q\",\"scales\"]");
    EXPECT_EQ(render_words(words::param("force", true), front_end::cli), "--force");
    EXPECT_EQ(render_words(words::param("force", true), front_end::mcp), "force: true");
    EXPECT_EQ(render_words(words::param("warm", false), front_end::cli), "--no-warm");
    EXPECT_EQ(render_words(words::param("max_lines", 0), front_end::cli), "--max-lines 0");
    // A value a shell would split or expand is quoted so it can be pasted.
    EXPECT_EQ(render_words(words::param("reference", "$HOME:f"), front_end::cli), "--reference '$HOME:f'");
    EXPECT_EQ(render_words(words::param("note", "it's $1"), front_end::cli), "--note 'it'\\''s $1'");
}

TEST(words, a_call_is_a_shell_line_in_the_cli_and_a_tool_call_over_mcp) {
    const std::string c = words::call("record", json{{"result", "/r/v.json"}, {"note", "fused"}});
    EXPECT_EQ(render_words(c, front_end::cli), "hotkernel record --result /r/v.json --note fused");
    EXPECT_EQ(render_words(c, front_end::mcp), "record {\"result\":\"/r/v.json\",\"note\":\"fused\"}");
    EXPECT_EQ(render_words(words::call("top_kernels", json{{"force", true}}), front_end::cli),
              "hotkernel top-kernels --force");
}

TEST(words, either_and_the_interpreter_setting_differ_by_interface) {
    EXPECT_EQ(render_words(words::either("a", "b"), front_end::cli), "a");
    EXPECT_EQ(render_words(words::either("a", "b"), front_end::mcp), "b");
    EXPECT_NE(render_words(words::python_setting(), front_end::cli).find("--python"), std::string::npos);
    EXPECT_EQ(render_words(words::python_setting(), front_end::mcp).find("--python /path/to/python or"),
              std::string::npos);
    EXPECT_NE(render_words(words::python_setting(), front_end::mcp).find("HOTKERNEL_PYTHON"), std::string::npos);
}

TEST(words, every_string_of_a_result_is_rendered_and_plain_text_is_left_alone) {
    json r = {{"warnings", json::array({json{{"id", "no_flops"}, {"message", "pass " + words::param("flops")}}})},
              {"nested", {{"list", json::array({words::param("n"), 3})}}},
              {"plain", "a -- b \"quoted\""}};
    render_words(r, front_end::cli);
    EXPECT_EQ(r["warnings"][0]["message"], "pass --flops");
    EXPECT_EQ(r["nested"]["list"][0], "--n");
    EXPECT_EQ(r["nested"]["list"][1], 3);
    EXPECT_EQ(r["plain"], "a -- b \"quoted\"");
    EXPECT_EQ(dump_line(r).find("\\u001f"), std::string::npos);
}

TEST(words, a_reference_cut_short_leaves_no_marker_behind) {
    const std::string whole = "see " + words::param("timeout_s") + " now";
    const std::string cut = whole.substr(0, whole.size() - 8);  // inside the reference
    const std::string shown = render_words(cut, front_end::mcp);
    EXPECT_EQ(shown, "see ");
    EXPECT_EQ(shown.find('\x1f'), std::string::npos);
}
