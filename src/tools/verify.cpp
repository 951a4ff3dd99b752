// verify: baseline and candidate interleaved (ABBA), the seed's verdict, a paired speedup
// with its 95% interval, implausibility flags and the record of how it was measured.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "export/export.h"
#include "gpu/gpu_query.h"
#include "gpu/roofline.h"
#include "gpu/spec_table.h"
#include "measure/compare.h"
#include "measure/consistency.h"
#include "measure/measure.h"
#include "measure/pairs.h"
#include "measure/process_spread.h"
#include "measure/trusted_launcher.h"
#include "measure/warm_launcher.h"
#include "plot/save.h"
#include "python/interpreter.h"
#include "registry/lean.h"
#include "registry/tool.h"
#include "tools/plot_param.h"
#include "tools/run_params.h"
#include "report/findings.h"
#include "scale/lease.h"
#include "scale/spread.h"
#include "stats/gate.h"
#include "stats/paired.h"
#include "stats/stopping.h"
#include "stats/summary.h"
#include "store/results_store.h"
#include "util/host.h"
#include "util/words.h"
#include "util/strings.h"
#include "vcs/git_checkout.h"
#include "util/schema_version.h"

namespace hotkernel {
namespace {
namespace fs = std::filesystem;

bool ran_on_cpu(const json& line) {
    json d = line_field(line, "device");
    return d.is_string() && starts_with_ci(d.get<std::string>(), "cpu");
}

struct gpu_context {
    std::optional<gpu_record> gpu;
    std::string note;  ///< why there is no GPU record
};

gpu_context find_gpu(tool_context& ctx) {
    gpu_context g;
    try {
        auto gpus = query_gpus(*ctx.runner, ctx.cancel);
        g.gpu = visible_gpu(gpus);
        if (!g.gpu) {
            const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
            g.note = gpus.empty() ? "nvidia-smi lists no GPU"
                                  : fmt::format("CUDA_VISIBLE_DEVICES='{}' names no GPU that nvidia-smi lists",
                                                env ? env : "");
        }
    } catch (const tool_error& e) {
        g.note = e.what();
    }
    return g;
}

json clock_state(tool_context& ctx, const gpu_context& g) {
    if (!g.gpu || !g.gpu->index) return json{{"state", nullptr}, {"reason", g.gpu ? "GPU index unknown" : g.note}};
    try {
        return query_clock_state(*ctx.runner, ctx.cancel, *g.gpu->index);
    } catch (const tool_error& e) {
        return json{{"state", nullptr}, {"reason", e.what()}};
    }
}

/// The roofline floor of one shape on this GPU: attainable_ms (the datasheet's), the calibrated
/// floor where calibrate measured this card, and each side's fastest run as a percentage of them
/// (pct_of_floor: 100 is at the floor). Flags a candidate under either floor. Null without a GPU
/// the spec table knows, or without roofline_inputs.
json roofline_of(const json& line, const gpu_context& g, double baseline_min_ms, double candidate_min_ms, json& flags,
                 const std::string& workload = "") {
    if (!line.contains("roofline_inputs") || !line["roofline_inputs"].is_object() || !g.gpu) return nullptr;
    const json& ri = line["roofline_inputs"];
    const gpu_spec* spec = spec_table::builtin().find(g.gpu->name);
    if (!spec || !ri.value("bytes", json()).is_number()) return nullptr;
    // Without flops the floor is the bytes' alone: a memory-bound kernel's, said so.
    const bool flops_known = ri.value("flops", json()).is_number();
    const std::string dtype = ri.value("dtype", json("bf16")).is_string() ? ri["dtype"].get<std::string>() : "bf16";
    auto peak = spec->peak(dtype);
    const double flops = flops_known ? ri["flops"].get<double>() : 0.0;
    if (!peak || !spec->mem_gbs || ri["bytes"].get<double>() <= 0 || flops < 0) return nullptr;
    roofline_input in{.flops = flops, .bytes = ri["bytes"].get<double>(), .peak_tflops = *peak,
                      .peak_mem_gbs = *spec->mem_gbs, .measured_mem_gbs = std::nullopt};
    std::string measured_source;
    try {
        if (g.gpu->uuid)
            if (auto cal = read_calibration(*g.gpu->uuid)) {
                in.measured_mem_gbs = calibrated_gbs_at(*cal, in.bytes);  // a copy of this size's
                measured_source = calibration_path(*g.gpu->uuid).string();
            }
    } catch (const tool_error&) {
        // A broken calibration file is roofline's business to report; verify just goes without.
    }
    const roofline_result rr = compute_roofline(in);
    json r{{"gpu_key", spec->key}, {"dtype", dtype}, {"bound", rr.bound}, {"attainable_ms", rr.attainable_ms}};
    auto pct = [](double floor, double ms) { return std::isfinite(ms) && ms > 0 ? json(100.0 * floor / ms) : json(nullptr); };
    r["baseline_pct_of_floor"] = pct(rr.attainable_ms, baseline_min_ms);
    r["candidate_pct_of_floor"] = pct(rr.attainable_ms, candidate_min_ms);
    if (rr.attainable_ms_measured) {
        r["attainable_ms_measured"] = *rr.attainable_ms_measured;
        r["measured_mem_gbs"] = *in.measured_mem_gbs;
        r["baseline_pct_of_measured_floor"] = pct(*rr.attainable_ms_measured, baseline_min_ms);
        r["candidate_pct_of_measured_floor"] = pct(*rr.attainable_ms_measured, candidate_min_ms);
        r["measured_source"] = measured_source;
    }
    r["how"] = "pct_of_floor = 100 x floor / the side's fastest run (100: at the floor)";
    if (!flops_known) r["note"] = "no flops in roofline_inputs: the floor is the bytes' alone (new --flops adds compute)";
    if (std::isfinite(candidate_min_ms) && candidate_min_ms < rr.attainable_ms) {
        json f = findings::under_roofline_floor(candidate_min_ms, spec->display_name(), rr.attainable_ms, in.flops,
                                                in.bytes, dtype);
        if (!workload.empty()) f["workload"] = workload;
        flags.push_back(std::move(f));
    } else if (rr.attainable_ms_measured && in.measured_mem_gbs && std::isfinite(candidate_min_ms) &&
               candidate_min_ms < 0.95 * *rr.attainable_ms_measured) {
        // 5% under: a read-mostly stream may beat the copy's bandwidth that calibrate measures by a little.
        json f = findings::under_measured_floor("candidate", candidate_min_ms, 0.95 * *rr.attainable_ms_measured,
                                                *in.measured_mem_gbs, workload);
        if (!workload.empty()) f["workload"] = workload;
        flags.push_back(std::move(f));
    }
    return r;
}

/// One side's fastest run in a compare_runs side object (NaN when absent).
double min_ms_of(const json& side) {
    return side.is_object() && side.value("min_ms", json()).is_number() ? side["min_ms"].get<double>() : NAN;
}

/// The spread between processes of the same code on this card: the wider of calibrate's (the
/// cv of a copy over its processes) and bench's of this baseline (measure/process_spread.h), as
/// 95% upper bounds: a cv from a few processes is often well under the true spread, and a
/// target's kernel may spread far more than the copy (an H100's gelu A/A verifies differed by up
/// to 0.31% after one ABBA cycle where its calibrate measured 0.006%:
/// bench/runs/2026-12-06-gpu-main-checks). Zeros when neither was measured (no GPU).
process_spread process_spread_of(const gpu_context& g, const std::string& baseline_path,
                                 const std::vector<std::string>& args) {
    if (!g.gpu || !g.gpu->uuid) return {};
    std::optional<process_spread> benched;
    try {
        benched = read_target_spread(*g.gpu->uuid, baseline_key(baseline_path, args));
    } catch (const tool_error&) {  // the baseline unreadable: its runs will say so
    }
    return wider_spread(read_calibrated_spread(*g.gpu->uuid), benched);
}

/// A decisive verdict whose effect is under twice the spread between processes is said so: two
/// processes of one code differ by about that much (one warning, naming the workloads).
void check_effect_size(const json& result, const process_spread& spread, json& warnings) {
    if (!(spread.bound > 0)) return;
    std::vector<std::pair<std::string, double>> small;
    auto effect = [](const json& x) {
        return x.value("speedup", json()).is_number() ? std::fabs(x["speedup"].get<double>() - 1.0) : NAN;
    };
    if (result.contains("workloads")) {
        for (const auto& w : result["workloads"])
            if ((w["verdict"] == "faster" || w["verdict"] == "slower") && effect(w) < 2 * spread.bound)
                small.emplace_back(w.value("name", ""), effect(w));
    } else if ((result["verdict"] == "faster" || result["verdict"] == "slower") && effect(result) < 2 * spread.bound) {
        small.emplace_back("", effect(result));
    }
    if (small.empty()) return;
    double worst = 1;
    std::string where;
    for (const auto& [name, e] : small) {
        worst = std::min(worst, e);
        if (!name.empty()) where += (where.empty() ? " at " : ", ") + name;
    }
    warnings.push_back(findings::effect_under_process_spread(100 * worst, 200 * spread.bound, spread.source + where));
}

struct verify_args {
    std::string baseline;
    std::optional<std::string> candidate;
    std::size_t n = 0;
    std::optional<std::size_t> warmup;
    double timeout_s = 0;
    std::vector<std::string> args;
    bool warm = true;
    bool allow_unsandboxed = false;
    bool isolate = true;
    bool stop_early = true;
    std::optional<std::string> fail_on;
    std::vector<std::string> exports;
    std::optional<std::string> baseline_ref;
    std::optional<std::string> plot;
};

/// The gate's verdict on the result, as the result's `gate` object.
json gate_json(const gate_rule& rule, const json& result) {
    gate_input in{.verdict = result.value("verdict", std::string())};
    if (result.contains("speedup") && result["speedup"].is_number()) in.speedup = result["speedup"].get<double>();
    if (result.contains("speedup_ci95") && result["speedup_ci95"].is_object()) {
        const json& ci = result["speedup_ci95"];
        if (ci.value("low", json()).is_number()) in.ci_low = ci["low"].get<double>();
        if (ci.value("high", json()).is_number()) in.ci_high = ci["high"].get<double>();
    }
    const gate_result g = apply_gate(rule, in);
    return json{{"fail_on", gate_text(rule)}, {"outcome", to_string(g.outcome)}, {"reason", g.reason}};
}

json verify_handler(const verify_args& a, tool_context& ctx) {
    if (!a.candidate && !a.baseline_ref)
        throw usage_error(fmt::format("verify: missing required parameter {} (the candidate script); or give {} to "
                                      "verify the working copy of {} against that git ref",
                                      words::param("candidate"), words::param("baseline_ref"), words::param("baseline")));
    const std::string candidate = a.candidate.value_or(a.baseline);
    const std::size_t n = a.n;
    const bool stop_early = a.stop_early;
    const double timeout_s = a.timeout_s;
    const std::vector<std::string>& script_args = a.args;
    std::optional<gate_rule> gate;
    if (a.fail_on) {  // checked before any run: a typo must not cost a verify
        std::string why;
        gate = parse_gate(*a.fail_on, why);
        if (!gate) throw usage_error(fmt::format("verify: {}: {}", words::param("fail_on"), why));
    }
    std::vector<export_spec> exports;
    for (const auto& e : a.exports) exports.push_back(parse_export(e, "verify: " + words::param("export")));
    // baseline_ref: the baseline's folder as it is in that commit, copied out; removed on return.
    std::optional<ref_checkout> from_ref;
    if (a.baseline_ref) from_ref.emplace(checkout_script_at(*a.baseline_ref, a.baseline, *ctx.runner, ctx.cancel));
    const std::string baseline = from_ref ? from_ref->script.string() : a.baseline;
    for (const auto& [role, path] : {std::pair{"baseline", baseline}, std::pair{"candidate", candidate}}) {
        std::error_code ec;
        if (!fs::is_regular_file(path, ec))
            throw tool_error(fmt::format("{} script '{}' does not exist or is not a file; pass the path of a Python "
                                         "script that prints one JSON line with \"ms\"",
                                         role, path));
    }
    if (a.plot) plot::check_plot_arg(*a.plot);
    const std::string python = resolve_python(ctx);
    // Protocol-3 pairs run under the harness (the candidate under the baseline's TARGET);
    // every run is forked from a warm interpreter unless warm=false or forking is unsafe.
    const trust_options trust{.isolated = a.isolate, .allow_unsandboxed = a.allow_unsandboxed};
    auto launcher = make_warm_launcher(make_launcher_for({baseline, candidate}, trust), a.warm,
                                       ctx.fork_servers);
    launcher->prestart(python, baseline, *ctx.runner);  // its imports overlap the GPU queries below
    // Protocol-3 runs warm themselves up inside every run (first call, then until steady), so a
    // discarded pair only costs time; a plain script may time its first call, so it gets one.
    const std::size_t warmup = a.warmup.value_or(launcher->trusted() ? 0 : 1);
    const std::string started_utc = utc_now_iso();
    const auto t0 = std::chrono::steady_clock::now();

    gpu_context gpu = find_gpu(ctx);
    // The card's pool lease (src/scale/lease.h), held for the whole verify: a pool's jobs and this
    // verify take turns on it, whichever started first. None without a known card, or inside a
    // pool's own job (its parent holds it).
    const std::optional<std::string> card = gpu.gpu ? gpu.gpu->uuid : std::nullopt;
    const auto lease = scale::lease_card_for_run(
        card, fmt::format("verify {} (pid {})", candidate, ::getpid()), std::max(600.0, 2 * timeout_s),
        [&] { return ctx.cancel.cancelled(); },
        [&](const std::string& holder) {
            ctx.progress(0, 0, "waiting for GPU " + *card + ": " + shorten(trim(holder), 160));
        });
    json clocks_before = clock_state(ctx, gpu);
    // An early decisive stop needs an effect of at least twice the spread between processes of
    // the same code on this card (its upper bound), where calibrate or a bench of this baseline
    // measured it, and three times after one ABBA cycle (stats/stopping.h).
    const process_spread spread = process_spread_of(gpu, baseline, script_args);
    stopping_rule rule;
    rule.min_effect = 2 * spread.bound;
    rule.fast_min_effect = 3 * spread.bound;

    pair_outcome done = run_pairs({.baseline = baseline, .candidate = candidate, .args = script_args, .n = n,
                                   .warmup = warmup, .stop_early = stop_early, .python = python,
                                   .timeout_s = timeout_s, .rule = rule},
                                  *ctx.runner, ctx.cancel, *launcher, ctx.progress);
    const compare_input& in = done.runs;
    const std::string& stopped = done.stopped;
    const std::vector<const run_record*> all = in_launch_order(in);
    json clocks_after = clock_state(ctx, gpu);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // The verdict, decided once (measure/compare.h): the seed's rule, or each workload's and their summary.
    const json cmp = judge_pairs(in, done.settled_after);
    const json& bline = in.baseline.front().line;
    const json& cline = in.candidate.front().line;

    json result;
    result["verdict"] = cmp["verdict"];
    result["reasons"] = cmp["reasons"];
    json target = line_field(bline, "target");
    if (!target.is_string()) target = line_field(cline, "target");
    if (!target.is_string()) {
        std::string stem = fs::path(candidate).stem().string();
        if (stem.size() > 10 && stem.ends_with("_candidate")) stem.resize(stem.size() - 10);
        target = stem;
    }
    result["target"] = target;
    result["baseline_script"] = from_ref ? from_ref->ref + ":" + from_ref->rel_path : baseline;
    if (from_ref)
        result["baseline_ref"] = json{{"ref", from_ref->ref}, {"commit", from_ref->commit}, {"path", from_ref->rel_path},
                                      {"files", from_ref->files}};
    result["candidate_script"] = candidate;
    result["n"] = in.baseline.size();
    result["n_max"] = n;
    result["warmup"] = warmup;
    result["stopped_early"] = stopped.empty() ? json(nullptr) : json(stopped);
    result["seed"] = line_field(bline, "seed");
    for (const char* f : {"speedup", "speedup_ci95"})
        if (cmp.contains(f)) result[f] = cmp[f];
    result["baseline"] = cmp["baseline"];
    result["candidate"] = cmp["candidate"];
    result["diff_ms"] = cmp["diff_ms"];
    result["threshold_ms"] = cmp["threshold_ms"];
    result["rule"] = cmp["rule"];
    if (cmp.contains("paired")) result["paired"] = cmp["paired"];
    json flags = cmp["flags"];
    json warnings = cmp["warnings"];
    // A run the parent's clock voided and a rerun replaced keeps its flags: a candidate flagged
    // only sometimes gains no second chance from the rerun.
    for (const run_record& v : done.voided) add_run_flags(flags, v);

    const bool on_cpu = ran_on_cpu(bline) || ran_on_cpu(cline);
    if (on_cpu && gpu.gpu) {
        gpu.note = "the scripts ran on the CPU (device: " + line_field(bline, "device").dump() + ")";
        gpu.gpu.reset();
    }
    if (cmp.contains("workloads")) {
        // Each shape judged as a target of its own; the verdict and speedup are their summary, the
        // sides' figures above the runs' totals (each workload's ms times its weight, summed).
        result["workloads"] = cmp["workloads"];
        result["aggregate"] = cmp["aggregate"];
        for (auto& w : result["workloads"]) {
            const std::string name = w["name"];
            json wflags = json::array();
            const json roof = roofline_of(w, gpu, min_ms_of(w["baseline"]), min_ms_of(w["candidate"]), wflags, name);
            if (!roof.is_null()) w["roofline"] = roof;
            for (auto& f : wflags) merge_workload_flag(flags, std::move(f), name);
        }
        result["total_is"] = "baseline and candidate: the workloads' ms a run, each times its weight, summed";
    } else {
        const double c_min = min_ms_of(result["candidate"]);
        const json roof = roofline_of(bline, gpu, min_ms_of(result["baseline"]), c_min, flags);
        if (!roof.is_null()) result["roofline"] = roof;
        if (bline.contains("roofline_inputs")) result["roofline_inputs"] = bline["roofline_inputs"];
        else if (cline.contains("roofline_inputs")) result["roofline_inputs"] = cline["roofline_inputs"];
    }

    check_effect_size(result, spread, warnings);
    // A decisive early stop on a GPU, by under 2%, whose floors are not the target's own: say how
    // to get them (a kernel's processes were seen to differ by 0.3%; a 9x win needs no floor).
    const json& verdict = result["verdict"];
    const double speedup = result.value("speedup", json()).is_number() ? result["speedup"].get<double>() : NAN;
    if (gpu.gpu && launcher->trusted() && !stopped.empty() && !spread.benched &&
        (verdict == "faster" || verdict == "slower" || verdict == "mixed") &&
        !(std::fabs(std::log(speedup)) >= std::log(1.02)))
        warnings.push_back(findings::spread_not_benched(
            result["baseline_script"].get<std::string>(),
            spread.source.empty() ? "no measured spread (10x the seed's threshold after 2 pairs)" : spread.source));
    for (const run_record& v : done.voided)
        warnings.push_back(findings::parent_clock_rerun(fmt::format("{} run {}", v.role, v.index), v.reason));
    if (spread.bound > 0) {
        result["process_spread_pct"] = 100 * spread.measured;
        result["process_spread_bound_pct"] = 100 * spread.bound;
        result["process_spread_source"] = spread.source;
    }
    const int protocol = line_protocol(bline);
    result["protocol"] = protocol;
    result["timer"] = line_field(bline, "timer");
    result["self_reported"] = !(protocol >= 3 && launcher->trusted());
    if (result["self_reported"].get<bool>())
        warnings.push_back(findings::self_reported_timing(protocol, 2));
    for (auto& w : launcher->warnings()) warnings.push_back(std::move(w));
    describe_trust(result, warnings, *launcher, {baseline, candidate});
    if (!launcher->trusted()) {
        if (auto w = contract_mismatch(bline, contract_hash())) warnings.push_back(*w);
        else if (auto wc = contract_mismatch(cline, contract_hash())) warnings.push_back(*wc);
    }
    for (const run_record* r : all)
        if (r->had_invalid_utf8) {
            warnings.push_back(findings::invalid_utf8(std::nullopt));
            break;
        }
    report_run_findings(all, gpu.gpu && gpu.gpu->max_sm_clock_mhz ? *gpu.gpu->max_sm_clock_mhz : NAN, result,
                        warnings);
    if (gpu.gpu && clocks_after.is_object() && clocks_after.value("throttled", false))
        warnings.push_back(findings::gpu_throttled_after());

    json m;
    m["gpu"] = gpu.gpu ? gpu_record_json(*gpu.gpu) : json(nullptr);
    if (!gpu.gpu) m["gpu_note"] = gpu.note;
    m["clocks_before"] = clocks_before;
    m["clocks_after"] = clocks_after;
    m["host"] = host_name();
    json versions = bline.contains("versions") ? bline["versions"] : json(nullptr);
    m["versions"] = versions;
    if (cline.contains("versions") && cline["versions"] != versions) m["candidate_versions"] = cline["versions"];
    m["device"] = line_field(bline, "device");
    m["started_utc"] = started_utc;
    m["timestamp_utc"] = utc_now_iso();
    m["wall_s"] = wall_s;
    m["hotkernel_version"] = hotkernel_version();
    m["contract_hash"] = contract_hash();
    m["launcher"] = launcher->name();
    m["order"] = "ABBA (pair 1 baseline first, pair 2 candidate first, ...), warm-up pairs discarded";
    m["python"] = python;
    m["commands"] = json{{"baseline", shell_join(in.baseline.front().command)},
                         {"candidate", shell_join(in.candidate.front().command)}};
    const json how = launcher->describe();  // a named value: items() of a temporary would dangle
    for (const auto& [k, v] : how.items()) result[k] = v;
    result["measurement"] = m;
    result["flags"] = flags;
    result["warnings"] = warnings;
    json runs = json::array();
    for (const run_record* r : all) runs.push_back(r->to_json());
    result["runs"] = runs;
    if (!done.voided.empty()) {  // the full record keeps what the rerun replaced
        json voided = json::array();
        for (const run_record& v : done.voided) voided.push_back(v.to_json());
        result["voided_runs"] = voided;
    }
    if (gate) result["gate"] = gate_json(*gate, result);
    if (!exports.empty()) result["exports"] = write_exports(exports, result);
    if (a.plot)
        result["plot"] = plot::save_plot(*a.plot, "verify", result["target"].get<std::string>(),
                                         [&](plot::format f) { return plot::draw_verify(result, f); });
    return result;
}

std::string num4(const json& v) { return v.is_number() ? fmt::format("{:.4g}", v.get<double>()) : std::string("-"); }

/// "<label>fail (slower): the candidate is slower\n" with fail_on; "" without it.
std::string gate_line(const json& r, std::string_view label) {
    if (!r.contains("gate") || !r["gate"].is_object()) return "";
    const json& g = r["gate"];
    return fmt::format("{}{} ({}): {}\n", label, g.value("outcome", "?"), g.value("fail_on", "?"), g.value("reason", ""));
}

std::string speedup_line(const json& r) {
    if (!r.contains("speedup") || !r["speedup"].is_number()) return "";
    std::string out = fmt::format("speedup:   {:.3f}x{}", r["speedup"].get<double>(),
                                  r.contains("aggregate") ? " geometric mean over the workloads" : "");
    const json& ci = r.value("speedup_ci95", json());
    if (ci.is_object() && ci.value("low", json()).is_number() && ci.value("high", json()).is_number())
        out += fmt::format("  (95% CI {:.3f}-{:.3f})", ci["low"].get<double>(),
                           ci["high"].get<double>());
    return out + "\n";
}

/// How to record it, in the caller's words: the full record is on disk, so no --json-out is needed.
std::string record_hint(const json& r) {
    const json path = r.value("full_record", json());
    const json result = path.is_string() ? path : json("<this result's JSON>");
    return "record it: " +
           words::call("record", json{{"result", result}, {"note", "<what changed>"}, {"who", "<who wrote it>"}}) +
           "\n";
}

std::string verify_summary(const json& r);

/// A line per workload: "  M=16: faster 1.021x (1.015-1.027)  0.0123 -> 0.0120 ms  floor 81%".
std::string verify_workload_lines(const json& r) {
    if (!r.contains("workloads")) return "";
    std::string out = "workloads:\n";
    for (const auto& w : r["workloads"]) {
        out += fmt::format("  {}: {}", w.value("name", ""), w.value("verdict", "?"));
        if (w.value("speedup", json()).is_number()) out += fmt::format(" {:.3f}x", w["speedup"].get<double>());
        const json ci = w.value("speedup_ci95", json::object());
        if (ci.value("low", json()).is_number() && ci.value("high", json()).is_number())
            out += fmt::format(" ({:.3f}-{:.3f})", ci["low"].get<double>(), ci["high"].get<double>());
        out += fmt::format("  {} -> {} ms", num4(w.value("baseline", json::object()).value("mean_ms", json())),
                           num4(w.value("candidate", json::object()).value("mean_ms", json())));
        const json roof = w.value("roofline", json::object());
        if (roof.value("candidate_pct_of_floor", json()).is_number())
            out += fmt::format("  {:.0f}% of floor", roof["candidate_pct_of_floor"].get<double>());
        out += "\n";
    }
    return out;
}

std::string verify_render(const json& r) {
    if (!r.contains("measurement")) return verify_summary(r);  // --detail lean: the lean lines
    std::string out = fmt::format("verdict: {}\n", r.value("verdict", "?"));
    for (const auto& reason : r["reasons"]) out += "  because " + reason.get<std::string>() + "\n";
    auto side = [](const json& s) {
        return fmt::format("mean {} ± {} ms, min {}, median {}", num4(s["mean_ms"]), num4(s["std_ms"]), num4(s["min_ms"]),
                           num4(s["median_ms"]));
    };
    out += "baseline:  " + side(r["baseline"]) + "  (" + r.value("baseline_script", "") + ")\n";
    out += "candidate: " + side(r["candidate"]) + "  (" + r.value("candidate_script", "") + ")\n";
    out += speedup_line(r);
    out += verify_workload_lines(r);
    if (!r.contains("workloads") && r["diff_ms"].is_number() && r["threshold_ms"].is_number())
        out += fmt::format("rule:      |diff| {:.4g} ms vs threshold {:.4g} ms (n={} pairs, warm-up {})\n",
                           std::fabs(r["diff_ms"].get<double>()), r["threshold_ms"].get<double>(), r.value("n", 0),
                           r.value("warmup", 0));
    if (r.contains("stopped_early") && r["stopped_early"].is_string())
        out += "stopped:   " + r["stopped_early"].get<std::string>() + "\n";
    out += gate_line(r, "gate:      ");
    const json& m = r["measurement"];
    out += fmt::format("gpu:       {}\n", m["gpu"].is_object() ? m["gpu"].value("name", "?") : "none (" + m.value("gpu_note", std::string()) + ")");
    out += fmt::format("wall:      {:.1f} s\n", m.value("wall_s", 0.0));
    for (const auto& f : r["flags"]) out += "FLAG: " + finding_message(f) + "\n";
    for (const auto& w : r["warnings"]) out += "warning: " + finding_message(w) + "\n";
    out += plot_line(r);
    if (r.value("full_record", json()).is_string()) out += "full record: " + r["full_record"].get<std::string>() + "\n";
    return out + record_hint(r);
}

/// What an agent acts on: the verdict and its basis, both sides, the findings, the file.
json verify_lean(const json& r) {
    json out = pick(r, {"verdict", "speedup"});
    if (r.contains("speedup_ci95")) out["speedup_ci95"] = pick(r["speedup_ci95"], {"low", "high"});
    for (const char* side : {"baseline", "candidate"}) out[side] = pick(r[side], {"n", "mean_ms", "std_ms", "min_ms"});
    out.update(pick(r, {"reasons", "target", "n", "diff_ms", "threshold_ms", "timing"}));
    const json gpu = r.value("measurement", json::object()).value("gpu", json());
    out["gpu"] = gpu.is_object() ? gpu.value("name", json()) : json(nullptr);
    out.update(pick(r, {"roofline_inputs", "gate", "baseline_ref", "exports", "plot", "flags", "warnings", "full_record"}));
    if (r.contains("roofline")) out["roofline"] = pick(r["roofline"], {"bound", "attainable_ms", "candidate_pct_of_floor"});
    if (r.contains("workloads")) {
        out["workloads"] = json::array();
        for (const auto& w : r["workloads"]) {
            json x = pick(w, {"name", "verdict", "speedup", "reasons"});
            if (w.contains("speedup_ci95")) x["speedup_ci95"] = pick(w["speedup_ci95"], {"low", "high"});
            for (const char* side : {"baseline", "candidate"})
                if (w.contains(side)) x[side + std::string("_ms")] = w[side].value("mean_ms", json());
            if (w.contains("roofline"))
                x["roofline"] = pick(w["roofline"], {"attainable_ms", "candidate_pct_of_floor",
                                                     "candidate_pct_of_measured_floor"});
            out["workloads"].push_back(std::move(x));
        }
        out["aggregate"] = pick(r["aggregate"], {"verdict", "faster_on", "slower_on", "incorrect_on", "invalid_on",
                                                 "geomean_speedup"});
    }
    return round_numbers(std::move(out));
}

/// MCP's text block: the lines of the readable output an agent needs, findings by id.
std::string verify_summary(const json& r) {
    std::string out = fmt::format("verdict: {}\n", r.value("verdict", "?"));
    for (const auto& reason : r.value("reasons", json::array())) out += "  because " + reason.get<std::string>() + "\n";
    auto side = [](const json& s) {
        return fmt::format("mean {} ± {} ms, min {}, n {}", num4(s.value("mean_ms", json())),
                           num4(s.value("std_ms", json())), num4(s.value("min_ms", json())), s.value("n", 0));
    };
    out += "baseline:  " + side(r.value("baseline", json::object())) + "\n";
    out += "candidate: " + side(r.value("candidate", json::object())) + "\n";
    out += speedup_line(r);
    out += verify_workload_lines(r);
    out += gate_line(r, "gate: ");
    for (const char* kind : {"flags", "warnings"}) {
        std::vector<std::string> ids;
        for (const auto& f : r.value(kind, json::array())) ids.push_back(finding_id_of(f));
        if (!ids.empty()) out += fmt::format("{}: {}\n", kind, join(ids));
    }
    return out + record_hint(r);  // it names the full record
}

std::vector<bound_param<verify_args>> verify_params() {
    return {
        param(&verify_args::baseline,
              {.name = "baseline", .summary = "Baseline script", .required = true, .positional = true}),
        param(&verify_args::candidate,
              {.name = "candidate",
               .summary = "Candidate script",
               .details = "Required unless baseline_ref is given; then it defaults to baseline's working copy.",
               .positional = true}),
        param(&verify_args::n, {.name = "n",
                                .summary = "Timed pairs, at most",
                                .details = "Timed pairs (runs of each script after warm-up); with stop_early, the "
                                           "most.",
                                .default_value = 10,
                                .minimum = 2,
                                .maximum = 1000}),
        param(&verify_args::warmup, {.name = "warmup",
                                     .summary = "Warm-up pairs, discarded",
                                     .details = "Without it: 0 for protocol-3 scripts, which warm up inside every run, "
                                                "1 for plain scripts.",
                                     .minimum = 0,
                                     .maximum = 100}),
        run_timeout_arg(&verify_args::timeout_s),
        param(&verify_args::args, {.name = "args", .summary = "Args for both scripts",
                                                   .details = "Extra arguments passed to both scripts after their "
                                                              "path."}),
        warm_arg(&verify_args::warm),
        allow_unsandboxed_arg(&verify_args::allow_unsandboxed),
        isolate_arg(&verify_args::isolate),
        param(&verify_args::stop_early,
              {.name = "stop_early",
               .summary = "Stop when the verdict settles",
               .details = "Settled: decisive when |mean_b - mean_c| exceeds 2.5x the seed's threshold after >= 3 "
                          "pairs and twice the spread between processes of the same code (the 95% upper bound of the wider "
                          "of calibrate's and a bench of this baseline on this card; after 2 pairs: 5x and 3x that "
                          "spread, or 10x where none was measured), inconclusive once the seed's rule says so "
                          "after >= 3, or as soon as a run prints ok=false; with workloads, every workload settled. "
                          "The verdict is the seed's rule on the pairs run.",
               .default_value = true}),
        param(&verify_args::fail_on,
              {.name = "fail_on",
               .summary = "CI gate: slower, not-faster or regression:<pct>",
               .details = "The result's gate says pass, fail or undecided, and the CLI exits 0, 1 or 4. slower fails on "
                          "slower, incorrect, invalid; not-faster passes only on faster (inconclusive is undecided); "
                          "regression:<pct> fails when the speedup's 95% CI lies below 1/(1+pct/100) and is undecided "
                          "when it straddles it. docs/ci.md."}),
        param(&verify_args::exports,
              {.name = "export",
               .summary = "FORMAT:PATH (markdown, csv, bmf, github-action-benchmark)",
               .details = "bmf is Bencher's format, github-action-benchmark its customSmallerIsBetter input; a PATH "
                          "ending .md or .csv needs no FORMAT. docs/ci.md."}),
        param(&verify_args::baseline_ref,
              {.name = "baseline_ref",
               .summary = "Baseline's git ref (e.g. main)",
               .details = "baseline's file and the other files of its folder, as they are in that commit, are copied to a "
                          "temporary folder and verified against the working copy (candidate, by default baseline's own "
                          "path)."}),
        param(&verify_args::plot, plot_param("every run's time, the threshold and the speedup's CI")),
    };
}

}  // namespace


tool_spec verify_tool() {
    tool_spec t;
    t.name = "verify";
    t.title = "Verify";
    t.summary = "Baseline and candidate interleaved: verdict, speedup with a 95% CI";
    t.description =
        "Compare candidates to baseline: returns verdict, speedup with 95% CI, flags, full_record (or results). "
        "Call it after each change.";
    t.details =
        "Both scripts follow the bench contract (print one JSON line with \"ms\" and \"ok\"). verify runs them "
        "interleaved in ABBA order (baseline, candidate, candidate, baseline, ...) warmup+n times each (stopping early "
        "once the verdict is settled, unless stop_early=false), back to back on the same card, discards the warm-up "
        "pairs, and decides: 'faster' or 'slower' when |mean_b - mean_c| > 2*sqrt(std_b^2/n + std_c^2/n), "
        "'inconclusive' otherwise, 'incorrect' if the candidate printed ok=false in any run (then no speedup is "
        "reported), 'invalid' if the two scripts disagree on shape/dtype/iters/seed/timer/protocol or the baseline "
        "fails its own check. Beside the verdict: speedup = mean_b/mean_c with a 95% confidence interval from the "
        "paired per-pair ratios, and flags for implausible results. The full record (detail=full, and always the file "
        "full_record names) adds every run's line, the samples, the paired ratios and the measurement record (gpu, "
        "driver, power limit, clocks before/after, host, versions, timestamp, exact commands).";
    json side{{"type", "object"},
              {"properties",
               {{"n", {{"type", "integer"}}},
                {"mean_ms", {{"type", {"number", "null"}}}},
                {"std_ms", {{"type", {"number", "null"}}}},
                {"min_ms", {{"type", {"number", "null"}}}}}}};
    // The lean result; the full one (detail=full) has these fields too, and more.
    t.output_schema = json{
        {"type", "object"},
        {"required", {"verdict", "reasons", "target", "n", "baseline", "candidate", "flags", "warnings", "full_record"}},
        {"properties",
         {{"verdict", {{"type", "string"}, {"enum", {"faster", "slower", "mixed", "inconclusive", "incorrect", "invalid"}}}},
          {"speedup", {{"type", {"number", "null"}}}},
          {"speedup_ci95", {{"type", "object"}}},
          {"baseline", side},
          {"candidate", side},
          {"reasons", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"target", {{"type", "string"}}},
          {"n", {{"type", "integer"}}},
          {"aggregate", {{"type", "object"}}},
          {"flags", findings_schema(finding_kind::flag)},
          {"warnings", findings_schema(finding_kind::warning)},
          {"gate",
           {{"type", "object"},
            {"properties",
             {{"fail_on", {{"type", "string"}}},
              {"outcome", {{"type", "string"}, {"enum", {"pass", "fail", "undecided"}}}},
              {"reason", {{"type", "string"}}}}}}},
          {"full_record", {{"type", {"string", "null"}}}}}}};
    t.annotations = {.read_only = false, .destructive = true, .idempotent = false, .open_world = false};  // runs the user's scripts
    t.render = verify_render;
    t.summarize = verify_summary;
    t.lean = verify_lean;
    t.record_beside = "baseline";
    // More than one candidate, or gpus/executor/partition: one job each, spread (src/scale/spread.h).
    return scale::spreadable(make_tool<verify_args>(std::move(t), verify_params(), verify_handler));
}

}  // namespace hotkernel
