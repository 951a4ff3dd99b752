// The trusted runner's result channel: only one message carrying this run's nonce is accepted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "measure/trusted_launcher.h"
#include "python/interpreter.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

TEST(TrustedChannel, AcceptsExactlyOneMessageWithTheNonceAndStripsIt) {
    std::string line = accept_channel("{\"ms\": 1.5, \"ok\": true, \"nonce\": \"abc\"}\n", "abc");
    json j = json::parse(line);
    EXPECT_EQ(j["ms"], 1.5);
    EXPECT_FALSE(j.contains("nonce"));
}

TEST(TrustedChannel, EmptyChannelGivesNoLine) { EXPECT_EQ(accept_channel("", "abc"), ""); }

TEST(TrustedChannel, WrongNonceIsInvalid) {
    json j = json::parse(accept_channel("{\"ms\": 0.001, \"ok\": true, \"nonce\": \"guess\"}\n", "abc"));
    EXPECT_EQ(j["status"], "invalid");
    EXPECT_EQ(j["ok"], false);
}

TEST(TrustedChannel, ASecondMessageEvenWithTheNonceIsInvalid) {
    // A forged line plus the harness's own: something else wrote to the channel.
    std::string two = "{\"ms\": 0.001, \"ok\": true, \"nonce\": \"abc\"}\n{\"ms\": 2.0, \"ok\": true, \"nonce\": \"abc\"}\n";
    json j = json::parse(accept_channel(two, "abc"));
    EXPECT_EQ(j["status"], "invalid");
    EXPECT_NE(j["reason"].get<std::string>().find("2 message"), std::string::npos);
}

TEST(TrustedChannel, GarbageIsInvalidNotACrash) {
    json j = json::parse(accept_channel(std::string("\xff\xfe{not json\n", 12), "abc"));
    EXPECT_EQ(j["status"], "invalid");
}

TEST(VendoredContract, SameEditedStaleMissing) {
    fs::path dir = make_temp_dir("hk-vendored-");
    fs::path script = dir / "t_baseline.py";
    std::ofstream(script) << "import hotkernel_contract as hk\nTARGET = {\"name\": \"t\"}\n";
    EXPECT_TRUE(is_protocol3_target(script));
    EXPECT_EQ(inspect_vendored_contract(script).status, "missing");
    EXPECT_EQ(inspect_vendored_contract(script).warning().value().id, finding_id::vendored_contract_missing);
    std::string ours(embedded_python("hotkernel_contract.py"));
    std::ofstream(dir / "hotkernel_contract.py", std::ios::binary) << ours;
    EXPECT_EQ(inspect_vendored_contract(script).status, "same");
    EXPECT_FALSE(inspect_vendored_contract(script).warning().has_value());
    std::ofstream(dir / "hotkernel_contract.py", std::ios::binary) << ours << "\n# edited\n";
    auto edited = inspect_vendored_contract(script);
    EXPECT_EQ(edited.status, "edited");
    ASSERT_TRUE(edited.warning().has_value());
    EXPECT_EQ(edited.warning()->id, finding_id::vendored_contract_differs);
    EXPECT_NE(edited.warning()->message.find("vendored hotkernel_contract.py differs from this binary's"),
              std::string::npos);
    EXPECT_NE(edited.warning()->message.find("binary's copy"), std::string::npos);
    std::ofstream(dir / "hotkernel_contract.py", std::ios::binary) << "PROTOCOL = 2\n";
    auto stale = inspect_vendored_contract(script);
    EXPECT_EQ(stale.status, "stale");
    EXPECT_EQ(stale.protocol, 2);
    ASSERT_TRUE(stale.warning().has_value());
    EXPECT_NE(stale.warning()->message.find("protocol 2"), std::string::npos);
    fs::remove_all(dir);
}

TEST(VendoredContract, PlainScriptIsNotAProtocol3Target) {
    fs::path dir = make_temp_dir("hk-plain-");
    fs::path script = dir / "plain.py";
    std::ofstream(script) << "print('{\"ms\": 1}')\n";
    EXPECT_FALSE(is_protocol3_target(script));
    EXPECT_FALSE(is_protocol3_target(dir / "absent.py"));
    fs::remove_all(dir);
}

TEST(HarnessExit, ZeroForAResultOneOtherwiseAsTheHarnessExits) {
    EXPECT_EQ(harness_exit_code(R"({"status": "ok", "ms": 1})"), 0);
    EXPECT_EQ(harness_exit_code(R"({"status": "incorrect"})"), 0);
    EXPECT_EQ(harness_exit_code(R"({"status": "invalid"})"), 0);
    EXPECT_EQ(harness_exit_code(R"({"status": "error"})"), 1);
    EXPECT_EQ(harness_exit_code(""), 1);
    EXPECT_EQ(harness_exit_code("{not json"), 1);
    // The harness's own rule (hotkernel_runner.py main) names the same three statuses.
    EXPECT_NE(embedded_python("hotkernel_runner.py").find(R"(EXIT_ZERO_STATUSES = ("ok", "incorrect", "invalid"))"),
              std::string::npos);
}
