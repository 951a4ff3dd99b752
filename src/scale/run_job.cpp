// run-job: one job of a spread, in the process its executor started.
#include "scale/run_job.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <iterator>

#include <fmt/format.h>

#include "registry/tool.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/strings.h"

namespace hotkernel::scale {
namespace {

std::string env_or(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
}

}  // namespace

json placement_from_env() {
    json p = json::object();
    if (auto uuid = env_or("HOTKERNEL_GPU_LEASE"); !uuid.empty()) p["gpu_uuid"] = uuid;
    if (auto cpus = env_or("HOTKERNEL_CPUS"); !cpus.empty()) p["cpus"] = cpus;
    if (auto part = env_or("SLURM_JOB_PARTITION"); !part.empty()) p["partition"] = part;
    if (auto array = env_or("SLURM_ARRAY_JOB_ID"); !array.empty())
        p["job_id"] = array + "_" + env_or("SLURM_ARRAY_TASK_ID");
    else if (auto job = env_or("SLURM_JOB_ID"); !job.empty())
        p["job_id"] = job;
    if (auto node = env_or("SLURMD_NODENAME"); !node.empty()) p["node"] = node;
    if (!p.empty() && std::getenv("CUDA_VISIBLE_DEVICES") != nullptr)
        p["cuda_visible_devices"] = env_or("CUDA_VISIBLE_DEVICES");
    return p;
}

int run_job_main(const std::string& file, const std::string& python, const cancel_token& cancel) {
    // The parent's death (even by SIGKILL) reaches us as SIGTERM, which cancels: our runs end too.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (auto parent = env_or("HOTKERNEL_PARENT_PID"); !parent.empty() && parent != std::to_string(::getppid()))
        cancel.cancel();  // it died before the line above

    json job;
    std::string result_path;
    auto answer = [&](const json& out, int code) {
        const std::string text = dump_line(out) + "\n";
        if (!result_path.empty()) {
            try {
                write_file_atomic(result_path, text);
            } catch (const tool_error& e) {
                std::cerr << "hotkernel run-job: " << e.what() << "\n";
            }
        }
        std::cout << text << std::flush;
        return code;
    };
    auto failed = [&](const char* kind, const std::string& message, int code) {
        return answer(json{{"job_error", message}, {"kind", kind}}, code);
    };
    try {
        std::string text;
        if (file == "-") text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
        else text = read_file(file);
        job = json::parse(text, nullptr, false);
        if (!job.is_object() || !job.value("tool", json()).is_string() || !job.value("args", json()).is_object())
            return failed("usage", fmt::format("run-job: {} is not a job ({{\"tool\": …, \"args\": {{…}}}})",
                                               file == "-" ? "stdin" : file),
                          2);
        if (job.value("result", json()).is_string()) result_path = job["result"].get<std::string>();
        const tool_spec* tool = find_tool(job["tool"].get<std::string>());
        if (tool == nullptr)
            return failed("usage", fmt::format("run-job: no tool '{}'", shorten(job["tool"].get<std::string>(), 80)), 2);

        posix_runner runner;
        tool_context ctx;
        ctx.runner = &runner;
        ctx.python = job.value("python", json()).is_string() ? job["python"].get<std::string>() : python;
        ctx.cancel = cancel;
        ctx.words = job.value("words", "cli") == "mcp" ? front_end::mcp : front_end::cli;
        // Progress goes to stderr: a Slurm job's log shows where it is.
        ctx.progress = [](double done, double total, const std::string& msg) {
            std::cerr << fmt::format("hotkernel run-job: {:.0f}/{:.0f} {}\n", done, total, shorten(msg, 300)) << std::flush;
        };
        ctx.log = [](const std::string& line) { std::cerr << line << "\n"; };
        if (json where = placement_from_env(); !where.empty()) ctx.result_extra = json{{"placement", where}};
        json args = job["args"];
        if (tool->lean) args["detail"] = "full";  // the caller projects it
        return answer(call_tool(*tool, args, ctx), 0);
    } catch (const usage_error& e) {
        return failed("usage", e.what(), 2);
    } catch (const tool_error& e) {
        return failed("tool", e.what(), 1);
    } catch (const std::exception& e) {
        return failed("internal", fmt::format("hotkernel internal error: {}; please report it", e.what()), 3);
    }
}

}  // namespace hotkernel::scale
