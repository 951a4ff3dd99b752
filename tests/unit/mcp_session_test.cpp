// mcp_session: version negotiation, JSON-RPC error codes, the 2026-07-28 path, tools/call
// results, progress rules, cancellation (incl. a real child process) and garbage input.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <random>
#include <sstream>
#include <thread>

#include "mcp/server.h"

using namespace hotkernel;
using namespace std::chrono_literals;

namespace {

/// Collects every message the session writes, in order.
class capture {
public:
    mcp_session::writer_fn writer() {
        return [this](const json& m) {
            std::lock_guard lock(m_mutex);
            m_messages.push_back(json::parse(dump_line(m)));  // round-trip: what a client would parse
            m_cv.notify_all();
        };
    }
    std::vector<json> messages() const {
        std::lock_guard lock(m_mutex);
        return m_messages;
    }
    /// Waits for the response with this id; null json on timeout.
    json response(const json& id, std::chrono::milliseconds wait = 5s) {
        std::unique_lock lock(m_mutex);
        json found;
        m_cv.wait_for(lock, wait, [&] {
            for (const auto& m : m_messages)
                if (m.contains("id") && m["id"] == id && (m.contains("result") || m.contains("error"))) {
                    found = m;
                    return true;
                }
            return false;
        });
        return found;
    }
    std::vector<json> progress_for(const json& token) const {
        std::vector<json> out;
        for (const auto& m : messages())
            if (m.value("method", "") == "notifications/progress" && m["params"]["progressToken"] == token)
                out.push_back(m);
        return out;
    }
    bool wait_count(std::size_t n, std::chrono::milliseconds wait = 5s) {
        std::unique_lock lock(m_mutex);
        return m_cv.wait_for(lock, wait, [&] { return m_messages.size() >= n; });
    }
    void clear() {
        std::lock_guard lock(m_mutex);
        m_messages.clear();
    }

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::vector<json> m_messages;
};

std::atomic<int> g_handler_runs{0};
std::atomic<bool> g_child_cancelled{false};

std::vector<tool_spec> fake_tools() {
    std::vector<tool_spec> tools;
    tool_spec echo;
    echo.name = "echo";
    echo.title = "Echo";
    echo.description = "Returns its arguments.";
    echo.params = {param_spec{.name = "text", .type = param_type::string, .summary = "text", .required = true},
                   param_spec{.name = "n", .type = param_type::integer, .summary = "n", .default_value = 1, .minimum = 0}};
    echo.output_schema = {{"type", "object"}};
    echo.handler = [](const json& args, tool_context&) {
        ++g_handler_runs;
        return json{{"text", args["text"]}, {"n", args["n"]}};
    };
    tools.push_back(echo);

    tool_spec fail = echo;
    fail.name = "fail";
    fail.params = {};
    fail.handler = [](const json&, tool_context&) -> json { throw tool_error("no GPU found; run on a machine with a driver"); };
    tools.push_back(fail);

    tool_spec crash = fail;
    crash.name = "crash";
    crash.handler = [](const json&, tool_context&) -> json { throw std::runtime_error("vector index out of range"); };
    tools.push_back(crash);

    // Names a parameter and says what to run next, the way guidance does.
    tool_spec guide = fail;
    guide.name = "guide";
    guide.handler = [](const json&, tool_context&) -> json {
        throw tool_error("pass " + words::param("gpu", "NVIDIA H200") + ", then " +
                         words::call("bench", json{{"script", "k.py"}}));
    };
    guide.summarize = [](const json&) { return std::string("unused"); };
    tools.push_back(guide);

    tool_spec summed = echo;
    summed.name = "summed";
    summed.summarize = [](const json& r) { return "said " + r["text"].get<std::string>() + " " + words::param("n") + "\n"; };
    tools.push_back(summed);

    tool_spec not_object = fail;
    not_object.name = "not_object";
    not_object.handler = [](const json&, tool_context&) -> json { return json::array({1, 2}); };
    tools.push_back(not_object);

    // Reports progress every step_ms until `steps` are done or it is cancelled.
    tool_spec wait = fail;
    wait.name = "wait";
    wait.params = {param_spec{.name = "steps", .type = param_type::integer, .summary = "steps", .default_value = 100},
                   param_spec{.name = "step_ms", .type = param_type::integer, .summary = "ms", .default_value = 10}};
    wait.handler = [](const json& args, tool_context& ctx) {
        const int steps = args["steps"].get<int>();
        int i = 0;
        for (; i < steps && !ctx.cancel.cancelled(); ++i) {
            ctx.progress(i, steps, "step " + std::to_string(i));
            std::this_thread::sleep_for(std::chrono::milliseconds(args["step_ms"].get<int>()));
        }
        ctx.progress(steps, steps, "done");  // terminal progress: the session must drop it
        return json{{"steps_done", i}};
    };
    tools.push_back(wait);

    // A real child through the runner: cancellation must kill it long before its 30 s sleep.
    tool_spec child = fail;
    child.name = "child";
    child.handler = [](const json&, tool_context& ctx) {
        process_spec spec;
        spec.argv = {"/bin/sh", "-c", "sleep 30"};
        spec.timeout_s = 60;
        spec.kill_grace_s = 1;
        const auto r = ctx.runner->run(spec, ctx.cancel);
        g_child_cancelled = r.cancelled;
        if (r.cancelled) throw tool_error("cancelled");
        return json{{"wall_s", r.wall_s}};
    };
    tools.push_back(child);
    return tools;
}

struct session_fixture : ::testing::Test {
    capture out;
    std::unique_ptr<mcp_session> session;
    void SetUp() override { make(); }
    void make(bool allow_calls = true, std::chrono::milliseconds interval = 50ms) {
        mcp_session_options o;
        o.tools = fake_tools();
        o.allow_tool_calls = allow_calls;
        o.progress_interval = interval;
        session = std::make_unique<mcp_session>(std::move(o), out.writer());
    }
    json request(const json& id, const std::string& method, const json& params = nullptr) {
        json m = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
        if (!params.is_null()) m["params"] = params;
        session->handle_line(dump_line(m));
        return out.response(id);
    }
    json call(const json& id, const std::string& name, const json& args, const json& meta = nullptr) {
        json p = {{"name", name}, {"arguments", args}};
        if (!meta.is_null()) p["_meta"] = meta;
        return request(id, "tools/call", p);
    }
    int error_code(const json& r) { return r.contains("error") ? r["error"]["code"].get<int>() : 0; }
};

}  // namespace

TEST_F(session_fixture, initialize_echoes_every_supported_version) {
    int id = 0;
    for (const char* v : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
        json r = request(++id, "initialize", {{"protocolVersion", v}, {"capabilities", json::object()}});
        ASSERT_TRUE(r.contains("result")) << r;
        EXPECT_EQ(r["result"]["protocolVersion"], v);
        EXPECT_EQ(session->negotiated_version(), v);
    }
}

TEST_F(session_fixture, initialize_answers_latest_for_unknown_versions) {
    for (const char* v : {"1999-01-01", "2026-07-28", "2024-10-07", ""}) {
        json r = request(v, "initialize", {{"protocolVersion", v}});
        EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25") << v;
    }
    json r = request(10, "initialize", json::object());
    EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");
    EXPECT_EQ(error_code(request(11, "initialize", {{"protocolVersion", 20251125}})), mcp_error::invalid_params);
}

TEST_F(session_fixture, initialize_advertises_tools_only_and_short_instructions) {
    json r = request(1, "initialize", {{"protocolVersion", "2025-11-25"}})["result"];
    EXPECT_EQ(r["serverInfo"]["name"], "hotkernel");
    EXPECT_TRUE(r["capabilities"].contains("tools"));
    EXPECT_FALSE(r["capabilities"].contains("logging"));
    EXPECT_FALSE(r["capabilities"].contains("resources"));
    EXPECT_EQ(r["capabilities"].size(), 1u);
    const std::string instr = r["instructions"];
    EXPECT_LT(instr.size(), 2048u);  // clients truncate at 2 KB
    for (const char* tool : {"new", "bench", "verify", "record", "roofline", "torch_profile", "disassemble"})
        EXPECT_NE(instr.find(tool), std::string::npos) << tool;
}

TEST_F(session_fixture, ping_logging_and_notifications) {
    EXPECT_EQ(request("p", "ping")["result"], json::object());
    EXPECT_EQ(request(2, "logging/setLevel", {{"level", "info"}})["result"], json::object());
    EXPECT_EQ(error_code(request(3, "logging/setLevel", {{"level", "loud"}})), mcp_error::invalid_params);
    out.clear();
    // Notifications never get an answer, whatever they hold.
    for (const char* line : {R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                             R"({"jsonrpc":"2.0","method":"notifications/whatever","params":[1]})",
                             R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}})",
                             R"({"jsonrpc":"2.0","method":"notifications/cancelled"})",
                             R"({"jsonrpc":"2.0","method":42})", R"({"method":"notifications/initialized"})",
                             R"({"jsonrpc":"2.0","id":5,"result":{}})", R"({"jsonrpc":"2.0","id":6,"error":{"code":1}})"})
        session->handle_line(line);
    EXPECT_TRUE(out.messages().empty()) << out.messages().front();
}

TEST_F(session_fixture, protocol_error_codes) {
    auto one = [&](std::string_view line) {
        out.clear();
        session->handle_line(line);
        EXPECT_TRUE(out.wait_count(1)) << line;
        return out.messages().at(0);
    };
    json r = one("{not json");
    EXPECT_EQ(r["error"]["code"], mcp_error::parse_error);
    EXPECT_TRUE(r["id"].is_null());
    EXPECT_EQ(one("\xff\xfe{}")["error"]["code"], mcp_error::parse_error);
    EXPECT_EQ(one(R"({"jsonrpc":"2.0","id":1,"method":"ping","x":"bad\xff"})")["error"]["code"], mcp_error::parse_error);
    r = one(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])");
    EXPECT_EQ(r["error"]["code"], mcp_error::invalid_request);
    EXPECT_TRUE(r["id"].is_null());
    EXPECT_EQ(one("42")["error"]["code"], mcp_error::invalid_request);
    EXPECT_EQ(one(R"("ping")")["error"]["code"], mcp_error::invalid_request);
    EXPECT_EQ(one("null")["error"]["code"], mcp_error::invalid_request);
    r = one(R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})");
    EXPECT_EQ(r["error"]["code"], mcp_error::invalid_request);
    EXPECT_TRUE(r["id"].is_null());
    EXPECT_EQ(one(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})")["error"]["code"], mcp_error::invalid_request);
    EXPECT_EQ(one(R"({"jsonrpc":"2.0","id":null,"method":"ping"})")["error"]["code"], mcp_error::invalid_request);
    r = one(R"({"jsonrpc":"1.0","id":7,"method":"ping"})");
    EXPECT_EQ(r["error"]["code"], mcp_error::invalid_request);
    EXPECT_EQ(r["id"], 7);
    EXPECT_EQ(one(R"({"jsonrpc":"2.0","id":7,"method":["ping"]})")["error"]["code"], mcp_error::invalid_request);
    EXPECT_EQ(one(R"({"jsonrpc":"2.0","id":7})")["error"]["code"], mcp_error::invalid_request);
    r = one(R"({"jsonrpc":"2.0","id":"m","method":"resources/list"})");
    EXPECT_EQ(r["error"]["code"], mcp_error::method_not_found);
    EXPECT_EQ(r["id"], "m");
    EXPECT_EQ(one(R"({"jsonrpc":"2.0","id":8,"method":"tools/list","params":[1]})")["error"]["code"], mcp_error::invalid_params);
    EXPECT_EQ(one(std::string(200, '[') + std::string(200, ']'))["error"]["code"], mcp_error::invalid_request);
}

TEST_F(session_fixture, crlf_and_blank_lines) {
    session->handle_line("\r");
    session->handle_line("   ");
    session->handle_line("");
    EXPECT_TRUE(out.messages().empty());
    session->handle_line(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                         "\r");
    EXPECT_EQ(out.response(1)["result"], json::object());
}

TEST_F(session_fixture, tools_list_comes_from_the_registry) {
    json r = request(1, "tools/list")["result"];
    ASSERT_EQ(r["tools"].size(), fake_tools().size());
    EXPECT_EQ(r["tools"][0]["name"], "echo");
    for (const auto& t : r["tools"]) {
        EXPECT_EQ(t["inputSchema"]["type"], "object");
        EXPECT_TRUE(t.contains("annotations"));
    }
    EXPECT_EQ(r["tools"][0]["inputSchema"]["required"], json::array({"text"}));
    EXPECT_FALSE(r.contains("resultType"));  // legacy results carry no modern fields
    EXPECT_FALSE(r.contains("nextCursor"));
    EXPECT_EQ(request(2, "tools/list")["result"], r);  // deterministic
    // No cursor is ever handed out, so any cursor is an invalid one.
    json bad = request(3, "tools/list", {{"cursor", "x"}});
    EXPECT_EQ(error_code(bad), mcp_error::invalid_params);
    EXPECT_NE(bad["error"]["message"].get<std::string>().find("cursor"), std::string::npos);
    EXPECT_EQ(request(4, "tools/list", {{"cursor", nullptr}})["result"], r);
}

TEST_F(session_fixture, a_line_that_does_not_parse_is_answered_with_its_id) {
    auto one = [&](std::string_view line) {
        out.clear();
        session->handle_line(line);
        EXPECT_TRUE(out.wait_count(1)) << line;
        return out.messages().at(0);
    };
    json r = one("{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"ping\",\"x\":\"bad\xff\"}");
    EXPECT_EQ(r["id"], 21);
    EXPECT_EQ(r["error"]["code"], mcp_error::parse_error);
    EXPECT_NE(r["error"]["message"].get<std::string>().find("not valid UTF-8"), std::string::npos) << r;
    r = one(R"({"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"echo","arguments":{"text":"a","n":1e999}}})");
    EXPECT_EQ(r["id"], "big");
    EXPECT_EQ(r["error"]["code"], mcp_error::parse_error);
    EXPECT_NE(r["error"]["message"].get<std::string>().find("out of range"), std::string::npos) << r;
    r = one(R"({"jsonrpc":"2.0","id":22,"method":"ping",})");
    EXPECT_EQ(r["id"], 22);
    EXPECT_EQ(r["error"]["code"], mcp_error::parse_error);
    r = one("{\"jsonrpc\":\"2.0\",\"id\":23,\"params\":" + std::string(200, '[') + std::string(200, ']') + "}");
    EXPECT_EQ(r["id"], 23);
    EXPECT_EQ(r["error"]["code"], mcp_error::invalid_request);
}

TEST_F(session_fixture, a_lone_surrogate_escape_is_read_as_the_replacement_character) {
    // What JavaScript sends for a string cut inside an emoji: served, not refused.
    session->handle_line(R"({"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"echo","arguments":{"text":"cut \ud83d"}}})");
    json r = out.response(31);
    ASSERT_TRUE(r.contains("result")) << r;
    EXPECT_EQ(r["result"]["structuredContent"]["text"], "cut \xEF\xBF\xBD");
    session->handle_line(R"({"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\ud83d\ude00"}}})");
    EXPECT_EQ(out.response(32)["result"]["structuredContent"]["text"], "\xF0\x9F\x98\x80");  // a pair stays the emoji
}

TEST_F(session_fixture, an_oversized_line_is_answered_with_the_id_its_start_holds) {
    session->handle_oversized_line(R"({"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"arguments":{"text":"xxxx)",
                                   mcp_max_line_bytes);
    json r = out.response("huge");
    ASSERT_TRUE(r.contains("error")) << r;
    EXPECT_EQ(r["error"]["code"], mcp_error::invalid_request);
    EXPECT_NE(r["error"]["message"].get<std::string>().find("16 MiB (16777216 bytes)"), std::string::npos) << r;
}

TEST_F(session_fixture, a_string_no_parameter_takes_is_refused_before_parsing_with_its_id) {
    const std::string huge(10u << 20, 'x');
    // An unknown tool's name, a value past every maxLength, a parameter's name, a list item, a
    // protocol version, a cursor: each answered -32602 with its id, in a few hundred bytes.
    const std::vector<json> answers = {
        call(41, huge, json::object()),
        call(42, "echo", {{"text", huge}}),
        call(43, "echo", {{"text", "a"}, {huge, 1}}),
        call(44, "echo", {{"text", "a"}, {"n", json::array({huge})}}),
        request(45, "ping", {{"_meta", {{"io.modelcontextprotocol/protocolVersion", huge}}}}),
        request(46, "tools/list", {{"cursor", huge}}),
    };
    int id = 41;
    for (const auto& r : answers) {
        EXPECT_EQ(r["id"], id++);
        EXPECT_EQ(error_code(r), mcp_error::invalid_params) << r.dump().substr(0, 300);
        EXPECT_LT(r.dump().size(), 600u) << r.dump().substr(0, 300);
    }
    EXPECT_NE(answers[1]["error"]["message"].get<std::string>().find("10485760 bytes long"), std::string::npos);
}

TEST_F(session_fixture, errors_echo_at_most_200_bytes_of_a_value) {
    // Under the line's own bound, validation says what is wrong and cuts the value it shows.
    const std::string name(3000, 'k');
    json r = call(51, "echo", {{"text", "a"}, {name, 1}});
    std::string text = r["result"]["content"][0]["text"];
    EXPECT_NE(text.find("unknown parameter"), std::string::npos) << text;
    EXPECT_EQ(text.find(std::string(201, 'k')), std::string::npos) << text;
    EXPECT_LT(text.size(), 600u);
    r = call(52, "echo", {{"text", "a"}, {"n", std::string(3000, 'z')}});
    text = r["result"]["content"][0]["text"];
    EXPECT_NE(text.find("must be an integer"), std::string::npos) << text;
    EXPECT_LT(text.size(), 400u) << text;
    r = call(53, std::string(3000, 't'), json::object());  // an unknown tool
    EXPECT_EQ(error_code(r), mcp_error::invalid_params);
    EXPECT_LT(r["error"]["message"].get<std::string>().size(), 300u);
}

TEST_F(session_fixture, tools_call_result_shapes) {
    json r = call(1, "echo", {{"text", "hi"}, {"n", 3}})["result"];
    json own = r["structuredContent"];
    EXPECT_EQ(own["schema_version"], "1.1");  // every result is stamped (util/schema_version.h)
    EXPECT_TRUE(own["hotkernel_version"].is_string());
    own.erase("schema_version");
    own.erase("hotkernel_version");
    EXPECT_EQ(own, (json{{"text", "hi"}, {"n", 3}}));
    // The text block is a short summary of it, not the JSON again (the stamp left out).
    EXPECT_EQ(r["content"][0]["text"], "text: hi\nn: 3\n");
    EXPECT_EQ(r["content"][0]["type"], "text");
    EXPECT_FALSE(r.contains("isError"));

    r = call(2, "echo", {{"text", "hi"}})["result"];  // default filled in
    EXPECT_EQ(r["structuredContent"]["n"], 1);

    // Bad argument values are tool errors the model can fix, not protocol errors.
    for (const json& bad : {json::object(), json{{"text", 5}}, json{{"text", "a"}, {"n", -1}}, json{{"text", "a"}, {"txt", "b"}}}) {
        r = call(bad.dump(), "echo", bad);
        ASSERT_TRUE(r.contains("result")) << r;
        EXPECT_EQ(r["result"]["isError"], true) << bad;
        EXPECT_FALSE(r["result"].contains("structuredContent"));
        EXPECT_FALSE(r["result"]["content"][0]["text"].get<std::string>().empty());
    }
    r = call(3, "fail", json::object())["result"];
    EXPECT_EQ(r["isError"], true);
    EXPECT_EQ(r["content"][0]["text"], "no GPU found; run on a machine with a driver");

    EXPECT_EQ(error_code(call(4, "crash", json::object())), mcp_error::internal_error);
    EXPECT_EQ(error_code(call(5, "not_object", json::object())), mcp_error::internal_error);
}

TEST_F(session_fixture, answers_speak_mcp_words_and_the_text_is_the_tool_s_summary) {
    json r = call(1, "summed", {{"text", "hi"}})["result"];
    EXPECT_EQ(r["content"][0]["text"], "said hi 'n'\n");
    EXPECT_EQ(r["structuredContent"]["text"], "hi");
    r = call(2, "guide", json::object())["result"];
    EXPECT_EQ(r["isError"], true);
    EXPECT_EQ(r["content"][0]["text"], "pass gpu: \"NVIDIA H200\", then bench {\"script\":\"k.py\"}");
    r = call(3, "echo", {{"text", "a"}, {"n", -1}})["result"];
    const std::string e = r["content"][0]["text"].get<std::string>();
    EXPECT_NE(e.find("parameter 'n' must be >= 0"), std::string::npos) << e;
    EXPECT_EQ(e.find("--"), std::string::npos) << e;
}

TEST_F(session_fixture, tools_call_protocol_errors) {
    json r = call(1, "nope", json::object());
    EXPECT_EQ(error_code(r), mcp_error::invalid_params);
    EXPECT_NE(r["error"]["message"].get<std::string>().find("Unknown tool: nope"), std::string::npos);
    r = call(2, "ecko", json::object());
    EXPECT_NE(r["error"]["message"].get<std::string>().find("did you mean 'echo'"), std::string::npos);
    EXPECT_EQ(error_code(call(3, "echo", json::array({1}))), mcp_error::invalid_params);
    EXPECT_EQ(error_code(call(4, "echo", "text")), mcp_error::invalid_params);
    EXPECT_EQ(error_code(request(5, "tools/call", {{"arguments", json::object()}})), mcp_error::invalid_params);
    EXPECT_EQ(error_code(request(6, "tools/call", {{"name", 7}})), mcp_error::invalid_params);
    EXPECT_EQ(error_code(request(7, "tools/call")), mcp_error::invalid_params);
}

TEST_F(session_fixture, modern_requests_are_served_statelessly) {
    const json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                       {"io.modelcontextprotocol/clientCapabilities", json::object()}};
    json r = request("d", "server/discover", {{"_meta", meta}})["result"];
    EXPECT_EQ(r["resultType"], "complete");
    EXPECT_EQ(r["supportedVersions"], json::array({"2026-07-28"}));
    EXPECT_TRUE(r["capabilities"].contains("tools"));
    EXPECT_EQ(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "hotkernel");

    r = request(1, "tools/list", {{"_meta", meta}})["result"];
    EXPECT_EQ(r["resultType"], "complete");
    EXPECT_GT(r["ttlMs"].get<long long>(), 0);
    EXPECT_EQ(r["cacheScope"], "public");
    EXPECT_EQ(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "hotkernel");
    EXPECT_EQ(r["tools"].size(), fake_tools().size());

    r = call(2, "echo", {{"text", "x"}}, meta)["result"];
    EXPECT_EQ(r["resultType"], "complete");
    EXPECT_EQ(r["structuredContent"]["text"], "x");
    r = call(3, "fail", json::object(), meta)["result"];
    EXPECT_EQ(r["resultType"], "complete");
    EXPECT_EQ(r["isError"], true);

    EXPECT_EQ(error_code(request(4, "logging/setLevel", {{"level", "info"}, {"_meta", meta}})), mcp_error::method_not_found);
    EXPECT_EQ(session->negotiated_version(), "");  // no initialize needed
}

TEST_F(session_fixture, unsupported_modern_version_is_32022) {
    for (const json& v : {json("2099-01-01"), json("2025-11-25"), json(7)}) {
        json r = request(v.dump(), "tools/list", {{"_meta", {{"io.modelcontextprotocol/protocolVersion", v}}}});
        EXPECT_EQ(error_code(r), mcp_error::unsupported_protocol_version) << v;
        EXPECT_EQ(r["error"]["data"]["requested"], v);
        EXPECT_EQ(r["error"]["data"]["supported"][0], "2026-07-28");
    }
}

TEST_F(session_fixture, progress_echoes_token_is_increasing_throttled_and_never_terminal) {
    for (const json& token : {json("tok-1"), json(7)}) {
        out.clear();
        json r = call(100, "wait", {{"steps", 40}, {"step_ms", 10}}, {{"progressToken", token}});
        ASSERT_EQ(r["result"]["structuredContent"]["steps_done"], 40);
        auto progress = out.progress_for(token);
        ASSERT_GE(progress.size(), 2u) << token;
        EXPECT_LE(progress.size(), 40u * 10 / 50 + 2);  // ~one per 50 ms interval
        double last = -1;
        for (const auto& p : progress) {
            EXPECT_EQ(p["params"]["progressToken"], token);  // verbatim, same JSON type
            EXPECT_EQ(p["params"]["progressToken"].is_string(), token.is_string());
            const double v = p["params"]["progress"];
            EXPECT_GT(v, last);
            EXPECT_LT(v, p["params"]["total"].get<double>());  // never progress == total
            last = v;
        }
        // Nothing after the result.
        const auto all = out.messages();
        EXPECT_TRUE(all.back().contains("result")) << all.back();
    }
    out.clear();
    call(101, "wait", {{"steps", 10}, {"step_ms", 5}});  // no token: no progress at all
    EXPECT_EQ(out.messages().size(), 1u);
}

TEST_F(session_fixture, cancellation_suppresses_result_and_progress) {
    session->handle_line(R"({"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"wait","arguments":{"steps":100000,"step_ms":5},"_meta":{"progressToken":"pt"}}})");
    // ping is answered while the call runs
    EXPECT_EQ(request("p1", "ping")["result"], json::object());
    EXPECT_EQ(session->running_calls(), 1u);
    std::this_thread::sleep_for(150ms);
    session->handle_line(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"test"}})");
    const std::size_t after_cancel = out.messages().size();
    ASSERT_TRUE(session->wait_idle(5s));
    std::this_thread::sleep_for(100ms);
    const auto all = out.messages();
    EXPECT_EQ(all.size(), after_cancel) << "a message was written after notifications/cancelled";
    for (const auto& m : all) EXPECT_FALSE(m.contains("id") && m["id"] == "c1") << m;
    EXPECT_FALSE(out.progress_for("pt").empty());  // it did report progress before
    EXPECT_EQ(request("p2", "ping")["result"], json::object());
}

TEST_F(session_fixture, cancel_matches_ids_by_json_type) {
    session->handle_line(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{"steps":30,"step_ms":10}}})");
    session->handle_line(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"2"}})");
    json r = out.response(2);
    EXPECT_EQ(r["result"]["structuredContent"]["steps_done"], 30);  // "2" is not 2
}

TEST_F(session_fixture, cancellation_kills_the_child_process) {
    g_child_cancelled = false;
    const auto t0 = std::chrono::steady_clock::now();
    session->handle_line(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"child","arguments":{}}})");
    std::this_thread::sleep_for(300ms);
    session->handle_line(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}})");
    ASSERT_TRUE(session->wait_idle(10s));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    EXPECT_TRUE(g_child_cancelled.load());
    EXPECT_TRUE(out.messages().empty());
}

TEST_F(session_fixture, duplicate_running_id_is_rejected) {
    session->handle_line(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{"steps":30,"step_ms":10}}})");
    session->handle_line(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}})");
    ASSERT_TRUE(out.wait_count(1));
    EXPECT_EQ(out.messages()[0]["error"]["code"], mcp_error::invalid_request);
    ASSERT_TRUE(session->wait_idle(5s));
    EXPECT_EQ(out.messages().back()["result"]["structuredContent"]["steps_done"], 30);
    // Once finished, the id may be used again.
    out.clear();
    EXPECT_EQ(call(1, "echo", {{"text", "again"}})["result"]["structuredContent"]["text"], "again");
}

TEST_F(session_fixture, answered_id_can_be_reused_at_once) {
    // A client may reuse an id the moment its result arrives, before the worker has exited.
    for (int i = 0; i < 200; ++i) {
        out.clear();
        json r = call(5, "echo", {{"text", std::to_string(i)}});
        ASSERT_TRUE(r.contains("result")) << i << ": " << r;
        ASSERT_EQ(r["result"]["structuredContent"]["text"], std::to_string(i));
    }
}

TEST_F(session_fixture, shutdown_cancels_running_calls_silently) {
    session->handle_line(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{"steps":100000,"step_ms":5}}})");
    std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(session->shutdown(5s));
    EXPECT_EQ(session->running_calls(), 0u);
    EXPECT_TRUE(out.messages().empty());
}

TEST_F(session_fixture, disabled_calls_never_run_a_handler) {
    make(/*allow_calls=*/false);
    g_handler_runs = 0;
    EXPECT_EQ(error_code(call(1, "echo", {{"text", "x"}})), mcp_error::internal_error);
    EXPECT_EQ(call(2, "echo", json::object())["result"]["isError"], true);  // validation still runs
    EXPECT_EQ(error_code(call(3, "nope", json::object())), mcp_error::invalid_params);
    EXPECT_EQ(g_handler_runs.load(), 0);
    EXPECT_EQ(session->running_calls(), 0u);
}

TEST_F(session_fixture, survives_a_thousand_garbage_lines) {
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int> len(0, 300), byte(0, 255), pick(0, 5);
    const std::vector<std::string> pieces = {"{", "}", "[", "]", "\"", ":", ",", "\"jsonrpc\"", "\"2.0\"",
                                             "\"id\"", "\"method\"", "\"tools/call\"", "\"params\"", "null", "1e999"};
    for (int i = 0; i < 1000; ++i) {
        std::string line;
        const int n = len(rng);
        for (int k = 0; k < n; ++k) {
            if (pick(rng) == 0) line += pieces[static_cast<std::size_t>(byte(rng)) % pieces.size()];
            else line += static_cast<char>(byte(rng) == '\n' ? ' ' : byte(rng));
        }
        session->handle_line(line);
    }
    out.clear();
    EXPECT_EQ(request("alive", "ping")["result"], json::object());
    EXPECT_EQ(call("c", "echo", {{"text", "ok"}})["result"]["structuredContent"]["text"], "ok");
}

TEST(mcp_server, serves_streams_until_eof) {
    std::istringstream in(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}})"
        "\r\n"
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
        "\n"
        "garbage\n"
        R"({"jsonrpc":"2.0","id":2,"method":"ping"})");  // last line without newline still counts
    std::ostringstream out;
    EXPECT_EQ(run_mcp_server(in, out, mcp_options{}), 0);
    std::istringstream lines(out.str());
    std::vector<json> msgs;
    for (std::string l; std::getline(lines, l);) msgs.push_back(json::parse(l));
    ASSERT_EQ(msgs.size(), 3u) << out.str();
    EXPECT_EQ(msgs[0]["result"]["protocolVersion"], "2025-06-18");
    EXPECT_EQ(msgs[1]["error"]["code"], mcp_error::parse_error);
    EXPECT_EQ(msgs[2]["id"], 2);
}
