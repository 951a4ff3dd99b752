// slurm_runner: job arrays through sbatch, one squeue per poll round, sacct after, scancel.
#include "scale/slurm_runner.h"

#include <algorithm>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "scale/slurm_parse.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/strings.h"

namespace hotkernel::scale {
namespace fs = std::filesystem;

namespace {

double since_s(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// The last bytes of a file the job wrote; "" when it is not there (yet).
std::string file_tail(const fs::path& p, std::size_t max_bytes) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return "";
    try {
        std::string s = read_file(p);
        return s.size() > max_bytes ? s.substr(s.size() - max_bytes) : s;
    } catch (const tool_error&) {
        return "";
    }
}

std::string first_lines(const process_result& r) {
    std::vector<std::string> lines;
    for (const std::string* s : {&r.stderr_text, &r.stdout_text})
        for (const auto& l : split_lines(*s))
            if (!trim(l).empty() && lines.size() < 3) lines.push_back(trim(l));
    if (lines.empty()) return r.describe();
    return shorten(join(lines, " "), 400);
}

}  // namespace

slurm_runner::slurm_runner(process_runner& cli, options opts) : m_cli(cli), m_opts(std::move(opts)) {}

slurm_runner::~slurm_runner() {
    // No job outlives the call that submitted it.
    for (auto& [id, t] : m_tasks)
        if (!t.done && !t.array.empty() && !t.cancel_asked) m_cancel_ids.push_back(task_id(t));
    try {
        flush_cancels();
    } catch (...) {  // a destructor must not throw; scancel's failure is not worth one
    }
}

process_result slurm_runner::run_cli(std::vector<std::string> argv) {
    process_spec spec;
    spec.argv = std::move(argv);
    spec.timeout_s = m_opts.command_timeout_s;
    spec.max_capture_bytes = 1u << 20;
    // Called from inside a job, we would hand its allocation (SLURM_JOB_ID, SLURM_CPUS_*, the
    // GPU mask) to the new jobs; they get their own from Slurm.
    for (const auto& [k, v] : environment_now())
        if ((k.rfind("SLURM_", 0) == 0 && k != "SLURM_CONF") || k == "CUDA_VISIBLE_DEVICES" ||
            k == "HOTKERNEL_GPU_LEASE" || k == "HOTKERNEL_CPUS")
            spec.env_unset.push_back(k);
    return m_cli.run(spec);
}

process_runner::job_id slurm_runner::submit(process_spec spec) {
    const job_id id = m_next++;
    m_tasks[id].spec = std::move(spec);
    m_queued.push_back(id);
    return id;
}

void slurm_runner::fail(task& t, const std::string& why) {
    t.done = true;
    t.res = process_result{};
    t.res.spawn_failed = true;
    t.res.spawn_error = why;
    if (!m_opts.partition.empty()) t.res.placement["partition"] = m_opts.partition;
    if (!t.array.empty()) t.res.placement["job_id"] = task_id(t);
    t.res.placement["state"] = t.state;
}

void slurm_runner::submit_queued() {
    if (m_queued.empty()) return;
    std::vector<job_id> ids;
    ids.swap(m_queued);
    std::vector<process_spec> specs;
    double limit_s = 60;
    for (job_id id : ids) {
        specs.push_back(m_tasks[id].spec);
        limit_s = std::max(limit_s, m_tasks[id].spec.timeout_s);
    }
    const std::string where = m_opts.partition.empty() ? "the default partition" : "partition " + m_opts.partition;
    std::error_code ec;
    fs::create_directories(m_opts.dir, ec);
    const fs::path script = m_opts.dir / fmt::format("array-{}.sh", ++m_batches);
    try {
        write_file_atomic(script, array_script(specs, fmt::format("hotkernel: {} jobs on {}", specs.size(), where)));
    } catch (const tool_error& e) {
        for (job_id id : ids) fail(m_tasks[id], e.what());
        return;
    }
    std::vector<std::string> argv = {"sbatch", "--parsable", "--job-name=" + m_opts.job_name,
                                     fmt::format("--array=0-{}", specs.size() - 1),
                                     "--output=" + (m_opts.dir / "%A_%a.out").string(),
                                     "--error=" + (m_opts.dir / "%A_%a.err").string(),
                                     "--time=" + slurm_minutes(limit_s)};
    if (!m_opts.gres.empty()) argv.push_back("--gres=" + m_opts.gres);
    if (!m_opts.partition.empty()) argv.push_back("--partition=" + m_opts.partition);
    argv.insert(argv.end(), m_opts.sbatch_args.begin(), m_opts.sbatch_args.end());
    argv.push_back(script.string());
    const process_result r = run_cli(argv);
    const std::string array = r.ok() ? sbatch_job_id(r.stdout_text) : "";
    if (array.empty()) {
        std::string why;
        if (r.spawn_failed)
            why = fmt::format("sbatch could not be started ({}); put Slurm's commands on PATH, or run hotkernel on a "
                              "login node",
                              r.spawn_error);
        else {
            const std::string said = first_lines(r);
            why = fmt::format("sbatch refused the jobs for {}: {}", where, said);
            if (contains_ci(said, "invalid partition"))
                why += "; check the name against `sinfo -s`";
            else if (contains_ci(said, "node configuration is not available"))
                why += fmt::format("; no node of {} has what a job asks for (--gres={}, and your HOTKERNEL_SLURM_ARGS)",
                                   where, m_opts.gres);
        }
        for (job_id id : ids) fail(m_tasks[id], why);
        return;
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
        task& t = m_tasks[ids[i]];
        t.array = array;
        t.index = static_cast<int>(i);
        t.state = "SUBMITTED";
        t.since = steady::now();
        m_opts.note(ids[i], fmt::format("job {} submitted to {}", task_id(t), where));
    }
    m_interval_s = 0.5;
    m_poll_soon = true;
}

void slurm_runner::finish(task& t, const std::string& state, const std::string& detail) {
    t.done = true;
    t.state = state;
    t.detail = detail;
    process_result& r = t.res;
    const fs::path out = m_opts.dir / fmt::format("{}_{}.out", t.array, t.index);
    const fs::path err = m_opts.dir / fmt::format("{}_{}.err", t.array, t.index);
    r.stdout_text = file_tail(out, t.spec.max_capture_bytes);
    r.stderr_text = file_tail(err, 64 * 1024);
    r.exit_code = 0;
    if (state == "TIMEOUT") r.timed_out = true;
    else if (state == "CANCELLED") r.cancelled = true;
    else if (state != "COMPLETED") {
        r.exit_code = 1;
        if (const auto colon = detail.find(':'); colon != std::string::npos) {
            try {
                r.exit_code = std::stoi(detail.substr(0, colon));
                if (r.exit_code == 0) r.exit_code = 1;
            } catch (const std::exception&) {
            }
        }
    }
    r.wall_s = since_s(t.since);
    if (!m_opts.partition.empty()) r.placement["partition"] = m_opts.partition;
    r.placement["job_id"] = task_id(t);
    r.placement["state"] = state;
    if (!t.node.empty() && t.node != "(null)") r.placement["node"] = t.node;
    if (const std::string why = describe_state(state, detail); !why.empty()) r.placement["reason"] = why;
}

void slurm_runner::flush_cancels() {
    if (m_cancel_ids.empty()) return;
    std::vector<std::string> argv = {"scancel"};
    argv.insert(argv.end(), m_cancel_ids.begin(), m_cancel_ids.end());
    m_cancel_ids.clear();
    (void)run_cli(argv);  // a job that already ended is no error; the next poll says how each ended
    m_poll_soon = true;
}

void slurm_runner::refresh() {
    std::set<std::string> arrays;
    for (auto& [id, t] : m_tasks)
        if (!t.done && !t.array.empty()) arrays.insert(t.array);
    if (arrays.empty()) return;
    const std::string ids = join({arrays.begin(), arrays.end()}, ",");
    process_result q = run_cli({"squeue", "-h", "-t", "all", "-j", ids, "-o", "%i|%T|%r|%N"});
    // Every id forgotten (past MinJobAge) is an error to squeue: "Invalid job id specified".
    const bool none_known = !q.ok() && contains_ci(q.stdout_text + q.stderr_text, "Invalid job id");
    if (!q.ok() && !none_known) {
        if (!m_squeue_failing) {
            m_squeue_failing = true;
            m_squeue_failing_since = steady::now();
        } else if (since_s(m_squeue_failing_since) > 120) {
            const std::string why = fmt::format("squeue has failed for over 120 s ({}); the jobs were left as they "
                                                "are: check the cluster (`squeue -j {}`)",
                                                first_lines(q), ids);
            for (auto& [id, t] : m_tasks)
                if (!t.done && !t.array.empty()) fail(t, why);
        }
        return;
    }
    m_squeue_failing = false;
    std::map<std::pair<std::string, int>, slurm_row> known;
    for (const auto& row : parse_slurm_rows(none_known ? "" : q.stdout_text))
        for (int i : row.tasks.empty() ? std::vector<int>{0} : row.tasks) known[{row.job, i}] = row;

    std::vector<std::pair<job_id, task*>> missing;
    for (auto& [id, t] : m_tasks) {
        if (t.done || t.array.empty()) continue;
        if (known.count({t.array, t.index}) == 0) missing.emplace_back(id, &t);
    }
    if (!missing.empty() && m_sacct_works) {
        process_result a = run_cli({"sacct", "-X", "-P", "-n", "-j", ids, "-o", "JobID,State,ExitCode,NodeList"});
        if (!a.ok()) m_sacct_works = false;  // "Slurm accounting storage is disabled": squeue alone, then
        else
            for (const auto& row : parse_slurm_rows(a.stdout_text))
                if (is_final_state(row.state))
                    for (int i : row.tasks.empty() ? std::vector<int>{0} : row.tasks) known[{row.job, i}] = row;
    }

    for (auto& [id, t] : m_tasks) {
        if (t.done || t.array.empty()) continue;
        auto it = known.find({t.array, t.index});
        if (it != known.end()) {
            const slurm_row& row = it->second;
            t.seen = true;
            if (!row.node.empty() && row.node != "(null)") t.node = row.node;
            if (row.state != t.state) {
                t.state = row.state;
                t.since = steady::now();
                if (!is_final_state(row.state))
                    m_opts.note(id, fmt::format("job {} {}{}", task_id(t), row.state,
                                                row.state == "RUNNING" && !t.node.empty()
                                                    ? " on " + t.node
                                                    : (row.detail.empty() || row.detail == "None" ? ""
                                                                                                  : " (" + row.detail + ")")));
            }
            if (is_final_state(row.state)) {
                finish(t, row.state, row.detail.find(':') != std::string::npos ? row.detail : "");
                continue;
            }
            if (row.state == "PENDING" && since_s(t.since) > m_opts.queue_limit_s && !t.cancel_asked) {
                m_cancel_ids.push_back(task_id(t));
                fail(t, fmt::format("job {} was still pending ({}) after {:g} s, so it was cancelled; raise "
                                    "HOTKERNEL_SLURM_QUEUE_S or pick a less busy partition",
                                    task_id(t), row.detail, m_opts.queue_limit_s));
            }
        } else if (t.cancel_asked) {
            finish(t, "CANCELLED", "");  // a pending task scancel removed: squeue lists it no more
        } else if (t.seen || since_s(t.since) > 60) {
            finish(t, "UNKNOWN", "");
            t.res.placement["reason"] = fmt::format("squeue{} no longer lists job {}", m_sacct_works ? " and sacct" : "",
                                                    task_id(t));
        }
        if (!t.done && t.cancel_asked && since_s(t.cancel_at) > 60) finish(t, "CANCELLED", "");
    }
    flush_cancels();
}

bool slurm_runner::poll(job_id id) {
    auto it = m_tasks.find(id);
    if (it == m_tasks.end()) return true;
    submit_queued();
    flush_cancels();
    if (m_poll_soon) {  // just submitted or cancelled: look again shortly, then back off again
        m_poll_soon = false;
        m_next_poll = std::min(m_next_poll, steady::now() + std::chrono::milliseconds(300));
    }
    if (!it->second.done && steady::now() >= m_next_poll) {
        refresh();
        m_interval_s = std::min(m_interval_s * 1.5, m_opts.poll_max_s);
        m_next_poll = steady::now() + std::chrono::milliseconds(m_poll_soon ? 300 : static_cast<int>(m_interval_s * 1000));
        m_poll_soon = false;
    }
    return it->second.done;
}

void slurm_runner::cancel(job_id id) {
    auto it = m_tasks.find(id);
    if (it == m_tasks.end() || it->second.done || it->second.cancel_asked) return;
    task& t = it->second;
    t.cancel_asked = true;
    t.cancel_at = steady::now();
    if (t.array.empty()) {  // never submitted
        m_queued.erase(std::remove(m_queued.begin(), m_queued.end(), id), m_queued.end());
        t.done = true;
        t.res.cancelled = true;
        t.res.placement["state"] = "CANCELLED";
        return;
    }
    m_cancel_ids.push_back(task_id(t));
}

process_result slurm_runner::result(job_id id) {
    while (!poll(id)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto it = m_tasks.find(id);
    if (it == m_tasks.end()) {
        process_result r;
        r.spawn_failed = true;
        r.spawn_error = "unknown job";
        return r;
    }
    process_result r = std::move(it->second.res);
    m_tasks.erase(it);
    return r;
}

process_result slurm_runner::run(const process_spec& spec, const cancel_token& cancel) {
    const job_id id = submit(spec);
    while (!poll(id)) {
        if (cancel.cancelled()) this->cancel(id);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return result(id);
}

}  // namespace hotkernel::scale
