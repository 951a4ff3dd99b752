// The Slurm executor, through its CLI (sbatch, squeue, sacct, scancel; never slurmrestd): a
// process_runner whose jobs run on a partition's nodes. Specs submitted before the first poll
// go out as one job array (one sbatch, --gres=gpu:1 per task); one squeue a poll round covers
// every job in flight (backing off to poll_max_s), sacct answers for jobs squeue has forgotten,
// cancel is scancel. A job's answer is its stdout file; its final state says how it ended (a
// TIMEOUT is timed_out, CANCELLED cancelled, FAILED/NODE_FAIL/… a failure that says so), and
// every wait has a bound, so nothing hangs. The Slurm commands run on the runner it is given.
#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "process/runner.h"

namespace hotkernel::scale {

class slurm_runner final : public process_runner {
public:
    struct options {
        std::string partition;              ///< "": the cluster's default partition
        std::filesystem::path dir;          ///< a folder the nodes see: scripts and output files
        std::string job_name = "hotkernel";
        std::string gres = "gpu:1";         ///< --gres per task; "": none
        std::vector<std::string> sbatch_args;  ///< after hotkernel's own, so they win (--time, --account)
        double queue_limit_s = 3600;        ///< longest PENDING before the job is cancelled and failed
        double poll_max_s = 10;             ///< the slowest poll round
        double command_timeout_s = 60;      ///< each sbatch/squeue/sacct/scancel call
        /// A job changed state: "PENDING (Resources)", "RUNNING on h100n".
        std::function<void(job_id, const std::string&)> note = [](job_id, const std::string&) {};
    };

    slurm_runner(process_runner& cli, options opts);
    ~slurm_runner() override;  ///< scancels what is still in flight
    slurm_runner(const slurm_runner&) = delete;
    slurm_runner& operator=(const slurm_runner&) = delete;

    using process_runner::run;
    process_result run(const process_spec& spec, const cancel_token& cancel) override;
    job_id submit(process_spec spec) override;
    [[nodiscard]] bool poll(job_id id) override;
    void cancel(job_id id) override;
    /// placement: partition, job_id ("12_3"), state, node; spawn_failed with the reason when
    /// sbatch refused it or it was lost.
    process_result result(job_id id) override;

private:
    using steady = std::chrono::steady_clock;
    struct task {
        process_spec spec;
        std::string array;  ///< "" until submitted
        int index = 0;
        std::string state = "QUEUED";
        std::string detail;
        std::string node;
        bool done = false;
        bool cancel_asked = false;
        bool seen = false;
        steady::time_point since = steady::now();   ///< in this state since
        steady::time_point cancel_at{};
        process_result res;
    };
    void submit_queued();
    void refresh();
    void flush_cancels();
    void finish(task& t, const std::string& state, const std::string& detail);
    void fail(task& t, const std::string& why);
    process_result run_cli(std::vector<std::string> argv);
    std::string task_id(const task& t) const { return t.array + "_" + std::to_string(t.index); }

    process_runner& m_cli;
    options m_opts;
    std::map<job_id, task> m_tasks;
    std::vector<job_id> m_queued;
    std::vector<std::string> m_cancel_ids;
    job_id m_next = 1;
    std::size_t m_batches = 0;
    double m_interval_s = 0.5;
    steady::time_point m_next_poll = steady::now();
    steady::time_point m_squeue_failing_since{};
    bool m_squeue_failing = false;
    bool m_poll_soon = false;
    bool m_sacct_works = true;
};

}  // namespace hotkernel::scale
