// Registry-wide invariants: every tool is declared completely and consistently, and the
// generic argument check behaves as the CLI and MCP both rely on.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <iostream>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "cli/cli.h"
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
        // tools/list is read whole by every agent: say what it returns and when to call it, in short;
        // the rest goes in details (docs/tools.md).
        EXPECT_LE(t.description.size(), 240u) << t.name << ": move the rest into details";
        const std::string first = t.description.substr(0, t.description.find(". "));
        EXPECT_NE(first.find("returns"), std::string::npos) << t.name << ": the first sentence says what it returns";
        EXPECT_NE(t.description.find("Call it"), std::string::npos) << t.name << ": say when to call it";
        EXPECT_TRUE(t.handler) << t.name;
        EXPECT_FALSE(t.summary.empty()) << t.name << ": `hotkernel --help` shows the summary";
        EXPECT_LE(t.summary.size(), 80u) << t.name << ": the summary is one line of `hotkernel --help`";
        EXPECT_EQ(t.summary.find('\n'), std::string::npos) << t.name;
        ASSERT_TRUE(t.output_schema.is_object()) << t.name << " has no output schema";
        EXPECT_EQ(t.output_schema.value("type", ""), "object") << t.name;
        std::set<std::string> params;
        for (const auto& p : t.params) {
            EXPECT_TRUE(params.insert(p.name).second) << t.name << "." << p.name << " declared twice";
            EXPECT_TRUE(std::regex_match(p.name, std::regex("[a-z][a-z0-9_]*"))) << t.name << "." << p.name;
            EXPECT_FALSE(p.summary.empty()) << t.name << "." << p.name;
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

namespace {
/// What each tool does to the machine, from its handler: the annotations must follow from it.
struct effects {
    bool runs_user_code;  ///< imports or runs the user's Python or command
    bool writes_files;    ///< creates or replaces files outside a scratch folder
    bool network;         ///< reaches anything past this machine
};
const std::map<std::string, effects>& tool_effects() {
    static const std::map<std::string, effects> m = {
        {"gpu_info", {false, false, false}},  {"roofline", {false, true, false}},  // plot writes a picture
        {"calibrate", {false, true, false}},  // hotkernel's own GPU program; writes the calibration cache
        {"new", {true, true, false}},         // its probe imports the user's module
        {"bench", {true, true, false}},       {"verify", {true, true, false}},  // plot, export, the full record
        {"record", {false, true, false}},     {"torch_profile", {true, false, false}},
        {"profile", {true, true, false}},     // writes the report it is asked for
        {"top_kernels", {false, false, false}}, {"disassemble", {false, false, false}},
    };
    return m;
}
}  // namespace

TEST(registry, annotations_follow_from_what_each_tool_does) {
    for (const auto& t : all_tools()) {
        auto it = tool_effects().find(t.name);
        ASSERT_NE(it, tool_effects().end()) << t.name << ": say what it does in tool_effects()";
        const effects& e = it->second;
        // A client may run a read-only tool without asking: never one that runs the user's code.
        EXPECT_EQ(t.annotations.read_only, !e.runs_user_code && !e.writes_files) << t.name;
        // What the user's code does is not hotkernel's to promise.
        if (e.runs_user_code) {
            EXPECT_TRUE(t.annotations.destructive) << t.name;
            EXPECT_FALSE(t.annotations.idempotent && t.name != "new") << t.name;
        }
        EXPECT_EQ(t.annotations.open_world, e.network) << t.name;
    }
}

namespace {
json required_args(const tool_spec& t) {
    json args = json::object();
    for (const auto& p : t.params)
        if (p.required) args[p.name] = p.type == param_type::string_array ? json::array({"x"}) :
                                       p.type == param_type::boolean ? json(true) :
                                       p.type == param_type::string ? json(p.choices.empty() ? "x" : p.choices.front()) :
                                       json(p.minimum.value_or(0.0) + 1.0);
    return args;
}
bool accepted(const tool_spec& t, const param_spec& p, const json& value) {
    json args = required_args(t);
    args[p.name] = value;
    try {
        validate_args(t, args);
        return true;
    } catch (const usage_error&) {
        return false;
    }
}
}  // namespace

TEST(registry, every_declared_bound_is_the_one_validation_applies) {
    for (const auto& t : all_tools())
        for (const auto& p : t.params) {
            const std::string what = t.name + "." + p.name;
            const json schema = input_schema(t)["properties"][p.name];
            const bool integer = p.type == param_type::integer;
            const double step = integer ? 1.0 : 1e-6;
            auto num = [&](double d) { return integer ? json(static_cast<long long>(d)) : json(d); };
            if (p.minimum) {
                EXPECT_EQ(schema.contains("exclusiveMinimum"), p.exclusive_minimum) << what;
                // An exclusive bound itself is refused by the handler (roofline's test below).
                if (!p.exclusive_minimum) EXPECT_TRUE(accepted(t, p, num(*p.minimum))) << what;
                EXPECT_TRUE(accepted(t, p, num(*p.minimum + step))) << what;
                EXPECT_FALSE(accepted(t, p, num(*p.minimum - step))) << what;
            }
            if (p.maximum) {
                EXPECT_TRUE(accepted(t, p, num(*p.maximum))) << what;
                EXPECT_FALSE(accepted(t, p, num(*p.maximum + step))) << what;
            }
            const bool text = p.type == param_type::string && p.choices.empty();
            if (text || p.type == param_type::string_array) {
                // Declared where it is not the default, which the server's instructions state.
                const json& holder = text ? schema : schema["items"];
                const std::size_t n = holder.contains("maxLength") ? holder["maxLength"].get<std::size_t>()
                                                                   : default_max_length;
                EXPECT_EQ(holder.contains("maxLength"), n != default_max_length) << what;
                auto sized = [&](std::size_t k) { return text ? json(std::string(k, 'a')) : json::array({std::string(k, 'a')}); };
                EXPECT_TRUE(accepted(t, p, sized(n))) << what;
                EXPECT_FALSE(accepted(t, p, sized(n + 1))) << what;
            }
        }
}

TEST(registry, only_roofline_declares_an_exclusive_bound) {
    // Its handler is the one that refuses the bound itself; a new one needs a test like the next.
    for (const auto& t : all_tools())
        for (const auto& p : t.params)
            if (p.exclusive_minimum) EXPECT_EQ(t.name, "roofline") << p.name;
}

TEST(registry, roofline_accepts_every_value_its_schema_declares) {
    // The handler, not only validation: at each declared bound it answers (bytes: 0 is out).
    const tool_spec* t = find_tool("roofline");
    ASSERT_NE(t, nullptr);
    tool_context ctx;
    for (const auto& p : t->params) {
        if (!p.minimum) continue;
        json args = {{"gpu", "h200_sxm"}, {"flops", 1e12}, {"bytes", 1e9}};
        args[p.name] = p.exclusive_minimum ? *p.minimum + 1e-9 : *p.minimum;
        EXPECT_NO_THROW(call_tool(*t, args, ctx)) << p.name << " = " << args[p.name];
        if (p.exclusive_minimum) {
            args[p.name] = *p.minimum;
            EXPECT_THROW(call_tool(*t, args, ctx), usage_error) << p.name;
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
        {.name = "flops", .type = param_type::number, .summary = "flops", .required = true, .minimum = 0},
        {.name = "dtype", .type = param_type::string, .summary = "dtype", .default_value = "bf16", .choices = {"bf16", "fp32"}},
        {.name = "n", .type = param_type::integer, .summary = "n", .default_value = 10, .minimum = 1, .maximum = 100},
        {.name = "inputs", .type = param_type::string_array, .summary = "inputs"},
        {.name = "force", .type = param_type::boolean, .summary = "force", .default_value = false},
    };
    return t;
}
/// The message an MCP caller gets (parameters named as sent).
std::string error_of(const json& args) {
    try {
        validate_args(sample_tool(), args, front_end::mcp);
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

TEST(validate_args, refuses_a_string_for_a_list_and_says_to_send_an_array) {
    // The schema says array; only the CLI accepts the comma form, and splits it itself.
    const std::string e = error_of({{"flops", 1}, {"inputs", "x, w_q,scales"}});
    EXPECT_NE(e.find("parameter 'inputs'"), std::string::npos) << e;
    EXPECT_NE(e.find("send an array"), std::string::npos) << e;
    json out = validate_args(sample_tool(), {{"flops", 1}, {"inputs", {"x", "w_q"}}});
    EXPECT_EQ(out["inputs"], json::array({"x", "w_q"}));
}

TEST(validate_args, the_cli_gets_its_flags_and_mcp_the_names_as_sent) {
    auto cli_error = [](const json& args) {
        try {
            validate_args(sample_tool(), args, front_end::cli);
        } catch (const usage_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(cli_error(json::object()).find("missing required parameter --flops"), std::string::npos);
    EXPECT_NE(cli_error({{"flops", 1}, {"n", 0}}).find("sample: parameter --n must be >= 1"), std::string::npos);
    EXPECT_NE(cli_error({{"flops", 1}, {"dtype", "fp16"}}).find("parameter --dtype must be one of"), std::string::npos);
    for (const json& bad : {json::object(), json{{"flops", 1}, {"n", 0}}, json{{"flops", 1}, {"dtype", "fp16"}},
                            json{{"flops", 1}, {"nn", 2}}}) {
        const std::string e = error_of(bad);
        EXPECT_EQ(e.find("--"), std::string::npos) << e;
        EXPECT_EQ(e.find('\x1f'), std::string::npos) << e;
    }
    EXPECT_NE(error_of({{"flops", 1}, {"nn", 2}}).find("did you mean 'n'?"), std::string::npos);
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

// ---- typed arguments: one declaration fills the schema, the help and the struct ----------

TEST(registry, no_summary_repeats_its_default_or_bounds_by_hand) {
    for (const auto& t : all_tools())
        for (const auto& p : t.params) {
            const std::string where = t.name + "." + p.name;
            EXPECT_FALSE(contains_ci(p.summary, "(default")) << where << ": " << p.summary;
            EXPECT_FALSE(contains_ci(p.summary, "default ")) << where << ": the default is rendered from default_value";
            if (p.minimum && p.maximum) {
                EXPECT_FALSE(contains_ci(p.summary, fmt::format("{}..{}", *p.minimum, *p.maximum))) << where;
            }
            const std::string d = param_description(p);
            const auto first = d.find("Default ");
            if (p.default_value.is_null()) {
                EXPECT_EQ(first, std::string::npos) << where << ": " << d;
            } else {
                ASSERT_NE(first, std::string::npos) << where << ": " << d;
                EXPECT_EQ(d.find("Default ", first + 1), std::string::npos) << where << ": default shown twice: " << d;
            }
        }
}

namespace {
struct typed_args {
    double flops = 0;
    std::string dtype;
    long long n = 0;
    std::vector<std::string> inputs;
    std::optional<std::string> name;
    std::optional<long long> limit;
    bool force = false;
};
typed_args g_seen;
json typed_handler(const typed_args& a, tool_context&) {
    g_seen = a;
    return json::object();
}
tool_spec typed_tool() {
    tool_spec t;
    t.name = "typed";
    return make_tool<typed_args>(
        std::move(t),
        {param(&typed_args::flops, {.name = "flops", .summary = "Work per call", .required = true, .minimum = 0}),
         param(&typed_args::dtype, {.name = "dtype", .summary = "Dtype", .default_value = "bf16", .choices = {"bf16", "fp32"}}),
         param(&typed_args::n, {.name = "n", .summary = "Pairs", .default_value = 10, .minimum = 2, .maximum = 1000}),
         param(&typed_args::inputs, {.name = "inputs", .summary = "Names"}),
         param(&typed_args::name, {.name = "name", .summary = "A name"}),
         param(&typed_args::limit, {.name = "limit", .summary = "At most", .minimum = 1}),
         param(&typed_args::force, {.name = "force", .summary = "Replace", .default_value = false})},
        typed_handler);
}
}  // namespace

TEST(typed_args, the_member_type_sets_the_schema_type) {
    const tool_spec t = typed_tool();
    const json props = input_schema(t)["properties"];
    EXPECT_EQ(props["flops"]["type"], "number");
    EXPECT_EQ(props["dtype"]["type"], "string");
    EXPECT_EQ(props["n"]["type"], "integer");
    EXPECT_EQ(props["inputs"]["type"], "array");
    EXPECT_EQ(props["name"]["type"], "string");
    EXPECT_EQ(props["limit"]["type"], "integer");
    EXPECT_EQ(props["force"]["type"], "boolean");
    EXPECT_EQ(input_schema(t)["required"], json::array({"flops"}));
}

TEST(typed_args, default_and_bounds_are_rendered_once_from_the_fields) {
    const tool_spec t = typed_tool();
    const json props = input_schema(t)["properties"];
    // The CLI and the docs show them in words; tools/list has them as schema keywords only.
    EXPECT_EQ(param_description(t.params[2]), "Pairs. Default 10; 2..1000.");
    EXPECT_EQ(props["n"]["description"], "Pairs");
    EXPECT_EQ(props["n"]["minimum"], 2);
    EXPECT_EQ(props["n"]["maximum"], 1000);
    EXPECT_EQ(props["n"]["default"], 10);
    EXPECT_EQ(param_description(t.params[0]), "Work per call. >= 0.");
    EXPECT_EQ(param_description(t.params[1]), "Dtype. Default bf16.");
    EXPECT_EQ(props["dtype"]["default"], "bf16");
    EXPECT_EQ(props["force"]["description"], "Replace");
    EXPECT_EQ(props["name"]["description"], "A name");
    EXPECT_EQ(param_limits(t.params[2], false), "2..1000");
}

TEST(typed_args, bounds_are_exact_at_both_ends) {
    const tool_spec t = typed_tool();
    EXPECT_NO_THROW(validate_args(t, {{"flops", 0}, {"n", 2}}));
    EXPECT_NO_THROW(validate_args(t, {{"flops", 0}, {"n", 1000}}));
    EXPECT_THROW(validate_args(t, {{"flops", 0}, {"n", 1}}), usage_error);
    EXPECT_THROW(validate_args(t, {{"flops", 0}, {"n", 1001}}), usage_error);
    EXPECT_THROW(validate_args(t, {{"flops", -0.001}}), usage_error);
}

TEST(typed_args, the_handler_gets_the_struct_filled_with_defaults_and_given_values) {
    const tool_spec t = typed_tool();
    tool_context ctx;
    g_seen = typed_args{};
    call_tool(t, {{"flops", 5.5}, {"inputs", {"x", "w_q"}}, {"limit", 3}}, ctx);
    EXPECT_EQ(g_seen.flops, 5.5);
    EXPECT_EQ(g_seen.dtype, "bf16");
    EXPECT_EQ(g_seen.n, 10);
    EXPECT_EQ(g_seen.inputs, (std::vector<std::string>{"x", "w_q"}));
    EXPECT_FALSE(g_seen.name.has_value());
    EXPECT_EQ(g_seen.limit, 3);
    EXPECT_FALSE(g_seen.force);
    call_tool(t, {{"flops", 1}, {"name", "gelu"}, {"force", true}, {"n", 7}}, ctx);
    EXPECT_EQ(g_seen.name, "gelu");
    EXPECT_TRUE(g_seen.force);
    EXPECT_EQ(g_seen.n, 7);
    EXPECT_TRUE(g_seen.inputs.empty());
    EXPECT_FALSE(g_seen.limit.has_value());
}

TEST(typed_args, an_array_sent_as_a_string_is_refused_before_the_handler_runs) {
    const tool_spec t = typed_tool();
    tool_context ctx;
    ctx.words = front_end::mcp;
    g_seen = typed_args{};
    g_seen.dtype = "untouched";
    try {
        call_tool(t, {{"flops", 1}, {"inputs", "x,w_q"}}, ctx);
        FAIL() << "a string for an array parameter was accepted";
    } catch (const usage_error& e) {
        EXPECT_NE(std::string(e.what()).find("typed: parameter 'inputs' must be a JSON array"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("send an array"), std::string::npos) << e.what();
    }
    EXPECT_EQ(g_seen.dtype, "untouched");
}

TEST(typed_args, a_declaration_that_cannot_fill_its_member_is_refused) {
    struct args {
        long long n = 0;
        std::optional<long long> m;
    };
    EXPECT_THROW(param(&args::n, {.name = "n", .summary = "no default, not required"}), std::logic_error);
    EXPECT_THROW(param(&args::m, {.name = "m", .summary = "optional with a default", .default_value = 1}), std::logic_error);
    EXPECT_NO_THROW(param(&args::n, {.name = "n", .summary = "required", .required = true}));
}

// ---- the CLI front end, generated from the same declarations -----------------------------

namespace {
struct cli_out {
    int rc;
    std::string out;
    std::string err;
};
cli_out run_cli_with(std::vector<std::string> words) {
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const int rc = run_cli(static_cast<int>(argv.size()), argv.data());
    std::cout.flush();
    std::string out = testing::internal::GetCapturedStdout();
    std::string err = testing::internal::GetCapturedStderr();
    return {rc, out, err};
}
}  // namespace

TEST(cli, a_bad_integer_names_the_flag_and_runs_nothing) {
    const auto r = run_cli_with({"hotkernel", "verify", "a.py", "b.py", "--n", "ten"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("verify: --n expects an integer, got 'ten'"), std::string::npos) << r.err;
    const auto f = run_cli_with({"hotkernel", "roofline", "--flops", "1e9", "--bytes", "lots"});
    EXPECT_EQ(f.rc, 2);
    EXPECT_NE(f.err.find("roofline: --bytes expects a number, got 'lots'"), std::string::npos) << f.err;
}

TEST(cli, tool_help_shows_numeric_types_and_the_default_once) {
    const auto r = run_cli_with({"hotkernel", "verify", "--help"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("--n INT"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--timeout-s FLOAT"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Default 10; 2..1000."), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("(default"), std::string::npos) << r.out;
}

TEST(cli, top_level_help_lists_each_tool_on_one_line) {
    const auto r = run_cli_with({"hotkernel", "--help"});
    EXPECT_EQ(r.rc, 0);
    const auto lines = split_lines(r.out);
    for (const auto& t : all_tools()) {
        int hits = 0;
        for (const auto& l : lines)
            if (l.find("  " + to_kebab(t.name) + " ") != std::string::npos && l.find(t.summary) != std::string::npos) {
                ++hits;
                EXPECT_LE(l.size(), 120u) << l;
            }
        EXPECT_EQ(hits, 1) << t.name << " in\n" << r.out;
    }
    EXPECT_LE(lines.size(), 40u) << "hotkernel --help must fit one screen:\n" << r.out;
}
