// run_spread: jobs to child specs, through the chosen executor, back to outcomes.
#include "scale/dispatch.h"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "gpu/gpu_query.h"
#include "report/findings.h"
#include "scale/command_runner.h"
#include "scale/lease.h"
#include "scale/pool_runner.h"
#include "scale/slurm_runner.h"
#include "store/results_store.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/strings.h"
#include "util/words.h"

namespace hotkernel::scale {
namespace fs = std::filesystem;
namespace {
using steady = std::chrono::steady_clock;

std::string getenv_or(const char* name, std::string fallback = "") {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

double env_seconds(const char* name, double fallback) {
    const std::string v = getenv_or(name);
    if (v.empty()) return fallback;
    try {
        std::size_t used = 0;
        const double d = std::stod(v, &used);
        if (used == v.size() && d > 0) return d;
    } catch (const std::exception&) {
    }
    throw tool_error(fmt::format("{}='{}' is not a number of seconds; set it to one (e.g. 600) or unset it", name,
                                 shorten(v, 40)));
}

/// This binary, for the children on this host (and, by default, on Slurm's nodes: a shared path).
std::string self_exe() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("hotkernel") : p.string();
}

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> out;
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    return out;
}

/// The last line of `text` that is a JSON object.
json last_json_object(const std::string& text) {
    const auto lines = split_lines(text);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        const std::string t = trim(*it);
        if (t.empty() || t.front() != '{') continue;
        json j = json::parse(t, nullptr, false);
        if (j.is_object()) return j;
    }
    return nullptr;
}

/// Where a job ran, in a few words: "GPU 1 (NVIDIA H100 80GB HBM3)", "h200 (job 12_1)".
std::string where_text(const std::map<std::string, std::string>& p) {
    auto get = [&](const char* k) { auto it = p.find(k); return it == p.end() ? std::string() : it->second; };
    if (!get("gpu_uuid").empty()) return fmt::format("GPU {} ({})", get("gpu_index").empty() ? get("gpu_uuid") : get("gpu_index"), get("gpu_name"));
    if (!get("job_id").empty()) return fmt::format("{} (job {})", get("partition").empty() ? "slurm" : get("partition"), get("job_id"));
    return "this host";
}

/// Why a job gave no result, from how its process ended; bounded.
std::string no_result_why(const process_result& r, const std::map<std::string, std::string>& p, double bound_s) {
    std::string why;
    if (auto it = p.find("reason"); it != p.end()) why = it->second;
    else if (r.spawn_failed) why = r.spawn_error;
    else if (r.timed_out) why = fmt::format("it ran past its limit of {:.0f} s and was killed", bound_s);
    else if (r.cancelled) why = "it was cancelled";
    else why = fmt::format("it {} without printing a result", r.describe());
    const std::string tail = trim(tail_text(r.stderr_text, 600));
    if (!tail.empty() && !r.spawn_failed) why += "; its stderr ended: " + tail;
    return shorten(why, 1200);
}

std::string outcome_line(const spread_job& job, const job_outcome& o) {
    const std::string where = where_text(o.placement);
    if (o.result.is_null()) return fmt::format("{} on {}: no result: {}", job.label, where, shorten(o.error, 160));
    if (o.result.contains("verdict")) {
        const json& s = o.result.value("speedup", json());
        return fmt::format("{} on {}: {}{}", job.label, where, o.result["verdict"].get<std::string>(),
                           s.is_number() ? fmt::format(" {:.3f}x", s.get<double>()) : "");
    }
    const json& m = o.result.value("mean_ms", json());
    return fmt::format("{} on {}: {}", job.label, where, m.is_number() ? fmt::format("mean {:.4g} ms", m.get<double>()) : "done");
}

/// The folder a Slurm run keeps its scripts, jobs and output in: it must be one the nodes see.
fs::path slurm_run_dir() {
    fs::path base = getenv_or("HOTKERNEL_SLURM_DIR");
    std::error_code ec;
    if (base.empty()) base = fs::current_path(ec) / ".hotkernel" / "slurm";
    std::string stamp = utc_now_iso();
    std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
    const fs::path dir = fs::absolute(base, ec) / (stamp + "-" + random_hex(3));
    fs::create_directories(dir, ec);
    if (ec)
        throw tool_error(fmt::format("cannot create the Slurm run folder {}: {}; set HOTKERNEL_SLURM_DIR to a writable "
                                     "folder that the nodes see too",
                                     dir.string(), ec.message()));
    const fs::path hk = base.parent_path();
    if (hk.filename() == ".hotkernel" && !fs::exists(hk / ".gitignore", ec)) {
        try {
            write_file_atomic(hk / ".gitignore", "# hotkernel's own files\n*\n");
        } catch (const tool_error&) {  // only a convenience
        }
    }
    return dir;
}

}  // namespace

double job_bound_s(const spread_job& job) {
    auto number = [&](const char* key, double fallback) {
        auto it = job.args.find(key);
        return it != job.args.end() && it->is_number() ? it->get<double>() : fallback;
    };
    const double timeout = number("timeout_s", 120);
    const double n = number("n", 10);
    if (job.tool == "verify") {
        const double warmup = number("warmup", 1);
        return 2 * (n + warmup) * timeout + 300;  // every run at its limit, plus nvidia-smi and start-up
    }
    return n * timeout + 300;
}

spread_run run_spread(const spread_plan& plan, const std::vector<spread_job>& jobs, tool_context& ctx) {
    spread_run out;
    const auto t0 = steady::now();
    const std::size_t total = jobs.size();
    double bound_s = 60;
    for (const auto& j : jobs) bound_s = std::max(bound_s, job_bound_s(j));

    // Notes come from the executors' threads; they are shown from this one.
    auto notes_mutex = std::make_shared<std::mutex>();
    auto notes = std::make_shared<std::vector<std::string>>();
    auto add_note = [notes_mutex, notes](std::string text) {
        std::lock_guard lock(*notes_mutex);
        notes->push_back(std::move(text));
    };
    auto job_of = [&](const process_spec& spec) -> std::size_t {
        auto it = spec.env_set.find("HOTKERNEL_JOB");
        return it == spec.env_set.end() ? 0 : static_cast<std::size_t>(std::stoul(it->second));
    };

    std::unique_ptr<process_runner> executor;
    fs::path slurm_dir;
    std::map<process_runner::job_id, std::size_t> slurm_job;  // executor id -> job
    json about = json::object();
    std::string remote_bin = getenv_or("HOTKERNEL_REMOTE_BIN", self_exe());
    switch (plan.kind) {
        case executor_kind::pool: {
            std::vector<gpu_record> all;
            std::string why;
            try {
                all = query_gpus(*ctx.runner, ctx.cancel);
                if (all.empty()) why = "nvidia-smi lists no GPU";
            } catch (const tool_error& e) {
                const std::string what = e.what();
                why = what.substr(0, what.find(';'));  // its first clause: the fix is for another tool
            }
            std::optional<std::string> mask;
            std::string mask_name = "CUDA_VISIBLE_DEVICES";
            if (const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES")) mask = cvd;
            else
                for (const char* v : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"})  // indices, when a job set no mask
                    if (const char* s = std::getenv(v)) {
                        mask = s;
                        mask_name = v;
                        break;
                    }
            std::string mask_why;
            std::vector<gpu_record> visible = all.empty() ? all : visible_gpus(all, mask, &mask_why);
            if (!all.empty() && visible.empty())
                why = fmt::format("{}='{}' leaves none of the {} GPUs nvidia-smi lists{}", mask_name, mask.value_or(""),
                                  all.size(), mask_why.empty() ? "" : ": " + mask_why);
            if (plan.gpus && visible.empty())
                throw tool_error(fmt::format("{}: no GPU to spread over here: {}; drop {} to run the jobs one after "
                                             "another on this host",
                                             words::param("gpus"), why, words::param("gpus")));
            std::vector<gpu_record> chosen = plan.gpus ? choose_gpus(visible, *plan.gpus) : visible;
            std::erase_if(chosen, [](const gpu_record& g) { return !g.uuid; });  // nothing to lease or pin by
            gpu_pool_runner::options o;
            const auto cpus = allowed_cpus();
            json gpus = json::array();
            for (std::size_t i = 0; i < chosen.size(); ++i) {
                pool_card c{chosen[i], core_slice(cpus, i, chosen.size())};
                gpus.push_back(json{{"index", chosen[i].index ? json(*chosen[i].index) : json(nullptr)},
                                    {"uuid", *chosen[i].uuid},
                                    {"name", chosen[i].name},
                                    {"cpus", cpu_list_text(c.cpus)}});
                o.cards.push_back(std::move(c));
            }
            if (o.cards.empty() && total > 1) out.warnings.push_back(findings::no_gpu_to_spread(total, shorten(why, 300)));
            o.lease_wait_s = env_seconds("HOTKERNEL_GPU_LEASE_WAIT_S", bound_s);
            o.what = [&jobs, job_of](const process_spec& spec) {
                const spread_job& j = jobs.at(job_of(spec));
                return fmt::format("{} {}", j.tool, j.label);
            };
            o.note = [&jobs, job_of, add_note](const process_spec& spec, const std::string& text) {
                add_note(fmt::format("{} {}", jobs.at(job_of(spec)).label, text));
            };
            executor = std::make_unique<gpu_pool_runner>(*ctx.runner, std::move(o));
            about = json{{"executor", "pool"}, {"gpus", gpus}, {"lease_dir", lease_dir().string()}};
            remote_bin = self_exe();
            break;
        }
        case executor_kind::slurm: {
            slurm_dir = slurm_run_dir();
            about = json{{"executor", "slurm"}, {"partitions", plan.partitions}, {"dir", slurm_dir.string()}};
            break;
        }
        case executor_kind::command:
            executor = std::make_unique<command_runner>(*ctx.runner, plan.command);
            about = json{{"executor", "command"}, {"command", plan.command}};
            break;
    }

    // Slurm: one executor per partition, each submitting its jobs as one array.
    std::map<std::string, std::unique_ptr<slurm_runner>> per_partition;
    std::vector<std::string> slurm_args;
    if (plan.kind == executor_kind::slurm) slurm_args = split_command_line(getenv_or("HOTKERNEL_SLURM_ARGS"));
    auto executor_for = [&](const spread_job& j) -> process_runner& {
        if (plan.kind != executor_kind::slurm) return *executor;
        auto& e = per_partition[j.partition];
        if (!e) {
            slurm_runner::options o;
            o.partition = j.partition;
            o.dir = slurm_dir;
            o.job_name = "hotkernel-" + slurm_dir.filename().string();
            o.gres = getenv_or("HOTKERNEL_SLURM_GRES", "gpu:1");
            if (const char* g = std::getenv("HOTKERNEL_SLURM_GRES"); g != nullptr && *g == '\0') o.gres.clear();
            o.sbatch_args = slurm_args;
            o.queue_limit_s = env_seconds("HOTKERNEL_SLURM_QUEUE_S", 3600);
            o.note = [&, part = j.partition](process_runner::job_id id, const std::string& text) {
                auto it = slurm_job.find(id);
                if (it != slurm_job.end()) add_note(fmt::format("{} on {}: {}", jobs[it->second].label, part.empty() ? "slurm" : part, text));
            };
            e = std::make_unique<slurm_runner>(*ctx.runner, std::move(o));
        }
        return *e;
    };

    struct in_flight {
        process_runner* ex;
        process_runner::job_id id;
        std::size_t job;
        fs::path result_file;
    };
    std::vector<in_flight> pending;
    out.outcomes.resize(total);
    const std::string python = ctx.python;
    for (std::size_t k = 0; k < total; ++k) {
        const spread_job& j = jobs[k];
        json job{{"tool", j.tool}, {"args", j.args}, {"words", ctx.words == front_end::mcp ? "mcp" : "cli"}};
        if (!python.empty()) job["python"] = python;
        process_spec spec;
        spec.timeout_s = job_bound_s(j);
        spec.kill_grace_s = 10;  // the child cancels its own runs first
        spec.max_capture_bytes = 64u << 20;
        spec.env_set["HOTKERNEL_JOB"] = std::to_string(k);
        std::error_code ec;
        fs::path result_file;
        if (plan.kind == executor_kind::slurm) {
            result_file = slurm_dir / fmt::format("result-{}.json", k);
            job["result"] = result_file.string();
            const fs::path job_file = slurm_dir / fmt::format("job-{}.json", k);
            write_file_atomic(job_file, dump_pretty(job) + "\n");
            spec.argv = {remote_bin, "--quiet", "run-job", job_file.string()};
            spec.cwd = fs::current_path(ec);
        } else {
            spec.argv = {remote_bin, "--quiet", "run-job", "-"};
            spec.stdin_data = dump_line(job) + "\n";
            if (plan.kind == executor_kind::pool) spec.env_set["HOTKERNEL_PARENT_PID"] = std::to_string(::getpid());
        }
        process_runner& ex = executor_for(j);
        const auto id = ex.submit(std::move(spec));
        if (plan.kind == executor_kind::slurm) slurm_job[id] = k;
        pending.push_back({&ex, id, k, result_file});
    }
    // Progress goes out at most about once a second, each message every line since the last, and
    // its count always rising: MCP's progress (session.cpp) drops a notification that comes
    // sooner or counts no higher, and no job's line may be lost.
    std::vector<std::string> unsent = {fmt::format("{} job(s) submitted", total)};
    double shown = -1;
    auto last_sent = steady::now() - std::chrono::seconds(10);
    auto emit = [&](double done_now, bool now) {
        if (unsent.empty() || (!now && steady::now() - last_sent < std::chrono::milliseconds(1050))) return;
        const double value = std::max(done_now, shown + 0.001);
        ctx.progress(std::min(value, static_cast<double>(total)), static_cast<double>(total), join(unsent, "; "));
        shown = value;
        last_sent = steady::now();
        unsent.clear();
    };
    emit(0, true);

    std::size_t done = 0, failed = 0;
    bool cancel_sent = false;
    double waited_others = 0;
    std::size_t waited_jobs = 0;
    std::vector<std::string> failures;
    const double result_wait_s = plan.kind == executor_kind::slurm ? env_seconds("HOTKERNEL_SLURM_RESULT_WAIT_S", 30) : 0;
    while (!pending.empty()) {
        {
            std::vector<std::string> batch;
            {
                std::lock_guard lock(*notes_mutex);
                batch.swap(*notes);
            }
            unsent.insert(unsent.end(), batch.begin(), batch.end());
        }
        if (ctx.cancel.cancelled() && !cancel_sent) {
            cancel_sent = true;
            for (auto& p : pending) p.ex->cancel(p.id);
        }
        for (auto it = pending.begin(); it != pending.end();) {
            if (!it->ex->poll(it->id)) {
                ++it;
                continue;
            }
            process_result r = it->ex->result(it->id);
            job_outcome& o = out.outcomes[it->job];
            o.placement = r.placement;
            json answer = nullptr;
            if (!it->result_file.empty()) {
                // The result file is the truth; a shared filesystem may show it late.
                const auto w0 = steady::now();
                std::error_code ec;
                while (!fs::exists(it->result_file, ec) && r.placement["state"] == "COMPLETED" &&
                       std::chrono::duration<double>(steady::now() - w0).count() < result_wait_s && !ctx.cancel.cancelled())
                    std::this_thread::sleep_for(std::chrono::milliseconds(500));
                if (fs::exists(it->result_file, ec)) {
                    try {
                        answer = last_json_object(read_file(it->result_file));
                    } catch (const tool_error&) {
                    }
                }
            }
            if (answer.is_null()) answer = last_json_object(r.stdout_text);
            if (answer.is_object() && answer.contains("job_error")) {
                o.error = answer.value("job_error", std::string("the job failed"));
                o.usage_error = answer.value("kind", "") == "usage";
                // Killed by its scheduler (TIMEOUT, NODE_FAIL, ...), it said only that it was stopped.
                if (auto why = r.placement.find("reason"); why != r.placement.end())
                    o.error = fmt::format("{} (the job said: {})", why->second, shorten(o.error, 300));
            } else if (answer.is_object()) {
                o.result = std::move(answer);
            } else {
                o.error = no_result_why(r, r.placement, job_bound_s(jobs[it->job]));
            }
            if (o.result.is_null()) {
                ++failed;
                failures.push_back(fmt::format("{} on {} ({})", jobs[it->job].label, where_text(o.placement),
                                               shorten(o.error, 120)));
            }
            if (auto w = o.placement.find("waited_for_others_s"); w != o.placement.end()) {
                waited_others += std::stod(w->second);
                ++waited_jobs;
            }
            ++done;
            unsent.push_back(outcome_line(jobs[it->job], o));
            it = pending.erase(it);
        }
        if (pending.empty() && !unsent.empty() && !ctx.cancel.cancelled()) {
            // The last lines go out below the total: MCP drops a progress equal to it (it would race
            // the answer) or sooner than a second after the one before, and the outcomes of jobs
            // that ended since then would be lost with it.
            const auto since = steady::now() - last_sent;
            if (since < std::chrono::milliseconds(1050))
                std::this_thread::sleep_for(std::chrono::milliseconds(1050) - since);
            emit(std::min(static_cast<double>(done), static_cast<double>(total) - 0.001), true);
        }
        emit(static_cast<double>(done), pending.empty());
        if (!pending.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (failed > 0) out.warnings.push_back(findings::spread_jobs_failed(failed, total, shorten(join(failures, "; "), 1500)));
    if (waited_jobs > 0) out.warnings.push_back(findings::gpu_leases_waited(waited_jobs, waited_others, lease_dir().string()));
    about["jobs"] = total;
    about["wall_s"] = std::chrono::duration<double>(steady::now() - t0).count();
    out.about = std::move(about);
    return out;
}

}  // namespace hotkernel::scale
