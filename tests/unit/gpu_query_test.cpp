// query_gpus / query_clock_state over a scripted runner (no driver needed), and the
// calibration-cache reader.
#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <filesystem>

#include "gpu/gpu_query.h"
#include "util/errors.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {

// Replays queued outcomes in order and records every spec it was asked to run.
class scripted_runner final : public process_runner {
public:
    using process_runner::run;
    std::deque<process_result> outcomes;
    std::vector<process_spec> calls;
    process_result run(const process_spec& spec, const cancel_token&) override {
        calls.push_back(spec);
        if (outcomes.empty()) throw std::logic_error("scripted_runner: no outcome left");
        process_result r = outcomes.front();
        outcomes.pop_front();
        return r;
    }
};

process_result exited(int code, std::string out, std::string err = "") {
    process_result r;
    r.exit_code = code;
    r.stdout_text = std::move(out);
    r.stderr_text = std::move(err);
    return r;
}

std::string arg_with(const process_spec& spec, const std::string& prefix) {
    for (const auto& a : spec.argv)
        if (a.rfind(prefix, 0) == 0) return a;
    return {};
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const tool_error& e) {
        return e.what();
    }
    return "<no tool_error>";
}

}  // namespace

TEST(gpu_query, runs_the_documented_query_with_a_timeout) {
    scripted_runner r;
    r.outcomes.push_back(exited(0,
        "0, NVIDIA H200, GPU-28bcde5d-3b3f-a3b6-16f7-2ec19286727c, 580.159.04, 143771, 700.00, 9.0, 1980, Disabled\n"));
    auto gpus = query_gpus(r, cancel_token{});
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(r.calls[0].argv[0], "nvidia-smi");
    EXPECT_EQ(arg_with(r.calls[0], "--query-gpu="),
              "--query-gpu=index,name,uuid,driver_version,memory.total,power.limit,compute_cap,clocks.max.sm,"
              "mig.mode.current");
    EXPECT_EQ(arg_with(r.calls[0], "--format="), "--format=csv,noheader,nounits");
    EXPECT_DOUBLE_EQ(r.calls[0].timeout_s, 10.0);
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_EQ(gpus[0].name, "NVIDIA H200");
    EXPECT_EQ(gpus[0].compute_capability_source, "nvidia-smi");
}

TEST(gpu_query, old_driver_without_compute_cap_takes_it_from_the_table) {
    scripted_runner r;
    r.outcomes.push_back(exited(2, "Field \"compute_cap\" is not a valid field to query.\n\n"));
    r.outcomes.push_back(exited(0, "0, A100-SXM4-40GB, GPU-0000, 470.82.01, 40536, 400.00, 1410, Disabled\n"
                                   "1, NVIDIA RTX A2000, GPU-1111, 470.82.01, 6138, 70.00, 1200, [N/A]\n"));
    auto gpus = query_gpus(r, cancel_token{});
    ASSERT_EQ(r.calls.size(), 2u);
    EXPECT_EQ(arg_with(r.calls[1], "--query-gpu=").find("compute_cap"), std::string::npos);
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_EQ(*gpus[0].compute_capability, "8.0");
    EXPECT_EQ(gpus[0].compute_capability_source, "spec table");
    EXPECT_FALSE(gpus[1].compute_capability.has_value());  // not in the table either
}

TEST(gpu_query, driver_failures_are_tool_errors_with_the_drivers_message) {
    scripted_runner r;
    r.outcomes.push_back(exited(9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                                   "Make sure that the latest NVIDIA driver is installed and running.\n\n"));
    std::string msg = error_of([&] { query_gpus(r, cancel_token{}); });
    EXPECT_NE(msg.find("couldn't communicate with the NVIDIA driver"), std::string::npos) << msg;
    EXPECT_NE(msg.find("exited with status 9"), std::string::npos) << msg;
    EXPECT_NE(msg.find("lsmod"), std::string::npos) << msg;

    r.outcomes.push_back(exited(6, "No devices were found\n"));
    msg = error_of([&] { query_gpus(r, cancel_token{}); });
    EXPECT_NE(msg.find("found no NVIDIA GPU"), std::string::npos) << msg;

    r.outcomes.push_back(exited(2, "Field \"name\" is not a valid field to query.\n"));
    msg = error_of([&] { query_gpus(r, cancel_token{}); });
    EXPECT_NE(msg.find("does not know the nvidia-smi field 'name'"), std::string::npos) << msg;

    process_result hung;
    hung.timed_out = true;
    r.outcomes.push_back(hung);
    msg = error_of([&] { query_gpus(r, cancel_token{}); });
    EXPECT_NE(msg.find("did not answer within 10 s"), std::string::npos) << msg;

    r.outcomes.push_back(exited(0, "garbage without the right field count\n"));
    msg = error_of([&] { query_gpus(r, cancel_token{}); });
    EXPECT_NE(msg.find("could not read nvidia-smi's GPU list"), std::string::npos) << msg;

    process_result missing;
    missing.spawn_failed = true;
    missing.spawn_error = "'nvidia-smi' was not found on PATH or is not executable";
    r.outcomes.push_back(missing);
    msg = error_of([&] { query_gpus(r, cancel_token{}); });
    if (find_executable("nvidia-smi").empty())
        EXPECT_NE(msg.find("no NVIDIA driver found: nvidia-smi is not on PATH"), std::string::npos) << msg;
    else
        EXPECT_NE(msg.find("could not start nvidia-smi"), std::string::npos) << msg;
}

TEST(gpu_query, clock_state_selects_the_gpu_and_falls_back_to_the_old_alias) {
    scripted_runner r;
    r.outcomes.push_back(exited(0, "1, 1755, 1980, 0x0000000000000004, 690.12, 71\n"));
    json s = query_clock_state(r, cancel_token{}, 1);
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(r.calls[0].argv[1], "-i");
    EXPECT_EQ(r.calls[0].argv[2], "1");
    EXPECT_EQ(s["index"], 1);
    EXPECT_EQ(s["sm_clock_mhz"], 1755.0);
    EXPECT_EQ(s["throttled"], true);
    EXPECT_EQ(s["reasons_field"], "clocks_event_reasons.active");

    r.calls.clear();
    r.outcomes.push_back(exited(2, "Field \"clocks_event_reasons.active\" is not a valid field to query.\n\n"));
    r.outcomes.push_back(exited(0, "0, 405, 1980, 0x0000000000000001, 78.45, 36\n"));
    s = query_clock_state(r, cancel_token{}, 0);
    ASSERT_EQ(r.calls.size(), 2u);
    EXPECT_NE(arg_with(r.calls[1], "--query-gpu=").find("clocks_throttle_reasons.active"), std::string::npos);
    EXPECT_EQ(s["reasons_field"], "clocks_throttle_reasons.active");
    EXPECT_EQ(s["clock_event_reasons"], json::array({"gpu_idle"}));
    EXPECT_EQ(s["throttled"], false);

    r.outcomes.push_back(exited(0, "0, 405, 1980, 0x0000000000000001, 78.45, 36\n"));
    std::string msg = error_of([&] { query_clock_state(r, cancel_token{}, 3); });
    EXPECT_NE(msg.find("no GPU with index 3"), std::string::npos) << msg;
}

TEST(gpu_query, calibration_cache) {
    fs::path dir = make_temp_dir("hk-calib");
    const char* old = std::getenv("XDG_CACHE_HOME");
    std::string saved = old ? old : "";
    ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
    const std::string uuid = "GPU-28bcde5d-3b3f-a3b6-16f7-2ec19286727c";
    EXPECT_EQ(calibration_path(uuid), dir / "hotkernel" / "calibration" / (uuid + ".json"));
    EXPECT_FALSE(read_calibration(uuid).has_value());
    EXPECT_FALSE(read_calibration("../../etc/passwd").has_value());
    EXPECT_FALSE(read_calibration("").has_value());

    write_file_atomic(calibration_path(uuid),
                      R"({"mem_gbs": 4250.5, "bf16_tflops": 720, "measured_at": "2026-11-30T02:35:17Z", "method": "copy"})");
    auto cal = read_calibration(uuid);
    ASSERT_TRUE(cal.has_value());
    EXPECT_DOUBLE_EQ((*cal)["mem_gbs"].get<double>(), 4250.5);

    // Which GPU the runs use: the first of CUDA_VISIBLE_DEVICES, by index or uuid prefix.
    gpu_record g;
    g.uuid = uuid;
    const char* old_cvd = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string saved_cvd = old_cvd ? old_cvd : "";
    ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
    gpu_record g0 = g, g1;
    g0.index = 0;
    g1.index = 1;
    g1.uuid = "GPU-other";
    EXPECT_EQ(visible_gpu({g0, g1})->uuid, g1.uuid);
    ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
    EXPECT_FALSE(visible_gpu({g0, g1}).has_value());
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    EXPECT_EQ(visible_gpu({g0, g1})->uuid, g0.uuid);
    if (old_cvd) ::setenv("CUDA_VISIBLE_DEVICES", saved_cvd.c_str(), 1);

    write_file_atomic(calibration_path(uuid), "{not json");
    EXPECT_NE(error_of([&] { read_calibration(uuid); }).find("not valid JSON"), std::string::npos);
    write_file_atomic(calibration_path(uuid), R"({"mem_gbs": -1})");
    EXPECT_NE(error_of([&] { read_calibration(uuid); }).find("mem_gbs"), std::string::npos);

    if (old) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
    else ::unsetenv("XDG_CACHE_HOME");
    fs::remove_all(dir);
}

TEST(process_spread_in, bounds_the_cv_by_the_processes_the_file_names_or_six) {
    const json older = {{"mem_gbs", 4250}, {"process_spread_pct", 0.018}};  // before the count was kept
    auto s = process_spread_in(older);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->processes, 6u);
    EXPECT_NEAR(s->bound_pct, 0.018 * 2.0893, 1e-5);
    json newer = older;
    newer["details"] = {{"process_spread", {{"runs", 20}, {"cv_pct", 0.018}}}};
    s = process_spread_in(newer);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->processes, 20u);
    EXPECT_LT(s->bound_pct, 0.018 * 2.0893);
    EXPECT_FALSE(process_spread_in(json{{"mem_gbs", 4250}}).has_value());
    EXPECT_FALSE(process_spread_in(json{{"mem_gbs", 4250}, {"process_spread_pct", -1.0}}).has_value());
}
