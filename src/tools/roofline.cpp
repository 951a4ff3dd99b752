// roofline: how far a kernel can go on a GPU, from its flops and bytes and the spec table.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gpu/gpu_query.h"
#include "gpu/roofline.h"
#include "gpu/spec_table.h"
#include "plot/save.h"
#include "registry/tool.h"
#include "tools/plot_param.h"
#include "report/findings.h"
#include "util/strings.h"

namespace hotkernel {

namespace {

struct resolved_gpu {
    const gpu_spec* spec = nullptr;
    std::string name;                 ///< as nvidia-smi or the user named it
    std::optional<int> index;         ///< when picked from this machine
    std::optional<std::string> uuid;
    std::optional<std::string> mig_mode;
};

bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

resolved_gpu resolve(const std::string& gpu_arg, tool_context& ctx) {
    const spec_table& table = spec_table::builtin();
    const std::string arg = trim(gpu_arg);
    if (arg.empty())
        throw tool_error("gpu is empty; pass an index of this machine's GPUs (0, 1, …), a table key (h200_sxm) "
                         "or an nvidia-smi name (\"NVIDIA H200\")");
    if (!all_digits(arg)) {
        resolved_gpu r;
        r.spec = table.find(arg);
        r.name = arg;
        if (!r.spec) {
            auto close = table.suggestions(arg);
            throw tool_error(fmt::format("unknown GPU '{}': not a key or nvidia-smi name in the spec table; {}"
                                         "pass a key such as h200_sxm, or an nvidia-smi name such as \"NVIDIA H200\" "
                                         "(hotkernel gpu-info shows this machine's names)",
                                         shorten(arg), close.empty() ? std::string() : "close matches: " + join(close) + "; "));
        }
        return r;
    }
    const int index = std::stoi(arg.size() > 6 ? std::string("999999") : arg);
    std::vector<gpu_record> gpus;
    try {
        gpus = query_gpus(*ctx.runner, ctx.cancel);
    } catch (const tool_error& e) {
        throw tool_error(fmt::format("no GPU in this machine to use as {} ({}); to compute a roofline without a GPU, "
                                     "name one: {} or a table key such as h100_sxm5",
                                     words::param("gpu", std::to_string(index)), e.what(),
                                     words::param("gpu", "NVIDIA H200")));
    }
    if (gpus.empty())
        throw tool_error(fmt::format("no GPU in this machine and none named: pass {} with a table key (h200_sxm) or "
                                     "an nvidia-smi name ({})",
                                     words::param("gpu"), words::param("gpu", "NVIDIA H200")));
    auto it = std::find_if(gpus.begin(), gpus.end(), [&](const gpu_record& g) { return g.index == index; });
    if (it == gpus.end())
        throw tool_error(fmt::format("this machine has no GPU {} (it has {} GPU{}: indices 0-{}); pass one of "
                                     "those, or a table key / nvidia-smi name",
                                     index, gpus.size(), gpus.size() == 1 ? "" : "s", gpus.size() - 1));
    resolved_gpu r;
    r.name = it->name;
    r.index = index;
    r.uuid = it->uuid;
    r.mig_mode = it->mig_mode;
    r.spec = table.find(it->name);
    if (!r.spec) {
        auto close = table.suggestions(it->name);
        throw tool_error(fmt::format("GPU {} ('{}') is not in the spec table (data/gpu-specs.csv), so its peaks are "
                                     "unknown; pass {} with the key of the closest datasheet row{}",
                                     index, it->name, words::param("gpu"), close.empty() ? std::string() : " (close: " + join(close) + ")"));
    }
    return r;
}

struct roofline_args {
    std::string gpu;
    double flops = 0;
    double bytes = 0;
    std::string dtype;
    std::optional<double> measured_mem_gbs;
    std::optional<double> baseline_ms;
    std::optional<double> candidate_ms;
    std::optional<std::string> plot;
};

json run(const roofline_args& args, tool_context& ctx) {
    const std::string dtype = to_lower(args.dtype);
    const double flops = args.flops;
    const double bytes = args.bytes;
    if (flops < 0) throw usage_error(fmt::format("flops must be >= 0, got {}", flops));
    if (bytes <= 0)
        throw usage_error(fmt::format("bytes must be > 0 (the DRAM bytes one call reads plus writes), got {}", bytes));

    if (args.plot) plot::check_plot_arg(*args.plot);
    resolved_gpu g = resolve(args.gpu, ctx);
    const gpu_spec& spec = *g.spec;
    auto peak = spec.peak(dtype);
    if (!peak) {
        std::vector<std::string> has;
        for (const auto& d : spec_dtypes)
            if (spec.peak(d)) has.push_back(d);
        throw tool_error(fmt::format("{} ({}) has no {} tensor peak in the spec table (no such tensor path, or no "
                                     "published figure); use one of: {}",
                                     spec.display_name(), spec.key, dtype, join(has)));
    }
    if (!spec.mem_gbs)
        throw tool_error(fmt::format("the spec table has no memory bandwidth for {}; add it to data/gpu-specs.csv",
                                     spec.key));

    std::vector<finding> warnings;
    std::optional<double> measured;
    std::string measured_source;
    if (args.measured_mem_gbs) {
        measured = *args.measured_mem_gbs;
        if (*measured <= 0)
            throw usage_error(fmt::format("measured_mem_gbs must be > 0 GB/s, got {}", *measured));
        measured_source = "argument";
    } else if (g.uuid) {
        try {
            if (auto cal = read_calibration(*g.uuid)) {
                measured = calibrated_gbs_at(*cal, bytes);  // a streaming copy of this size's
                measured_source = fmt::format("calibration cache {} (a copy of {:.4g} MiB a call; measured_at {}, method {})",
                                              calibration_path(*g.uuid).string(), bytes / 1048576.0,
                                              cal->value("measured_at", std::string("unknown")),
                                              cal->value("method", std::string("unknown")));
            }
        } catch (const tool_error& e) {
            warnings.push_back(findings::calibration_unreadable(e.what()));
        }
    }

    roofline_input in{.flops = flops, .bytes = bytes, .peak_tflops = *peak, .peak_mem_gbs = *spec.mem_gbs,
                      .measured_mem_gbs = measured};
    roofline_result r = compute_roofline(in);

    json out;
    out["gpu"] = g.name;
    out["spec_key"] = spec.key;
    if (g.index) out["gpu_index"] = *g.index;
    if (g.uuid) out["gpu_uuid"] = *g.uuid;
    out["dtype"] = dtype;
    out["flops"] = flops;
    out["bytes"] = bytes;
    out["peak_tflops"] = *peak;
    out["peak_mem_gbs"] = *spec.mem_gbs;
    out["arithmetic_intensity"] = r.arithmetic_intensity;
    out["ridge_point"] = r.ridge_point;
    out["bound"] = r.bound;
    out["attainable_tflops"] = r.attainable_tflops;
    out["attainable_ms"] = r.attainable_ms;
    if (r.attainable_ms_measured) {
        out["measured_mem_gbs"] = *measured;
        out["measured_mem_gbs_source"] = measured_source;
        out["attainable_ms_measured"] = *r.attainable_ms_measured;
        if (*measured > *spec.mem_gbs * 1.05)
            warnings.push_back(findings::measured_above_peak(*measured, *spec.mem_gbs));
    }
    if (dtype == "int8") warnings.push_back(findings::int8_peaks_in_tops());
    if ((g.mig_mode && to_lower(*g.mig_mode) == "enabled") || is_mig_name(g.name))
        warnings.push_back(findings::mig_enabled(g.name));
    // The kernel's measured times as points: what they reach and how close to the floor.
    json points = json::array();
    for (const auto& [label, ms] : {std::pair{"baseline", args.baseline_ms}, std::pair{"candidate", args.candidate_ms}}) {
        if (!ms) continue;
        if (*ms <= 0) throw usage_error(fmt::format("{}_ms must be > 0 ms, got {}", label, *ms));
        json p{{"label", label}, {"ms", *ms}, {"achieved_tflops", flops / (*ms * 1e9)},
               {"pct_of_floor", 100.0 * r.attainable_ms / *ms}};
        if (r.attainable_ms_measured) p["pct_of_measured_floor"] = 100.0 * *r.attainable_ms_measured / *ms;
        points.push_back(p);
    }
    if (!points.empty()) out["points"] = points;
    out["source"] = spec.source;
    out["warnings"] = warnings;
    if (args.plot)
        out["plot"] = plot::save_plot(*args.plot, "roofline", spec.key, [&](plot::format f) { return plot::draw_roofline(out, f); });
    return out;
}

json output_schema() {
    const json num = {{"type", "number"}};
    return json{
        {"type", "object"},
        {"properties",
         {{"gpu", {{"type", "string"}, {"description", "the GPU as named (nvidia-smi name or the --gpu text)"}}},
          {"spec_key", {{"type", "string"}, {"description", "key of the spec-table row used"}}},
          {"gpu_index", {{"type", "integer"}}},
          {"gpu_uuid", {{"type", "string"}}},
          {"dtype", {{"type", "string"}}},
          {"flops", num},
          {"bytes", num},
          {"peak_tflops", {{"type", "number"}, {"description", "dense datasheet peak [TFLOPS; TOPS for int8]"}}},
          {"peak_mem_gbs", {{"type", "number"}, {"description", "datasheet DRAM bandwidth [GB/s]"}}},
          {"arithmetic_intensity", {{"type", "number"}, {"description", "flops / bytes [flop/B]"}}},
          {"ridge_point", {{"type", "number"}, {"description", "peak flops / peak bandwidth [flop/B]"}}},
          {"bound", {{"type", "string"}, {"enum", json::array({"memory", "compute"})}}},
          {"attainable_tflops", {{"type", "number"}, {"description", "min(peak, intensity x bandwidth)"}}},
          {"attainable_ms", {{"type", "number"}, {"description", "datasheet floor: max(flops/peak, bytes/bandwidth)"}}},
          {"measured_mem_gbs", num},
          {"measured_mem_gbs_source", {{"type", "string"}, {"description", "'argument' or the calibration file"}}},
          {"attainable_ms_measured",
           {{"type", "number"}, {"description", "max(flops/peak, bytes/measured bandwidth): the realistic floor"}}},
          {"points",
           {{"type", "array"},
            {"description", "{label, ms, achieved_tflops, pct_of_floor: 100 * attainable_ms / ms}"},
            {"items", {{"type", "object"}}}}},
          {"plot", plot_result_schema()},
          {"source", {{"type", "string"}, {"description", "datasheet sources of the spec row (S-tags)"}}},
          {"warnings", findings_schema(finding_kind::warning)}}},
        {"required", json::array({"gpu", "spec_key", "dtype", "peak_tflops", "peak_mem_gbs", "arithmetic_intensity",
                                  "ridge_point", "bound", "attainable_tflops", "attainable_ms", "source", "warnings"})},
    };
}

}  // namespace

tool_spec roofline_tool() {
    tool_spec t;
    t.name = "roofline";
    t.title = "Roofline";
    t.summary = "Bound, attainable TFLOPS and the time floor of a kernel on a GPU";
    t.description =
        "Compute a kernel's floor: returns bound and attainable_ms from flops and bytes (roofline_inputs). "
        "Call it to know when to stop.";
    t.details =
        "Roofline for a GPU (default: the first GPU in this machine): given a kernel's flops and bytes moved "
        "(bench()/verify() return them as roofline_inputs), returns the arithmetic intensity, the ridge "
        "point, whether it is memory- or compute-bound, the attainable TFLOPS and attainable_ms, the time "
        "floor from the spec sheet. Pass measured_mem_gbs (the bandwidth a streaming copy reaches on this "
        "card under the repo's timer, see docs/platform-matrix.md; 1501 on the reference RTX 5090) to also "
        "get attainable_ms_measured, the floor a kernel can realistically get within 10% of; without it the "
        "GPU's calibration cache is used when present. Use it to decide when a kernel is done. Works without "
        "a GPU when gpu names a card. dtype: bf16 | fp16 | fp8 | fp32 (| tf32 | int8).";
    t.output_schema = output_schema();
    t.annotations = tool_annotations{.read_only = false, .destructive = false, .idempotent = true, .open_world = false};  // plot writes a file
    return make_tool<roofline_args>(
        std::move(t),
        {param(&roofline_args::gpu,
               {.name = "gpu",
                .summary = "GPU index, spec-table key or nvidia-smi name",
                .details = "Case-insensitive; an index needs nvidia-smi, a key or name works without a GPU.",
                .default_value = "0",
                .max_length = 256}),
         param(&roofline_args::flops, {.name = "flops",
                                       .summary = "Flops per call (matmul: 2*M*N*K)",
                                       .required = true,
                                       .minimum = 0.0}),
         param(&roofline_args::bytes, {.name = "bytes",
                                       .summary = "DRAM bytes per call, read + written",
                                       .required = true,
                                       .minimum = 0.0,
                                       .exclusive_minimum = true}),
         param(&roofline_args::dtype,
               {.name = "dtype",
                .summary = "Dtype of the tensor peak",
                .details = "Data type whose dense tensor peak applies (fp16 = FP32 accumulate; int8 in TOPS).",
                .default_value = "bf16",
                .choices = spec_dtypes}),
         param(&roofline_args::measured_mem_gbs,
               {.name = "measured_mem_gbs",
                .summary = "Measured bandwidth [GB/s]",
                .details = "Without it: the GPU's calibration cache (calibrate), if any. See docs/platform-matrix.md; "
                           "1501 on the reference RTX 5090.",
                .minimum = 0.0,
                .exclusive_minimum = true}),
         param(&roofline_args::baseline_ms,
               {.name = "baseline_ms",
                .summary = "Baseline ms/call: a point, % of floor",
                .details = "verify's baseline.mean_ms.",
                .minimum = 0.0,
                .exclusive_minimum = true}),
         param(&roofline_args::candidate_ms,
               {.name = "candidate_ms",
                .summary = "Candidate ms/call: a point, % of floor",
                .details = "verify's candidate.mean_ms.",
                .minimum = 0.0,
                .exclusive_minimum = true}),
         param(&roofline_args::plot, plot_param("the roofline"))},
        run);
}

}  // namespace hotkernel
