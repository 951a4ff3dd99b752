// The harness's result channel: only one message carrying this run's nonce is accepted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "measure/parent_clock.h"
#include "measure/trusted_launcher.h"
#include "python/interpreter.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

TEST(TrustedChannel, AcceptsExactlyOneMessageWithTheNonceAndStripsIt) {
    json j = accept_channel("{\"ms\": 1.5, \"ok\": true, \"nonce\": \"abc\"}\n", "abc");
    EXPECT_EQ(j["ms"], 1.5);
    EXPECT_FALSE(j.contains("nonce"));
}

TEST(TrustedChannel, EmptyChannelGivesNoLine) { EXPECT_TRUE(accept_channel("", "abc").is_null()); }

TEST(TrustedChannel, WrongNonceIsInvalid) {
    json j = accept_channel("{\"ms\": 0.001, \"ok\": true, \"nonce\": \"guess\"}\n", "abc");
    EXPECT_EQ(j["status"], "invalid");
    EXPECT_EQ(j["ok"], false);
}

TEST(TrustedChannel, ASecondMessageEvenWithTheNonceIsInvalid) {
    // A forged line plus the harness's own: something else wrote to the channel.
    std::string two = "{\"ms\": 0.001, \"ok\": true, \"nonce\": \"abc\"}\n{\"ms\": 2.0, \"ok\": true, \"nonce\": \"abc\"}\n";
    json j = accept_channel(two, "abc");
    EXPECT_EQ(j["status"], "invalid");
    EXPECT_NE(j["reason"].get<std::string>().find("2 message"), std::string::npos);
}

TEST(TrustedChannel, GarbageIsInvalidNotACrash) {
    json j = accept_channel(std::string("\xff\xfe{not json\n", 12), "abc");
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

TEST(RunEnd, AChannelResultStandsOnItsOwnAStdoutLineOnlyWhenItSaysOkFalse) {
    // One rule for how a run ended (measure.h run_failed).
    run_answer a;
    a.process.exit_code = 1;
    a.source = line_source::channel;
    a.line = check_run_line(json{{"ms", 1.0}, {"ok", true}, {"status", "ok"}});
    EXPECT_FALSE(run_failed(a));  // the harness's line came; how its exit went says nothing more
    a.line = run_line{};
    EXPECT_TRUE(run_failed(a));   // no line from the harness, and it exited 1
    a.process.exit_code = 0;
    EXPECT_FALSE(run_failed(a));  // exited 0 with no line: not a failed exit (a missing result, said apart)
    a.source = line_source::stdout_text;
    a.process.exit_code = 1;
    a.line = parse_run_line("{\"ms\": 1.0, \"ok\": true}\n");
    EXPECT_TRUE(run_failed(a));   // a script that claims ok and exits 1 failed
    a.line = parse_run_line("{\"ms\": 1.0, \"ok\": false}\n");
    EXPECT_FALSE(run_failed(a));  // a failed check may exit 1: kept as a failed check
}

TEST(SampledChecks, ACpuResultThatCheckedFewerCallsThanTheHarnessAlwaysDoesIsInvalid) {
    json ok{{"status", "ok"}, {"ok", true}, {"timer", "cpu"},
            {"sampled_checks", {{"calls_per_sample", 48}, {"checked_per_sample", 12}, {"spot_per_sample", 2}}}};
    json line = ok;
    check_sampled_calls(line);
    EXPECT_EQ(line["status"], "ok");
    line = ok;
    line["sampled_checks"]["checked_per_sample"] = 0;  // the harness's settings were changed under it
    check_sampled_calls(line);
    EXPECT_EQ(line["status"], "invalid");
    EXPECT_NE(line["reason"].get<std::string>().find("checked 0 of its 48 calls"), std::string::npos) << line["reason"];
    line = ok;
    line.erase("sampled_checks");
    check_sampled_calls(line);
    EXPECT_EQ(line["status"], "invalid");
    json two{{"status", "ok"}, {"ok", true}, {"workloads", json::array({ok, ok})}};
    two["workloads"][0]["name"] = "M=1";
    two["workloads"][1]["name"] = "M=16";
    two["workloads"][1]["sampled_checks"]["spot_per_sample"] = 0;
    check_sampled_calls(two);
    EXPECT_EQ(two["workloads"][0]["status"], "ok");
    EXPECT_EQ(two["workloads"][1]["status"], "invalid");
    EXPECT_EQ(two["status"], "invalid");  // the run's status restated from its workloads'
    json gpu{{"status", "ok"}, {"timer", "cupti"}};
    check_sampled_calls(gpu);  // a GPU sample checks its replays another way
    EXPECT_EQ(gpu["status"], "ok");
}

TEST(DiedInCopy, ARunKilledInsideACopysPauseIsInvalidAndSaysSo) {
    parent_clock_log seen;
    seen.ended_in_copy = true;
    const json j = died_in_copy_line(11, seen);
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["status"], "invalid");
    EXPECT_EQ(j["ok"], false);
    EXPECT_EQ(j["by_parent"], true);
    const std::string why = j["reason"].get<std::string>();
    EXPECT_NE(why.find("signal 11 (SIGSEGV)"), std::string::npos) << why;
    EXPECT_NE(why.find("copied an output"), std::string::npos) << why;
}

TEST(DiedInCopy, OtherDeathsStayTheErrorsTheyWere) {
    parent_clock_log seen;
    EXPECT_TRUE(died_in_copy_line(11, seen).is_null());  // killed elsewhere: a crash of the kernel's own
    seen.ended_in_copy = true;
    EXPECT_TRUE(died_in_copy_line(0, seen).is_null());   // exited: no fault
}
