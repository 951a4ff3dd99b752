#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "nvidia/profiled_target.h"
#include "python/interpreter.h"
#include "scaffold/target_spec.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {
/// The string value of `NAME = "..."` at the start of a line of the embedded contract.
std::string contract_string(const std::string& name) {
    const std::string text(embedded_python("hotkernel_contract.py"));
    std::smatch m;
    const std::regex re("(?:^|\n)" + name + " = \"([^\"]*)\"");
    return std::regex_search(text, m, re) ? m[1].str() : std::string("<missing>");
}
}  // namespace

TEST(profiled_target, names_match_the_embedded_contract) {
    // The tools and the contract must agree on the variable, the range and the stage lines.
    EXPECT_EQ(contract_string("PROFILE_ENV"), profile_mode_env);
    EXPECT_EQ(contract_string("PROFILE_RANGE"), profile_mode_range);
    EXPECT_EQ(contract_string("PROFILE_STAGE_PREFIX"), profile_stage_prefix);
    EXPECT_EQ(contract_string("PROFILE_WORKLOAD_ENV"), workload_env);
    EXPECT_EQ(parse_profile_mode(std::string(embedded_python("hotkernel_contract.py"))), 1);
}

TEST(profiled_target, parse_profile_mode_reads_a_top_level_line_only) {
    EXPECT_EQ(parse_profile_mode("PROTOCOL = 3\nPROFILE_MODE = 2  # comment\n"), 2);
    EXPECT_EQ(parse_profile_mode("PROTOCOL = 3\n"), 0);
    EXPECT_EQ(parse_profile_mode("x = 1\n# PROFILE_MODE = 1\n    PROFILE_MODE = 1\n"), 0);
}

TEST(profiled_target, a_target_script_is_what_new_writes) {
    const json target{{"name", "gelu"}, {"from", "torch.nn.functional:gelu"}, {"shape", {64, 256}}};
    EXPECT_TRUE(is_target_script_text(render_target_script(target, "candidate")));
    EXPECT_TRUE(is_target_script_text(render_target_script(target, "baseline")));
    EXPECT_TRUE(is_target_script_text("from hotkernel_contract import main\nTARGET = {'name': 'x'}\n"));
    EXPECT_FALSE(is_target_script_text("import torch\nTARGET = {'name': 'x'}\n"));  // no contract
    EXPECT_FALSE(is_target_script_text("import hotkernel_contract as hk\nprint(1)\n"));  // no TARGET
    EXPECT_FALSE(is_target_script_text("import hotkernel_contract_extra\nTARGET = {}\n"));
    EXPECT_TRUE(is_target_script_text("import json, hotkernel_contract as hk\nTARGET = {}\n"));  // any import form
}

TEST(profiled_target, find_profiled_target_reads_the_contract_beside_the_script) {
    const fs::path dir = make_temp_dir("hk-profiled-");
    const json target{{"name", "gelu"}, {"from", "torch.nn.functional:gelu"}, {"shape", {64, 256}}};
    write_file_atomic(dir / "gelu_candidate.py", render_target_script(target, "candidate"));
    write_file_atomic(dir / "plain.py", "print(1)\n");

    EXPECT_FALSE(find_profiled_target({"python3", "plain.py"}, dir));
    EXPECT_FALSE(find_profiled_target({"python3", "missing.py"}, dir));
    EXPECT_FALSE(find_profiled_target({"gelu_candidate.py"}, dir));  // argv[0] is the program

    auto none = find_profiled_target({"python3", "-u", "gelu_candidate.py", "--x"}, dir);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->script, dir / "gelu_candidate.py");
    EXPECT_EQ(none->contract, dir / "hotkernel_contract.py");
    EXPECT_EQ(none->profile_mode, 0);  // no contract beside it

    write_file_atomic(dir / "hotkernel_contract.py", "PROTOCOL = 3\n");
    EXPECT_EQ(find_profiled_target({"python3", (dir / "gelu_candidate.py").string()}, "/")->profile_mode, 0);
    write_file_atomic(dir / "hotkernel_contract.py", std::string(embedded_python("hotkernel_contract.py")));
    EXPECT_EQ(find_profiled_target({"python3", "plain.py", "gelu_candidate.py"}, dir)->profile_mode, 1);
    fs::remove_all(dir);
}

TEST(profiled_target, ncu_waiting_for_follows_the_output) {
    EXPECT_EQ(ncu_waiting_for(""), "ncu's start (it had printed nothing yet)");
    std::string out = "==WARNING== Note: Running with unmodified GPU clocks.\n==PROF== Connected to process 638 (/usr/bin/python3)\n";
    EXPECT_EQ(ncu_waiting_for(out), "the command's start (its imports, before any kernel ncu profiles)");
    out += "hotkernel-profile: drawing the inputs\nhotkernel-profile: making 5 profiled call(s) in range hotkernel.candidate\n";
    EXPECT_EQ(ncu_waiting_for(out), "the target's profile mode, making 5 profiled call(s) in range hotkernel.candidate");
    out += "==PROF== Profiling \"vectorized_elementwise_kernel\" - 0: 0%....50%";
    EXPECT_EQ(ncu_waiting_for(out), "ncu's replay of kernel 'vectorized_elementwise_kernel' (each profiled kernel is "
                                    "replayed once per pass)");
    out += "....100% - 9 passes\n";
    EXPECT_EQ(ncu_waiting_for(out), "the command, after ncu profiled kernel 'vectorized_elementwise_kernel'");
    out += "==PROF== Disconnected from process 638\n";
    EXPECT_EQ(ncu_waiting_for(out), "ncu writing its report, after the command ended");
    // A kernel name is cut short.
    const std::string longname(5000, 'k');
    EXPECT_LT(ncu_waiting_for("==PROF== Profiling \"" + longname + "\" - 0: 0%").size(), 300u);
}

TEST(profiled_target, nsys_waiting_for_and_last_stage) {
    EXPECT_EQ(nsys_waiting_for("WARNING: x\n"), "nsys's start (it had printed nothing yet)");
    std::string out = "Collecting data...\n";
    EXPECT_EQ(nsys_waiting_for(out), "the command, traced by nsys");
    out += "hotkernel-profile: making the first call (compilation, autotuning)\n";
    EXPECT_EQ(nsys_waiting_for(out),
              "the target's profile mode, making the first call (compilation, autotuning), traced by nsys");
    EXPECT_EQ(last_profile_stage(out), "making the first call (compilation, autotuning)");
    out += "Generating '/tmp/nsys-report-59bb.qdstrm'\n";
    EXPECT_EQ(nsys_waiting_for(out), "nsys's export of its trace into a report, after the command ended");
    EXPECT_EQ(last_profile_stage("no stages\n"), "");
}
