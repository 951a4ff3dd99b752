// Spreading work (src/scale/): the gpus argument and the outer mask, core slices, leases, Slurm's
// text (on captures from the real Slurm 22.05 of scripts/slurm-up, tests/fixtures/slurm/), the
// array script, the command template, and the pool and Slurm executors on scripted commands.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "process/runner.h"
#include "scale/command_runner.h"
#include "scale/dispatch.h"
#include "scale/gpu_set.h"
#include "scale/lease.h"
#include "scale/pool_runner.h"
#include "scale/slurm_parse.h"
#include "scale/slurm_runner.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/strings.h"
#include "fixtures.h"

using namespace hotkernel;
using namespace hotkernel::scale;
namespace fs = std::filesystem;

namespace {

std::string slurm_capture(const std::string& name) { return test_fixtures::fixture("slurm/" + name); }

gpu_record gpu_card_of(int index, std::string uuid, std::string name = "NVIDIA H100 80GB HBM3") {
    gpu_record g;
    g.index = index;
    g.uuid = std::move(uuid);
    g.name = std::move(name);
    return g;
}

const std::vector<gpu_record> four_cards = {gpu_card_of(0, "GPU-aaaa0000-1111"), gpu_card_of(1, "GPU-bbbb1111-1111"),
                                      gpu_card_of(2, "GPU-cccc2222-1111", "NVIDIA L40S"), gpu_card_of(3, "GPU-dddd3333-1111")};

std::vector<std::string> uuids_of(const std::vector<gpu_record>& gpus) {
    std::vector<std::string> out;
    for (const auto& g : gpus) out.push_back(*g.uuid);
    return out;
}

/// A runner whose answers a test writes: each spec goes to `answer`, under a lock.
class scale_scripted_runner final : public process_runner {
public:
    explicit scale_scripted_runner(std::function<process_result(const process_spec&)> answer) : m_answer(std::move(answer)) {}
    using process_runner::run;
    process_result run(const process_spec& spec, const cancel_token&) override {
        {
            std::lock_guard lock(m_mutex);
            calls.push_back(spec);
        }
        return m_answer(spec);
    }
    std::vector<process_spec> calls;

private:
    std::mutex m_mutex;
    std::function<process_result(const process_spec&)> m_answer;
};

process_result scripted_answer(std::string out, int code = 0, std::string err = "") {
    process_result r;
    r.exit_code = code;
    r.stdout_text = std::move(out);
    r.stderr_text = std::move(err);
    return r;
}

/// A private lease folder for one test.
struct lease_test_folder {
    fs::path dir = make_temp_dir("hk-lease-test-");
    lease_test_folder() { ::setenv("HOTKERNEL_GPU_LEASE_DIR", dir.c_str(), 1); }
    ~lease_test_folder() {
        ::unsetenv("HOTKERNEL_GPU_LEASE_DIR");
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

}  // namespace

// ---- gpus and the mask -------------------------------------------------------------------

TEST(gpus_arg, all_count_and_lists) {
    EXPECT_EQ(parse_gpus("all").what, gpus_request::kind::all);
    EXPECT_EQ(parse_gpus("").what, gpus_request::kind::all);
    const auto two = parse_gpus("2");
    EXPECT_EQ(two.what, gpus_request::kind::count);
    EXPECT_EQ(two.count, 2u);
    const auto list = parse_gpus("0, 2,0");
    EXPECT_EQ(list.what, gpus_request::kind::list);
    EXPECT_EQ(list.items, (std::vector<std::string>{"0", "2"}));
    EXPECT_EQ(parse_gpus("2,").items, std::vector<std::string>{"2"});  // one index
    EXPECT_EQ(parse_gpus("GPU-aaaa").items, std::vector<std::string>{"GPU-aaaa"});
}

TEST(gpus_arg, bad_values_say_what_to_give) {
    for (const char* bad : {"0", "many", "0,x", "MIG-1234", ","}) {
        try {
            parse_gpus(bad);
            ADD_FAILURE() << bad;
        } catch (const usage_error& e) {
            EXPECT_NE(std::string(e.what()).find("gpus"), std::string::npos) << e.what();
        }
    }
}

TEST(gpu_mask, unset_is_every_card_and_entries_are_indices_or_uuid_prefixes) {
    EXPECT_EQ(visible_gpus(four_cards, std::nullopt).size(), 4u);
    EXPECT_EQ(uuids_of(visible_gpus(four_cards, "2,0")), (std::vector<std::string>{"GPU-cccc2222-1111", "GPU-aaaa0000-1111"}));
    EXPECT_EQ(uuids_of(visible_gpus(four_cards, "GPU-dddd,GPU-bbbb1111-1111")),
              (std::vector<std::string>{"GPU-dddd3333-1111", "GPU-bbbb1111-1111"}));
    EXPECT_TRUE(visible_gpus(four_cards, "").empty());  // "" hides every card
}

TEST(gpu_mask, ends_at_the_first_entry_that_names_no_card_as_cuda_does) {
    std::string why;
    EXPECT_EQ(uuids_of(visible_gpus(four_cards, "1,7,2", &why)), std::vector<std::string>{"GPU-bbbb1111-1111"});
    EXPECT_NE(why.find("'7'"), std::string::npos) << why;
    why.clear();
    EXPECT_TRUE(visible_gpus(four_cards, "MIG-1234", &why).empty());
    EXPECT_NE(why.find("MIG"), std::string::npos) << why;
    EXPECT_TRUE(visible_gpus(four_cards, "GPU-").empty());  // too short a prefix names no card
}

TEST(gpu_mask, indices_in_gpus_count_inside_the_mask) {
    const auto visible = visible_gpus(four_cards, "2,3");
    EXPECT_EQ(uuids_of(choose_gpus(visible, parse_gpus("0,"))), std::vector<std::string>{"GPU-cccc2222-1111"});
    EXPECT_EQ(uuids_of(choose_gpus(visible, parse_gpus("1"))), std::vector<std::string>{"GPU-cccc2222-1111"});  // a count
    EXPECT_EQ(uuids_of(choose_gpus(visible, parse_gpus("GPU-dddd"))), std::vector<std::string>{"GPU-dddd3333-1111"});
    EXPECT_EQ(choose_gpus(visible, parse_gpus("all")).size(), 2u);
    EXPECT_THROW(choose_gpus(visible, parse_gpus("3")), tool_error);        // more than visible
    EXPECT_THROW(choose_gpus(visible, parse_gpus("2,")), tool_error);       // index outside the mask
    EXPECT_THROW(choose_gpus(visible, parse_gpus("GPU-aaaa")), tool_error); // a card outside the mask
}

TEST(core_slices, near_equal_contiguous_slices_or_one_core_each) {
    const std::vector<int> eight = {0, 1, 2, 3, 4, 5, 6, 7};
    EXPECT_EQ(core_slice(eight, 0, 3), (std::vector<int>{0, 1}));
    EXPECT_EQ(core_slice(eight, 1, 3), (std::vector<int>{2, 3, 4}));
    EXPECT_EQ(core_slice(eight, 2, 3), (std::vector<int>{5, 6, 7}));
    EXPECT_EQ(core_slice(eight, 0, 1), eight);
    EXPECT_EQ(core_slice({0, 1}, 2, 3), (std::vector<int>{0}));
    EXPECT_TRUE(core_slice({}, 0, 2).empty());
    EXPECT_EQ(cpu_list_text({5, 0, 1, 2, 7, 8}), "0-2,5,7-8");
    EXPECT_EQ(cpu_list_text({}), "");
}

// ---- leases ------------------------------------------------------------------------------

TEST(gpu_lease, one_holder_at_a_time_and_free_again_when_dropped) {
    lease_test_folder folder;
    auto a = gpu_lease::try_take("GPU-aaaa", "verify a.py");
    ASSERT_TRUE(a.has_value());
    EXPECT_FALSE(gpu_lease::try_take("GPU-aaaa", "verify b.py").has_value());  // another descriptor: another holder
    EXPECT_TRUE(gpu_lease::try_take("GPU-bbbb", "verify b.py").has_value());
    EXPECT_NE(lease_note("GPU-aaaa").find("verify a.py"), std::string::npos) << lease_note("GPU-aaaa");
    EXPECT_EQ(lease_path("GPU-aaaa").parent_path(), folder.dir);
    a.reset();
    EXPECT_TRUE(gpu_lease::try_take("GPU-aaaa", "verify c.py").has_value());
    EXPECT_EQ(fs::status(folder.dir).permissions() & fs::perms::others_write, fs::perms::none)
        << "an existing folder's mode is left alone";
}

TEST(gpu_lease, a_new_folder_is_shared_like_tmp) {
    lease_test_folder folder;
    const fs::path inner = folder.dir / "leases";
    ::setenv("HOTKERNEL_GPU_LEASE_DIR", inner.c_str(), 1);
    ASSERT_TRUE(gpu_lease::try_take("GPU-aaaa", "x").has_value());
    const auto perms = fs::status(inner).permissions();
    EXPECT_NE(perms & fs::perms::sticky_bit, fs::perms::none);
    EXPECT_NE(perms & fs::perms::others_write, fs::perms::none);
}

// ---- Slurm's text ------------------------------------------------------------------------

TEST(slurm_parse, squeue_rows_of_arrays_plain_jobs_and_ranges) {
    auto rows = parse_slurm_rows(slurm_capture("squeue-array-running.txt"));
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].job, "2");
    EXPECT_EQ(rows[0].tasks, (std::vector<int>{2, 3, 4, 5}));
    EXPECT_EQ(rows[0].state, "PENDING");
    EXPECT_EQ(rows[0].detail, "Resources");
    EXPECT_EQ(rows[1].tasks, std::vector<int>{1});
    EXPECT_EQ(rows[1].state, "RUNNING");
    rows = parse_slurm_rows(slurm_capture("squeue-array-done.txt"));
    ASSERT_EQ(rows.size(), 7u);
    EXPECT_EQ(rows[5].tasks, std::vector<int>{3});
    EXPECT_EQ(rows[5].state, "FAILED");
    EXPECT_TRUE(rows[6].tasks.empty());  // the plain job
    EXPECT_EQ(rows[6].state, "CANCELLED");
    rows = parse_slurm_rows(slurm_capture("squeue-array-cancelled.txt"));
    EXPECT_EQ(rows[0].tasks, (std::vector<int>{2, 3, 4}));
    EXPECT_EQ(rows[0].state, "CANCELLED");
    EXPECT_EQ(parse_slurm_rows(slurm_capture("squeue-timeout.txt")).at(0).state, "TIMEOUT");
    EXPECT_TRUE(parse_slurm_rows(slurm_capture("squeue-unknown-id.txt")).empty());  // an error message, no row
}

TEST(slurm_parse, sacct_rows_drop_by_whom_and_keep_exit_codes) {
    auto rows = parse_slurm_rows(slurm_capture("sacct-done.txt"));
    ASSERT_EQ(rows.size(), 7u);
    EXPECT_EQ(rows[3].state, "FAILED");
    EXPECT_EQ(rows[3].detail, "3:0");
    EXPECT_EQ(rows[6].state, "CANCELLED");  // "CANCELLED by 0"
    rows = parse_slurm_rows(slurm_capture("sacct-array-cancelled.txt"));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].tasks.size(), 6u);
    EXPECT_EQ(parse_slurm_rows("12.batch|COMPLETED|0:0\n12|COMPLETED|0:0\n").size(), 1u);  // steps skipped
    EXPECT_TRUE(parse_slurm_rows("sacct: error: Slurm accounting storage is disabled\n").empty());
}

TEST(slurm_parse, task_ranges_job_ids_states_and_minutes) {
    EXPECT_EQ(parse_task_range("[2-4,7%2]"), (std::vector<int>{2, 3, 4, 7}));
    EXPECT_EQ(parse_task_range("5"), std::vector<int>{5});
    EXPECT_FALSE(parse_task_range("[4-2]").has_value());
    EXPECT_FALSE(parse_task_range("[x]").has_value());
    EXPECT_FALSE(parse_task_range("0-99999999").has_value());
    EXPECT_EQ(sbatch_job_id(slurm_capture("sbatch-parsable.txt").substr(std::string("sbatch array -> '").size(), 1)), "1");
    EXPECT_EQ(sbatch_job_id("42;cluster\n"), "42");
    EXPECT_EQ(sbatch_job_id(slurm_capture("sbatch-bad-partition.txt")), "");
    EXPECT_TRUE(is_final_state("TIMEOUT"));
    EXPECT_TRUE(is_final_state("NODE_FAIL"));
    EXPECT_FALSE(is_final_state("PENDING"));
    EXPECT_FALSE(is_final_state("COMPLETING"));
    EXPECT_EQ(describe_state("COMPLETED"), "");
    EXPECT_NE(describe_state("TIMEOUT").find("time limit"), std::string::npos);
    EXPECT_NE(describe_state("FAILED", "3:0").find("3:0"), std::string::npos);
    EXPECT_EQ(slurm_minutes(1), "1");
    EXPECT_EQ(slurm_minutes(61), "2");
}

TEST(slurm_parse, the_array_script_runs_line_i_as_task_i_quoted) {
    process_spec a{.argv = {"/opt/hk bin/hotkernel", "run-job", "/shared/job-0.json"}};
    a.env_set["HOTKERNEL_JOB"] = "0";
    a.cwd = "/shared/it's here";
    process_spec b{.argv = {"/opt/hotkernel", "run-job", "/shared/job-1.json"}};
    b.env_unset = {"CUDA_VISIBLE_DEVICES"};
    const std::string s = array_script({a, b}, "two jobs");
    EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
    EXPECT_NE(s.find("0) cd '/shared/it'\\''s here' && exec env HOTKERNEL_JOB=0 '/opt/hk bin/hotkernel' run-job "
                     "/shared/job-0.json ;;"),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("1) exec env -u CUDA_VISIBLE_DEVICES /opt/hotkernel run-job /shared/job-1.json ;;"), std::string::npos) << s;
    EXPECT_NE(s.find("exit 99"), std::string::npos);
}

TEST(command_template, cmd_is_the_spec_shell_quoted) {
    process_spec p{.argv = {"hotkernel", "run-job", "-"}};
    p.env_set["A"] = "x y";
    EXPECT_EQ(render_command("ssh gpu7 {cmd}", p), "ssh gpu7 env 'A=x y' hotkernel run-job -");
    EXPECT_EQ(render_command("a {cmd} b {cmd}", {.argv = {"x"}}), "a x b x");
    scale_scripted_runner inner([](const process_spec& s) { return scripted_answer(s.argv.at(2) + "\n"); });
    command_runner cmd(inner, "echo {cmd}");
    const auto r = cmd.run({.argv = {"hk", "run-job", "-"}, .stdin_data = "{}"});
    EXPECT_EQ(inner.calls.at(0).argv.at(0), "sh");
    EXPECT_EQ(inner.calls.at(0).stdin_data, "{}");
    EXPECT_EQ(r.stdout_text, "echo hk run-job -\n");
    EXPECT_EQ(r.placement.at("command"), "echo {cmd}");
}

// ---- the pool ----------------------------------------------------------------------------

TEST(gpu_pool, pins_each_job_to_one_leased_card_and_never_two_jobs_to_one) {
    lease_test_folder folder;
    std::mutex m;
    std::map<std::string, int> running;
    int overlap = 0;
    scale_scripted_runner inner([&](const process_spec& s) {
        const std::string uuid = s.env_set.at("CUDA_VISIBLE_DEVICES");
        {
            std::lock_guard lock(m);
            if (++running[uuid] > 1) ++overlap;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        {
            std::lock_guard lock(m);
            --running[uuid];
        }
        return scripted_answer("{}\n");
    });
    gpu_pool_runner::options o;
    o.cards = {{four_cards[0], {0}}, {four_cards[1], {1}}};
    gpu_pool_runner pool(inner, o);
    std::vector<process_runner::job_id> ids;
    for (int i = 0; i < 6; ++i) ids.push_back(pool.submit({.argv = {"job"}}));
    std::set<std::string> used;
    for (auto id : ids) {
        const auto r = pool.result(id);
        used.insert(r.placement.at("gpu_uuid"));
        EXPECT_EQ(r.placement.at("gpu_name"), "NVIDIA H100 80GB HBM3");
    }
    EXPECT_EQ(overlap, 0);
    EXPECT_EQ(used, (std::set<std::string>{"GPU-aaaa0000-1111", "GPU-bbbb1111-1111"}));
    for (const auto& c : inner.calls) {
        EXPECT_EQ(c.env_set.at("HOTKERNEL_GPU_LEASE"), c.env_set.at("CUDA_VISIBLE_DEVICES"));
        EXPECT_EQ(c.cpus, c.env_set.at("CUDA_VISIBLE_DEVICES") == "GPU-aaaa0000-1111" ? std::vector<int>{0} : std::vector<int>{1});
        EXPECT_EQ(c.env_set.at("HOTKERNEL_CPUS"), std::to_string(c.cpus.at(0)));
    }
}

TEST(gpu_pool, skips_a_card_another_process_leased_and_gives_up_saying_who_holds_it) {
    lease_test_folder folder;
    auto theirs = gpu_lease::try_take("GPU-aaaa0000-1111", "verify theirs.py");
    ASSERT_TRUE(theirs.has_value());
    scale_scripted_runner inner([](const process_spec&) { return scripted_answer("{}\n"); });
    gpu_pool_runner::options o;
    o.cards = {{four_cards[0], {}}, {four_cards[1], {}}};
    gpu_pool_runner pool(inner, o);
    EXPECT_EQ(pool.run({.argv = {"job"}}).placement.at("gpu_uuid"), "GPU-bbbb1111-1111");

    o.cards = {{four_cards[0], {}}};
    o.lease_wait_s = 0.3;
    gpu_pool_runner only(inner, o);
    const auto r = only.run({.argv = {"job"}});
    EXPECT_TRUE(r.spawn_failed);
    EXPECT_NE(r.spawn_error.find("verify theirs.py"), std::string::npos) << r.spawn_error;
    theirs.reset();  // its holder is gone, however it went: the card is free
    EXPECT_EQ(only.run({.argv = {"job"}}).placement.at("gpu_uuid"), "GPU-aaaa0000-1111");
}

TEST(gpu_pool, a_cancelled_wait_is_a_cancelled_result) {
    lease_test_folder folder;
    auto theirs = gpu_lease::try_take("GPU-aaaa0000-1111", "x");
    scale_scripted_runner inner([](const process_spec&) { return scripted_answer("{}\n"); });
    gpu_pool_runner pool(inner, {.cards = {{four_cards[0], {}}}});
    cancel_token cancel;
    cancel.cancel();
    const auto r = pool.run({.argv = {"job"}}, cancel);
    EXPECT_TRUE(r.cancelled);
    EXPECT_TRUE(inner.calls.empty());
}

TEST(gpu_pool, without_cards_one_job_at_a_time_unpinned) {
    std::atomic<int> now{0}, most{0};
    scale_scripted_runner inner([&](const process_spec& s) {
        most = std::max(most.load(), ++now);
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        --now;
        EXPECT_EQ(s.env_set.count("CUDA_VISIBLE_DEVICES"), 0u);
        return scripted_answer("{}\n");
    });
    gpu_pool_runner pool(inner, {});
    std::vector<process_runner::job_id> ids;
    for (int i = 0; i < 3; ++i) ids.push_back(pool.submit({.argv = {"job"}}));
    for (auto id : ids) EXPECT_TRUE(pool.result(id).placement.empty());
    EXPECT_EQ(most.load(), 1);
}

// ---- the Slurm executor on scripted commands ------------------------------------------------

namespace {
/// sbatch, squeue, sacct and scancel as a test scripts them; squeue answers from `queue`, which
/// the test changes between polls.
struct scripted_slurm {
    fs::path dir = make_temp_dir("hk-slurm-test-");
    std::string queue;
    std::string sbatch_out = "7\n";
    int sbatch_code = 0;
    std::string sacct = "";
    int sacct_code = 1;
    std::vector<std::vector<std::string>> calls;
    std::mutex m;
    scale_scripted_runner runner{[this](const process_spec& s) {
        std::lock_guard lock(m);
        calls.push_back(s.argv);
        const std::string& cmd = s.argv.at(0);
        if (cmd == "sbatch") return scripted_answer(sbatch_code == 0 ? sbatch_out : "", sbatch_code, sbatch_code == 0 ? "" : sbatch_out);
        if (cmd == "squeue") return queue.empty() ? scripted_answer("", 1, "slurm_load_jobs error: Invalid job id specified\n") : scripted_answer(queue);
        if (cmd == "sacct") return scripted_answer(sacct, sacct_code, sacct_code == 0 ? "" : "Slurm accounting storage is disabled\n");
        return scripted_answer("");  // scancel
    }};
    ~scripted_slurm() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    std::vector<std::string> last(const std::string& cmd) {
        std::lock_guard lock(m);
        for (auto it = calls.rbegin(); it != calls.rend(); ++it)
            if (it->at(0) == cmd) return *it;
        return {};
    }
    /// Polls until `done` or 20 s.
    static bool wait(slurm_runner& s, process_runner::job_id id) {
        for (int i = 0; i < 400; ++i) {
            if (s.poll(id)) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }
};

slurm_runner::options scripted_slurm_options(const scripted_slurm& f) {
    slurm_runner::options o;
    o.partition = "h100";
    o.dir = f.dir;
    o.job_name = "hk-test";
    o.poll_max_s = 0.2;
    o.sbatch_args = {"--account=lab", "--time=5"};
    return o;
}
}  // namespace

TEST(slurm_runner, one_array_per_batch_then_states_from_squeue_and_answers_from_the_output_files) {
    scripted_slurm f;
    slurm_runner s(f.runner, scripted_slurm_options(f));
    const auto a = s.submit({.argv = {"/hk", "run-job", "/d/job-0.json"}, .timeout_s = 600});
    const auto b = s.submit({.argv = {"/hk", "run-job", "/d/job-1.json"}, .timeout_s = 100});
    f.queue = "7_[0-1]|PENDING|Resources\n";
    EXPECT_FALSE(s.poll(a));
    const auto sbatch = f.last("sbatch");
    ASSERT_FALSE(sbatch.empty());
    const std::string line = join(sbatch, " ");
    for (const char* want : {"--parsable", "--array=0-1", "--partition=h100", "--gres=gpu:1", "--time=10",
                             "--job-name=hk-test", "--account=lab --time=5"})  // ours, then the user's, which win
        EXPECT_NE(line.find(want), std::string::npos) << want << " in " << line;
    const std::string script = read_file(sbatch.back());
    EXPECT_NE(script.find("1) exec env /hk run-job /d/job-1.json"), std::string::npos) << script;

    write_file_atomic(f.dir / "7_0.out", "progress\n{\"verdict\": \"faster\"}\n");
    write_file_atomic(f.dir / "7_1.err", "slurmstepd: error: *** JOB 8 CANCELLED DUE TO TIME LIMIT ***\n");
    f.queue = "7_0|COMPLETED|None|h100n\n7_1|TIMEOUT|TimeLimit|h100n\n";
    ASSERT_TRUE(scripted_slurm::wait(s, a));
    ASSERT_TRUE(scripted_slurm::wait(s, b));
    const auto ra = s.result(a);
    EXPECT_TRUE(ra.ok()) << ra.describe();
    EXPECT_EQ(ra.stdout_text, "progress\n{\"verdict\": \"faster\"}\n");
    EXPECT_EQ(ra.placement.at("job_id"), "7_0");
    EXPECT_EQ(ra.placement.at("state"), "COMPLETED");
    EXPECT_EQ(ra.placement.at("node"), "h100n");
    EXPECT_EQ(ra.placement.at("partition"), "h100");
    const auto rb = s.result(b);
    EXPECT_TRUE(rb.timed_out);
    EXPECT_NE(rb.placement.at("reason").find("time limit"), std::string::npos);
    EXPECT_NE(rb.stderr_text.find("TIME LIMIT"), std::string::npos);
}

TEST(slurm_runner, a_refused_submission_fails_every_job_saying_why_and_what_to_check) {
    scripted_slurm f;
    f.sbatch_code = 1;
    f.sbatch_out = read_file(fs::path(HOTKERNEL_SOURCE_DIR) / "tests/fixtures/slurm/sbatch-bad-partition.txt");
    slurm_runner s(f.runner, scripted_slurm_options(f));
    const auto a = s.submit({.argv = {"/hk"}});
    EXPECT_TRUE(s.poll(a));
    const auto r = s.result(a);
    EXPECT_TRUE(r.spawn_failed);
    EXPECT_NE(r.spawn_error.find("Invalid partition name"), std::string::npos) << r.spawn_error;
    EXPECT_NE(r.spawn_error.find("sinfo"), std::string::npos) << r.spawn_error;
}

TEST(slurm_runner, cancel_is_scancel_and_a_task_squeue_forgets_after_it_is_cancelled) {
    scripted_slurm f;
    slurm_runner s(f.runner, scripted_slurm_options(f));
    const auto a = s.submit({.argv = {"/hk"}});
    const auto b = s.submit({.argv = {"/hk"}});
    f.queue = "7_0|RUNNING|None|h100n\n7_[1]|PENDING|Resources\n";
    EXPECT_FALSE(s.poll(a));
    s.cancel(a);
    s.cancel(b);
    f.queue = "7_0|CANCELLED|None|h100n\n";  // the pending task is gone from squeue
    ASSERT_TRUE(scripted_slurm::wait(s, a));
    ASSERT_TRUE(scripted_slurm::wait(s, b));
    EXPECT_EQ(join(f.last("scancel"), " "), "scancel 7_0 7_1");
    EXPECT_TRUE(s.result(a).cancelled);
    EXPECT_TRUE(s.result(b).cancelled);
}

TEST(slurm_runner, sacct_answers_once_squeue_has_forgotten_a_job) {
    scripted_slurm f;
    slurm_runner s(f.runner, scripted_slurm_options(f));
    const auto a = s.submit({.argv = {"/hk"}});
    f.queue = "7_0|RUNNING|None|h100n\n";
    EXPECT_FALSE(s.poll(a));
    f.queue.clear();  // past MinJobAge: "Invalid job id specified"
    f.sacct_code = 0;
    f.sacct = "7_0|FAILED|2:0|h100n\n";
    ASSERT_TRUE(scripted_slurm::wait(s, a));
    const auto r = s.result(a);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.placement.at("state"), "FAILED");
    EXPECT_NE(r.placement.at("reason").find("2:0"), std::string::npos);
}

TEST(slurm_runner, without_accounting_a_forgotten_job_ends_unknown_never_hangs) {
    scripted_slurm f;
    slurm_runner s(f.runner, scripted_slurm_options(f));
    const auto a = s.submit({.argv = {"/hk"}});
    f.queue = "7_0|RUNNING|None|h100n\n";
    EXPECT_FALSE(s.poll(a));
    f.queue.clear();
    ASSERT_TRUE(scripted_slurm::wait(s, a));
    const auto r = s.result(a);
    EXPECT_EQ(r.placement.at("state"), "UNKNOWN");
    EXPECT_NE(r.placement.at("reason").find("no longer lists"), std::string::npos);
}

TEST(slurm_runner, a_job_pending_past_the_queue_limit_is_cancelled_and_failed) {
    scripted_slurm f;
    auto o = scripted_slurm_options(f);
    o.queue_limit_s = 0.2;
    slurm_runner s(f.runner, o);
    const auto a = s.submit({.argv = {"/hk"}});
    f.queue = "7_[0]|PENDING|Priority\n";
    ASSERT_TRUE(scripted_slurm::wait(s, a));
    const auto r = s.result(a);
    EXPECT_TRUE(r.spawn_failed);
    EXPECT_NE(r.spawn_error.find("still pending (Priority)"), std::string::npos) << r.spawn_error;
    EXPECT_EQ(join(f.last("scancel"), " "), "scancel 7_0");
}

TEST(slurm_runner, the_slurm_commands_get_no_allocation_of_ours) {
    const char* had = std::getenv("SLURM_CONF");
    const std::string conf = had != nullptr ? had : "";
    ::setenv("SLURM_JOB_ID", "99", 1);
    ::setenv("SLURM_CONF", "/etc/slurm/slurm.conf", 1);
    scripted_slurm f;
    {
        slurm_runner s(f.runner, scripted_slurm_options(f));
        const auto a = s.submit({.argv = {"/hk"}});
        f.queue = "7_0|COMPLETED|None|n\n";
        ASSERT_TRUE(scripted_slurm::wait(s, a));
    }
    ::unsetenv("SLURM_JOB_ID");
    if (had != nullptr) ::setenv("SLURM_CONF", conf.c_str(), 1);
    else ::unsetenv("SLURM_CONF");
    const auto& unset = f.runner.calls.at(0).env_unset;
    EXPECT_NE(std::find(unset.begin(), unset.end(), "SLURM_JOB_ID"), unset.end());
    EXPECT_EQ(std::find(unset.begin(), unset.end(), "SLURM_CONF"), unset.end());
}

TEST(dispatch, a_job_s_bound_covers_every_run_at_its_limit) {
    EXPECT_DOUBLE_EQ(job_bound_s({.tool = "verify", .args = {{"n", 10}, {"timeout_s", 60}}}), 2 * 11 * 60 + 300);
    EXPECT_DOUBLE_EQ(job_bound_s({.tool = "verify", .args = {{"n", 10}, {"warmup", 0}, {"timeout_s", 60}}}), 2 * 10 * 60 + 300);
    EXPECT_DOUBLE_EQ(job_bound_s({.tool = "bench", .args = {{"n", 5}, {"timeout_s", 10}}}), 50 + 300);
}
