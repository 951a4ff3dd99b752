// Registry-wide invariants: every tool is declared completely and consistently, and the
// generic argument check behaves as the CLI and MCP both rely on.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "registry/tool.h"
#include "util/strings.h"

using namespace hotkernel;

TEST(registry, names_are_unique_snake_case_and_round_trip_to_kebab) {
    std::set<std::string> seen;
    for (const auto& t : all_tools()) {
        EXPECT_TRUE(std::regex_match(t.name, std::regex("[a-z][a-z0-9_]*"))) << t.name;
        EXPECT_TRUE(seen.insert(t.name).second) << "duplicate tool " << t.name;
        EXPECT_EQ(to_snake(to_kebab(t.name)), t.name);
        EXPECT_EQ(find_tool(to_kebab(t.name)), &t);
    }
}

TEST(registry, every_tool_is_fully_described) {
    for (const auto& t : all_tools()) {
        EXPECT_FALSE(t.title.empty()) << t.name;
        EXPECT_GT(t.description.size(), 40u) << t.name << ": description must tell a model when to use it";
        EXPECT_LT(t.description.size(), 2048u) << t.name << ": clients truncate descriptions at 2 KB";
        EXPECT_TRUE(t.handler) << t.name;
        ASSERT_TRUE(t.output_schema.is_object()) << t.name << " has no output schema";
        EXPECT_EQ(t.output_schema.value("type", ""), "object") << t.name;
        std::set<std::string> params;
        for (const auto& p : t.params) {
            EXPECT_TRUE(params.insert(p.name).second) << t.name << "." << p.name << " declared twice";
            EXPECT_TRUE(std::regex_match(p.name, std::regex("[a-z][a-z0-9_]*"))) << t.name << "." << p.name;
            EXPECT_FALSE(p.description.empty()) << t.name << "." << p.name;
            EXPECT_FALSE(p.required && !p.default_value.is_null()) << t.name << "." << p.name << ": required with a default";
        }
    }
}

TEST(registry, writing_tools_say_so_in_their_annotations) {
    for (const auto& t : all_tools()) {
        if (t.name == "record" || t.name == "new") {
            EXPECT_FALSE(t.annotations.read_only) << t.name;
        }
        if (t.annotations.read_only) {
            EXPECT_FALSE(t.annotations.destructive) << t.name;
        }
    }
}

TEST(registry, input_schemas_are_flat_objects_without_combinators) {
    for (const auto& t : all_tools()) {
        json s = input_schema(t);
        EXPECT_EQ(s["type"], "object");
        EXPECT_EQ(s["additionalProperties"], false);
        for (const char* k : {"anyOf", "oneOf", "allOf"}) EXPECT_FALSE(s.contains(k)) << t.name;
        for (auto& [name, prop] : s["properties"].items()) EXPECT_TRUE(prop["type"].is_string()) << t.name << "." << name;
    }
}

TEST(registry, defaults_pass_their_own_validation) {
    for (const auto& t : all_tools()) {
        json args = json::object();
        for (const auto& p : t.params)
            if (p.required) args[p.name] = p.type == param_type::string_array ? json::array({"x"}) :
                                           p.type == param_type::boolean ? json(true) :
                                           p.type == param_type::string ? json(p.choices.empty() ? "x" : p.choices.front()) :
                                           json(p.minimum.value_or(1.0));
        EXPECT_NO_THROW(validate_args(t, args)) << t.name;
    }
}

TEST(registry, every_file_in_src_tools_is_registered) {
    namespace fs = std::filesystem;
    for (const auto& entry : fs::directory_iterator(fs::path(HOTKERNEL_SOURCE_DIR) / "src" / "tools")) {
        if (entry.path().extension() != ".cpp") continue;
        std::string stem = entry.path().stem().string();
        if (stem == "new_target") stem = "new";  // `new` is a C++ keyword, so its file is named apart
        EXPECT_NE(find_tool(stem), nullptr) << entry.path() << " defines a tool that all_tools() does not list";
    }
}

// ---- validate_args on a synthetic tool ------------------------------------------------

namespace {
tool_spec sample_tool() {
    tool_spec t;
    t.name = "sample";
    t.params = {
        {.name = "flops", .type = param_type::number, .description = "flops", .required = true, .minimum = 0},
        {.name = "dtype", .type = param_type::string, .description = "dtype", .default_value = "bf16", .choices = {"bf16", "fp32"}},
        {.name = "n", .type = param_type::integer, .description = "n", .default_value = 10, .minimum = 1, .maximum = 100},
        {.name = "inputs", .type = param_type::string_array, .description = "inputs"},
        {.name = "force", .type = param_type::boolean, .description = "force", .default_value = false},
    };
    return t;
}
std::string error_of(const json& args) {
    try {
        validate_args(sample_tool(), args);
    } catch (const usage_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST(validate_args, fills_defaults_and_keeps_given_values) {
    json out = validate_args(sample_tool(), {{"flops", 5}});
    EXPECT_EQ(out["dtype"], "bf16");
    EXPECT_EQ(out["n"], 10);
    EXPECT_EQ(out["flops"], 5);
    EXPECT_FALSE(out.contains("inputs"));
}

TEST(validate_args, accepts_a_comma_separated_string_for_a_list) {
    json out = validate_args(sample_tool(), {{"flops", 1}, {"inputs", "x, w_q,scales"}});
    EXPECT_EQ(out["inputs"], json::array({"x", "w_q", "scales"}));
}

TEST(validate_args, errors_name_the_parameter_and_the_fix) {
    EXPECT_NE(error_of(json::object()).find("missing required parameter 'flops'"), std::string::npos);
    EXPECT_NE(error_of({{"flops", -1}}).find("must be >= 0"), std::string::npos);
    EXPECT_NE(error_of({{"flops", "many"}}).find("must be a number"), std::string::npos);
    EXPECT_NE(error_of({{"flops", 1}, {"dtype", "bf61"}}).find("did you mean 'bf16'"), std::string::npos);
    EXPECT_NE(error_of({{"flops", 1}, {"n", 1000}}).find("must be <= 100"), std::string::npos);
    EXPECT_NE(error_of({{"flops", 1}, {"n", 2.5}}).find("must be an integer"), std::string::npos);
    EXPECT_NE(error_of({{"flop", 1}}).find("did you mean 'flops'"), std::string::npos);
    EXPECT_NE(error_of({{"flops", 1}, {"force", "yes"}}).find("true or false"), std::string::npos);
    EXPECT_NE(error_of(json::array()).find("must be a JSON object"), std::string::npos);
}
