// calibrate: measure this card's streaming-copy bandwidth and bf16 matmul rate under the repo's
// own timer (python/hotkernel_calibrate.py in the user's interpreter) and cache them per GPU
// UUID, so roofline gives attainable_ms_measured without being told measured_mem_gbs.
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "gpu/gpu_query.h"
#include "gpu/spec_table.h"
#include "python/interpreter.h"
#include "registry/tool.h"
#include "scale/lease.h"
#include "store/results_store.h"
#include "report/findings.h"
#include "util/files.h"
#include "util/strings.h"

namespace hotkernel {
namespace fs = std::filesystem;
namespace {

/// The last stdout line that parses as a JSON object.
json last_json_line(const std::string& text) {
    auto lines = split_lines(text);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        std::string l = trim(*it);
        if (l.empty() || l.front() != '{') continue;
        json j = json::parse(l, nullptr, false);
        if (j.is_object()) return j;
    }
    return nullptr;
}

struct calibrate_args {
    int gpu = 0;
    double timeout_s = 0;
};

json calibrate_handler(const calibrate_args& args, tool_context& ctx) {
    const int index = args.gpu;
    const double timeout_s = args.timeout_s;
    std::vector<gpu_record> gpus;
    try {
        gpus = query_gpus(*ctx.runner, ctx.cancel);
    } catch (const tool_error& e) {
        // Keep the driver's reason, drop advice meant for roofline (which works without a GPU).
        std::string why = e.what();
        if (auto cut = why.find(". roofline"); cut != std::string::npos) why.erase(cut);
        throw tool_error("calibrate measures a GPU in this machine and found none usable: " + why);
    }
    if (gpus.empty())
        throw tool_error("nvidia-smi lists no GPU; calibrate measures a GPU: run it on a machine with an NVIDIA GPU");
    const gpu_record* g = nullptr;
    for (const auto& r : gpus)
        if (r.index && *r.index == index) g = &r;
    if (!g)
        throw usage_error(fmt::format("there is no GPU {} (this machine has {} GPU(s), indices 0..{}); pass {} with one of them",
                                      index, gpus.size(), gpus.size() - 1, words::param("gpu")));
    if (!g->uuid)
        throw tool_error(fmt::format("nvidia-smi gave no UUID for GPU {} ({}); the calibration is cached per UUID, so it "
                                     "cannot be stored; update the driver",
                                     index, g->name));

    // The card's pool lease (src/scale/lease.h): no pool job's runs share the card while its
    // bandwidth and the spread between processes are measured.
    const auto lease = scale::lease_card_for_run(
        g->uuid, fmt::format("calibrate GPU {} (pid {})", index, ::getpid()), std::max(600.0, 2 * timeout_s),
        [&] { return ctx.cancel.cancelled(); },
        [&](const std::string& holder) {
            ctx.progress(0, 0, "waiting for GPU " + *g->uuid + ": " + shorten(trim(holder), 160));
        });
    const std::string python = resolve_python(ctx);
    process_spec spec;
    // --spread: the streaming copy in 6 processes, one after another: the spread between processes
    // of the same code, which verify's stopping rule and flags use.
    spec.argv = {python, (embedded_python_dir() / "hotkernel_calibrate.py").string(), "--spread", "6"};
    // Pin the child to exactly this card, by UUID so the index order cannot differ.
    spec.env_set["CUDA_VISIBLE_DEVICES"] = *g->uuid;
    spec.env_set["PYTHONUNBUFFERED"] = "1";
    spec.timeout_s = timeout_s;
    ctx.progress(0, 0, fmt::format("measuring {} ({}): streaming copy, then bf16 matmul", g->name, *g->uuid));
    const process_result res = ctx.runner->run(spec, ctx.cancel);
    if (res.cancelled) throw tool_error("calibrate was cancelled");
    if (res.spawn_failed) throw tool_error(fmt::format("could not start '{}': {}", python, res.spawn_error));
    if (res.timed_out)
        throw tool_error(fmt::format("the calibration run {}; raise {} or check that the GPU is not busy. stderr "
                                     "tail:\n{}",
                                     res.describe(timeout_s), words::param("timeout_s"), tail_text(res.stderr_text, 1500)));
    json m = last_json_line(res.stdout_text);
    if (!m.is_object())
        throw tool_error(fmt::format("the calibration run {} without a result line; stderr tail:\n{}", res.describe(),
                                     tail_text(res.stderr_text, 2000)));
    if (!m.value("ok", false))
        throw tool_error(m.value("error", std::string("the calibration run failed")) +
                         (res.stderr_text.empty() ? "" : "\nstderr tail:\n" + tail_text(res.stderr_text, 1500)));
    if (!m.contains("mem_gbs") || !m["mem_gbs"].is_number() || m["mem_gbs"].get<double>() <= 0)
        throw tool_error("the calibration run gave no positive mem_gbs: " + tail_text(dump_line(m), 500));

    json warnings = json::array();
    for (const auto& w : m.value("warnings", json::array()))  // the calibration script's notes, as strings
        warnings.push_back(findings::calibration_note(w.is_string() ? w.get<std::string>() : dump_line(w)));
    if (m.contains("uuid") && m["uuid"].is_string() && m["uuid"].get<std::string>() != *g->uuid)
        warnings.push_back(findings::gpu_uuid_mismatch(m["uuid"].get<std::string>(), index, *g->uuid));

    json cal{{"uuid", *g->uuid},
             {"gpu", g->name},
             {"mem_gbs", m["mem_gbs"]},
             {"bf16_tflops", m.value("bf16_tflops", json())},
             {"measured_at", utc_now_iso()},
             {"method", m.value("method", std::string())},
             {"torch", m.value("torch", json())},
             {"timer", m.value("timer", json())},
             {"graph_node_gap_us", m.value("graph_node_gap_us", json())}};
    {  // the copy by size (bytes a call, GB/s): the measured floor of a workload is a copy's of its size
        json curve = json::array();
        for (const auto& p : m.value("copy_curve", json::array()))
            if (p.is_object() && p.value("bytes", json()).is_number() && p.value("gbs", json()).is_number() &&
                p["bytes"].get<double>() > 0 && p["gbs"].get<double>() > 0)
                curve.push_back({{"bytes", p["bytes"]}, {"gbs", p["gbs"]}});
        if (!curve.empty()) cal["copy_curve"] = std::move(curve);
    }
    if (m.contains("process_spread") && m["process_spread"].is_object() &&
        m["process_spread"].value("cv_pct", json()).is_number())
        cal["process_spread_pct"] = m["process_spread"]["cv_pct"];
    json details{{"graph_gap", m.value("graph_gap", json())}, {"copies", m.value("copies", json())}, {"matmul", m.value("matmul", json())},
                 {"copy_bytes_per_buffer", m.value("copy_bytes_per_buffer", json())}, {"l2_bytes", m.value("l2_bytes", json())},
                 {"timer_source", m.value("timer_source", json())},
                 {"process_spread", m.value("process_spread", json())},
                 {"copy_curve", m.value("copy_curve", json())}};  // each size's median_ms and sets too
    json file = cal;
    file["details"] = details;
    const fs::path path = calibration_path(*g->uuid);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    write_file_atomic(path, dump_pretty(file) + "\n");

    json out = cal;
    out["index"] = index;
    if (const auto spread = process_spread_in(file)) out["process_spread_bound_pct"] = spread->bound_pct;
    out["path"] = path.string();
    if (const gpu_spec* s = spec_table::builtin().find(g->name)) {
        if (s->mem_gbs) {
            out["spec_mem_gbs"] = *s->mem_gbs;
            out["mem_pct_of_spec"] = 100.0 * m["mem_gbs"].get<double>() / *s->mem_gbs;
        }
        if (auto p = s->peak("bf16"); p && m["bf16_tflops"].is_number()) {
            out["spec_bf16_tflops"] = *p;
            out["bf16_pct_of_spec"] = 100.0 * m["bf16_tflops"].get<double>() / *p;
        }
    }
    out["details"] = details;
    out["warnings"] = warnings;
    return out;
}

std::string calibrate_render(const json& r) {
    std::string out = fmt::format("{} ({})\n", r.value("gpu", ""), r.value("uuid", ""));
    out += fmt::format("streaming copy: {:.0f} GB/s (bytes read + written)", r["mem_gbs"].get<double>());
    if (r.contains("mem_pct_of_spec")) out += fmt::format(", {:.0f}% of the datasheet's {:.0f} GB/s", r["mem_pct_of_spec"].get<double>(), r["spec_mem_gbs"].get<double>());
    out += "\n";
    if (r["bf16_tflops"].is_number()) {
        out += fmt::format("bf16 matmul: {:.0f} TFLOPS", r["bf16_tflops"].get<double>());
        if (r.contains("bf16_pct_of_spec")) out += fmt::format(", {:.0f}% of the datasheet's {:.0f}", r["bf16_pct_of_spec"].get<double>(), r["spec_bf16_tflops"].get<double>());
        out += "\n";
    }
    if (r.contains("graph_node_gap_us") && r["graph_node_gap_us"].is_number())
        out += fmt::format("CUDA-graph node gap: {:.3f} us (part of every graph-timed call's ms; see docs/measurement.md)\n",
                           r["graph_node_gap_us"].get<double>());
    if (r.contains("process_spread_pct") && r["process_spread_pct"].is_number()) {
        out += fmt::format("spread between processes: {:.3f}% (cv of the copy's time in 6 processes", r["process_spread_pct"].get<double>());
        if (r.contains("process_spread_bound_pct") && r["process_spread_bound_pct"].is_number())
            out += fmt::format("; its 95% upper bound {:.3f}%, twice which is verify's floor for an early decisive stop",
                               r["process_spread_bound_pct"].get<double>());
        out += ")\n";
    }
    if (r.contains("copy_curve") && r["copy_curve"].is_array() && r["copy_curve"].size() > 1) {
        out += "streaming copy by size (the measured floor's bandwidth at a workload's bytes):";
        for (const auto& p : r["copy_curve"])
            out += fmt::format(" {:.0f} MiB {:.0f} GB/s;", p["bytes"].get<double>() / 1048576.0, p["gbs"].get<double>());
        out.back() = '\n';
    }
    out += "method: " + r.value("method", std::string()) + "\n";
    out += "cached at " + r.value("path", std::string()) + " (roofline uses it for attainable_ms_measured)\n";
    for (const auto& w : r["warnings"]) out += "warning: " + finding_message(w) + "\n";
    return out;
}

}  // namespace

tool_spec calibrate_tool() {
    tool_spec t;
    t.name = "calibrate";
    t.title = "Calibrate";
    t.summary = "Measure and cache this GPU's streaming bandwidth and bf16 rate";
    t.description =
        "Measure this GPU's real bandwidth and bf16 rate: returns and caches both for roofline. Call it once "
        "per GPU.";
    t.details =
        "Measure, on this GPU and under the repo's own timer (warm-up, CUDA-graph replay timed by CUPTI's "
        "kernel records, or by events where CUPTI cannot be read; median of samples), the bandwidth of a "
        "large streaming device-to-device copy (bytes read + written, buffers >= 8x L2) and the rate of a "
        "8192^3 bf16 matrix product, and cache them per GPU UUID under the cache folder "
        "(calibration/<uuid>.json). roofline then reports attainable_ms_measured without being told "
        "measured_mem_gbs. The same copy is timed at 8-512 MiB a call too (copy_curve): a call's measured floor "
        "takes a copy of its own size's bandwidth, since a small copy does not reach a large one's. It also "
        "reports the gap a CUDA graph leaves between two dependent tiny kernels "
        "(events against CUPTI's kernel durations): what the events-timed graph timer (timer: cuda_graph) "
        "reads above the kernel time of a call of a few microseconds. Takes about 10-30 s; needs an NVIDIA "
        "GPU and torch with CUDA in the user's interpreter.";
    t.output_schema = json{
        {"type", "object"},
        {"required", {"uuid", "gpu", "mem_gbs", "bf16_tflops", "measured_at", "method", "path", "warnings"}},
        {"properties",
         {{"uuid", {{"type", "string"}}},
          {"gpu", {{"type", "string"}}},
          {"mem_gbs", {{"type", "number"}, {"description", "streaming copy, bytes read + written, 1e9 B/s"}}},
          {"bf16_tflops", {{"type", {"number", "null"}}}},
          {"measured_at", {{"type", "string"}}},
          {"method", {{"type", "string"}}},
          {"torch", {{"type", {"string", "null"}}}},
          {"graph_node_gap_us",
           {{"type", {"number", "null"}},
            {"description", "replay period per node of a CUDA graph of tiny kernels minus torch.profiler's kernel "
                            "duration (us, median over three kernels): what a graph-timed tiny call reads above its "
                            "kernel time; reported, not subtracted"}}},
          {"copy_curve",
           {{"type", "array"},
            {"description", "the same copy at smaller sizes, rotated through 3x L2 (bytes read + written a call, "
                            "GB/s), the large one last: verify's and roofline's measured floor take a copy's bandwidth "
                            "at the call's bytes (interpolated), never above mem_gbs"},
            {"items",
             {{"type", "object"},
              {"required", {"bytes", "gbs"}},
              {"properties", {{"bytes", {{"type", "number"}}}, {"gbs", {{"type", "number"}}}}}}}}},
          {"path", {{"type", "string"}}},
          {"mem_pct_of_spec", {{"type", "number"}}},
          {"bf16_pct_of_spec", {{"type", "number"}}},
          {"details", {{"type", "object"}}},
          {"warnings", findings_schema(finding_kind::warning)}}}};
    t.annotations = {.read_only = false, .destructive = false, .idempotent = false, .open_world = false};
    t.render = calibrate_render;
    return make_tool<calibrate_args>(
        std::move(t),
        {param(&calibrate_args::gpu, {.name = "gpu",
                                      .summary = "GPU index",
                                      .details = "Index of the GPU to measure, as nvidia-smi numbers them.",
                                      .default_value = 0,
                                      .minimum = 0,
                                      .maximum = 1024}),
         param(&calibrate_args::timeout_s, {.name = "timeout_s",
                                            .summary = "Limit in seconds",
                                            .details = "Wall-clock limit for the measuring process in seconds.",
                                            .default_value = 300,
                                            .minimum = 10,
                                            .maximum = 3600})},
        calibrate_handler);
}

}  // namespace hotkernel
