// The real registry as MCP clients receive it: tools/list through mcp_session must be valid
// for the official SDK client (which rejects the whole list over one malformed schema).
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "mcp/server.h"

using namespace hotkernel;

namespace {

/// Every subschema under properties/items/anyOf/... must be an object or a boolean.
void expect_schema(const json& schema, const std::string& where) {
    ASSERT_TRUE(schema.is_object() || schema.is_boolean()) << where << " is " << schema.dump();
    if (!schema.is_object()) return;
    if (schema.contains("properties")) {
        ASSERT_TRUE(schema["properties"].is_object()) << where;
        for (auto it = schema["properties"].begin(); it != schema["properties"].end(); ++it)
            expect_schema(it.value(), where + ".properties." + it.key());
    }
    if (schema.contains("items")) expect_schema(schema["items"], where + ".items");
    for (const char* k : {"anyOf", "oneOf", "allOf"})
        if (schema.contains(k))
            for (std::size_t i = 0; i < schema[k].size(); ++i) expect_schema(schema[k][i], where + "." + k);
    if (schema.contains("required")) {
        ASSERT_TRUE(schema["required"].is_array()) << where;
        for (const auto& r : schema["required"]) EXPECT_TRUE(r.is_string()) << where;
    }
}

}  // namespace

TEST(mcp_tools_list, real_registry_is_valid_for_mcp_clients) {
    std::vector<json> out;
    {
        mcp_session s(mcp_session_options{}, [&](const json& m) { out.push_back(m); });
        s.handle_line(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
    }
    ASSERT_EQ(out.size(), 1u);
    const json& tools = out[0]["result"]["tools"];
    ASSERT_GE(tools.size(), 10u);
    const std::regex name_re("^[A-Za-z0-9_.-]{1,128}$");
    std::set<std::string> names;
    for (const auto& t : tools) {
        const std::string name = t["name"];
        EXPECT_TRUE(std::regex_match(name, name_re)) << name;
        EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
        EXPECT_FALSE(t["description"].get<std::string>().empty()) << name;
        EXPECT_LT(t["description"].get<std::string>().size(), 2048u) << name << ": clients truncate at 2 KB";
        EXPECT_EQ(t["inputSchema"]["type"], "object") << name;
        expect_schema(t["inputSchema"], name + ".inputSchema");
        if (t.contains("outputSchema")) {
            EXPECT_EQ(t["outputSchema"]["type"], "object") << name;
            expect_schema(t["outputSchema"], name + ".outputSchema");
        }
        // A hint is left out where MCP's default says it; what a client reads is what the tool declares.
        const json& a = t["annotations"];
        EXPECT_TRUE(a["readOnlyHint"].is_boolean()) << name;
        for (const char* hint : {"destructiveHint", "idempotentHint", "openWorldHint"})
            if (a.contains(hint)) EXPECT_TRUE(a[hint].is_boolean()) << name << " " << hint;
        const tool_spec* spec = find_tool(name);
        ASSERT_NE(spec, nullptr) << name;
        auto read = [&](const char* k, bool by_default) { return a.contains(k) ? a[k].get<bool>() : by_default; };
        EXPECT_EQ(read("readOnlyHint", false), spec->annotations.read_only) << name;
        EXPECT_EQ(read("openWorldHint", true), spec->annotations.open_world) << name;
        if (!spec->annotations.read_only) {
            EXPECT_EQ(read("destructiveHint", true), spec->annotations.destructive) << name;
            EXPECT_EQ(read("idempotentHint", false), spec->annotations.idempotent) << name;
        }
    }
    for (const char* core : {"gpu_info", "roofline", "new", "bench", "verify", "record", "torch_profile", "profile",
                             "top_kernels", "disassemble"})
        EXPECT_TRUE(names.count(core)) << core;
}

TEST(mcp_tools_list, starting_a_session_runs_no_process) {
    // Start-up must touch no GPU and start nothing: a session with a runner that fails every
    // spawn still initializes and lists tools.
    struct refusing_runner final : process_runner {
        using process_runner::run;
        int calls = 0;
        process_result run(const process_spec&, const cancel_token&) override {
            ++calls;
            process_result r;
            r.spawn_failed = true;
            return r;
        }
    } runner;
    std::vector<json> out;
    {
        mcp_session_options o;
        o.runner = &runner;
        mcp_session s(std::move(o), [&](const json& m) { out.push_back(m); });
        s.handle_line(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
        s.handle_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
        s.handle_line(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
        s.handle_line(R"({"jsonrpc":"2.0","id":3,"method":"ping"})");
    }
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(runner.calls, 0);
}
