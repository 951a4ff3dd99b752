// The C++ half of the fork server's protocol against the recorded transcript (the Python half
// is replayed against the same file in tests/python/test_forkserver_exit.py).
#include <gtest/gtest.h>

#include <fstream>

#include "process/fork_protocol.h"
#include "util/strings.h"

using namespace hotkernel;

namespace {
std::vector<json> transcript() {
    std::ifstream in(std::string(HOTKERNEL_FIXTURES) + "/fork_protocol/transcript.jsonl");
    std::vector<json> out;
    for (std::string line; std::getline(in, line);)
        if (!trim(line).empty()) out.push_back(json::parse(line));
    return out;
}
}  // namespace

TEST(fork_protocol, encodes_a_spec_as_the_recorded_request) {
    const auto t = transcript();
    ASSERT_GE(t.size(), 2u);
    const json& js = t[0]["spec"];
    process_spec spec;
    spec.argv = js["argv"].get<std::vector<std::string>>();
    spec.env_set = js["env_set"].get<std::map<std::string, std::string>>();
    spec.env_unset = js["env_unset"].get<std::vector<std::string>>();
    spec.stdin_data = js["stdin_data"];
    spec.result_channel = js["result_channel"];
    spec.timeout_s = js["timeout_s"];
    spec.kill_grace_s = js["kill_grace_s"];
    spec.max_capture_bytes = js["max_capture_bytes"];
    spec.closes_before_exit = js["closes_before_exit"];
    EXPECT_EQ(encode_fork_request(1, spec, js["cwd"]), t[0]["line"]);
    const std::map<std::string, std::string> env{{"A", "1"}};
    EXPECT_EQ(encode_fork_request(1, spec, js["cwd"], &env)["env_full"], json(env));
}

TEST(fork_protocol, decodes_the_recorded_answer_byte_for_byte) {
    const auto t = transcript();
    ASSERT_GE(t.size(), 2u);
    const process_result r = decode_fork_done(t[1]["line"], 9.0);
    const json& want = t[1]["result"];
    EXPECT_EQ(r.exit_code, want["exit_code"].get<int>());
    EXPECT_EQ(r.term_signal, want["term_signal"].get<int>());
    EXPECT_EQ(r.timed_out, want["timed_out"].get<bool>());
    EXPECT_EQ(r.cancelled, want["cancelled"].get<bool>());
    EXPECT_EQ(r.exit_pending, want["exit_pending"].get<bool>());
    EXPECT_DOUBLE_EQ(r.wall_s, want["wall_s"].get<double>());
    EXPECT_EQ(r.stdout_text, want["stdout_text"].get<std::string>());
    EXPECT_EQ(r.stderr_text, want["stderr_text"].get<std::string>());
    EXPECT_EQ(r.channel_text, want["channel_text"].get<std::string>());
    EXPECT_TRUE(r.strays.empty());
}

TEST(fork_protocol, an_answer_given_while_the_child_exits_leaves_its_status_to_the_launcher) {
    const process_result r = decode_fork_done(json{{"event", "done"}, {"id", 2}, {"exiting", true}, {"exit_code", nullptr},
                                                   {"strays", {"pid 7: sleep 100"}}},
                                              1.5);
    EXPECT_TRUE(r.exit_pending);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_DOUBLE_EQ(r.wall_s, 1.5);
    EXPECT_EQ(r.strays, (std::vector<std::string>{"pid 7: sleep 100"}));
}

TEST(fork_protocol, a_cancelled_run_is_asked_for_by_id_and_decodes_as_cancelled) {
    EXPECT_EQ(encode_fork_cancel(3), (json{{"op", "cancel"}, {"id", 3}}));
    const process_result r = decode_fork_done(
        json{{"event", "done"}, {"id", 3}, {"cancelled", true}, {"exit_code", -1}, {"signal", 15}}, 0.5);
    EXPECT_TRUE(r.cancelled);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.term_signal, 0);  // the SIGTERM was ours, as for a fresh process cancelled
}

TEST(fork_protocol, every_recorded_answer_decodes_as_what_it_is) {
    std::size_t checked = 0;
    for (const json& entry : transcript()) {
        if (entry["to"] != "client" || !entry.contains("answer")) continue;
        const fork_answer a = decode_fork_answer(dump_line(entry["line"]));
        const json& want = entry["answer"];
        const std::string what = want["what"];
        EXPECT_EQ(a.what, what == "ready" ? fork_answer::kind::ready : what == "refused" ? fork_answer::kind::refused
                                                                      : fork_answer::kind::pong)
            << what;
        if (want.contains("forkable")) EXPECT_EQ(a.forkable, want["forkable"].get<bool>()) << what;
        if (want.contains("id")) EXPECT_FALSE(a.id.has_value()) << what;  // a bad request line answers no run
        ++checked;
    }
    EXPECT_EQ(checked, 3u);
    EXPECT_EQ(decode_fork_answer("not json").what, fork_answer::kind::unreadable);
    EXPECT_EQ(decode_fork_answer(R"({"event": "done", "id": 4})").id, 4u);
    EXPECT_EQ(decode_fork_answer(R"({"event": "surprise"})").what, fork_answer::kind::other);
}
