// bench: run a script n times, each run its own process, and aggregate its JSON lines.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "gpu/gpu_query.h"
#include "measure/consistency.h"
#include "measure/measure.h"
#include "measure/process_spread.h"
#include "measure/trusted_launcher.h"
#include "measure/warm_launcher.h"
#include "measure/workloads.h"
#include "plot/save.h"
#include "python/interpreter.h"
#include "registry/lean.h"
#include "registry/tool.h"
#include "tools/plot_param.h"
#include "tools/run_params.h"
#include "report/findings.h"
#include "scale/lease.h"
#include "scale/spread.h"
#include "stats/summary.h"
#include "util/strings.h"

namespace hotkernel {
namespace {

// The timer against torch.profiler on the same graph replays, over the runs that had both.
void summarize_profile_check(const std::vector<run_record>& runs, json& result, json& warnings) {
    std::vector<double> ratio, busy_ratio, span, kernel;
    for (const auto& r : runs) {
        if (!r.line.is_object() || !r.line.contains("profile_check")) continue;
        const json& p = r.line["profile_check"];
        if (p.contains("ms_over_span") && p["ms_over_span"].is_number()) ratio.push_back(p["ms_over_span"].get<double>());
        if (p.contains("ms_over_busy") && p["ms_over_busy"].is_number()) busy_ratio.push_back(p["ms_over_busy"].get<double>());
        if (p.contains("span_per_call_ms") && p["span_per_call_ms"].is_number())
            span.push_back(p["span_per_call_ms"].get<double>());
        if (p.contains("kernel_median_ms") && p["kernel_median_ms"].is_number())
            kernel.push_back(p["kernel_median_ms"].get<double>());
    }
    if (ratio.empty()) {
        warnings.push_back(findings::profile_check_unreported());
        return;
    }
    result["profile_check"] = json{{"runs", ratio.size()},
                                   {"ms_over_span_median", summarize(ratio).median},
                                   {"ms_over_kernel_busy_median",
                                    busy_ratio.empty() ? json(nullptr) : json(summarize(busy_ratio).median)},
                                   {"span_per_call_ms_median", summarize(span).median},
                                   {"kernel_median_ms", kernel.empty() ? json(nullptr) : json(summarize(kernel).median)},
                                   {"how", "each run replayed its timed graph twice under torch.profiler after its "
                                           "samples; span = first kernel start to last kernel end over the calls "
                                           "(gaps between calls included), kernel busy = time any kernel ran, per "
                                           "call (the profiler's kernel time)"}};
}

/// Per workload of a multi-shape target: its statistics over the runs and every sample.
json workload_stats(const std::vector<run_record>& runs) {
    // The runs grouped per workload as verify groups them: bench's runs as one side of a compare_input.
    std::vector<std::string> names;
    std::vector<std::vector<run_record>> per;
    for (auto& [name, part] : split_by_workload(compare_input{.baseline = runs, .candidate = {}, .warmup_baseline = {},
                                                              .warmup_candidate = {}})) {
        names.push_back(name);
        per.push_back(std::move(part.baseline));
    }
    json out = json::array();
    for (std::size_t j = 0; j < names.size(); ++j) {
        json w{{"name", names[j]}};
        std::vector<double> ms;
        bool ok = true;
        for (const auto& p : per[j]) {
            ms.push_back(p.ms);
            ok = ok && p.ok == true;
        }
        w["n"] = ms.size();
        if (!ms.empty()) {
            const json summary = summary_json_ms(summarize(ms));
            for (const auto& [k, v] : summary.items())
                if (k != "n") w[k] = v;
        }
        w["samples_ms"] = ms;
        w["ok"] = ok && !per[j].empty();
        if (!per[j].empty()) {
            const json& line = per[j].front().line;
            for (const char* k : {"dims", "weight", "shapes", "roofline_inputs", "calls_per_sample", "rotate_k"})
                if (line.contains(k)) w[k] = line[k];
        }
        out.push_back(std::move(w));
    }
    return out;
}

bool timed_on_gpu(const json& line) {
    const json d = line_field(line, "device");
    return d.is_string() && starts_with_ci(d.get<std::string>(), "cuda");
}

std::optional<std::string> visible_card_uuid(tool_context& ctx) {
    try {
        if (auto g = visible_gpu(query_gpus(*ctx.runner, ctx.cancel))) return g->uuid;
    } catch (const tool_error&) {
        if (ctx.cancel.cancelled()) throw;
    }
    return std::nullopt;
}

/// Keeps the spread between this baseline's processes on its card, for verify's floors
/// (measure/process_spread.h): out["process_spread"] says what was kept and where. Nothing
/// without the card's uuid, with fewer than 3 runs or with a run not ok.
void keep_spread(const json& result, const std::string& script, const std::vector<std::string>& args,
                 const std::optional<std::string>& uuid, json& out) {
    const auto rec = spread_record_of_bench(result);
    if (!rec || !uuid) return;
    try {
        const auto path = save_target_spread(*uuid, baseline_key(script, args), *rec);
        if (path.empty()) return;
        out["process_spread"] = json{{"cv_pct", (*rec)["cv_pct"]}, {"processes", (*rec)["processes"]},
                                     {"kept", path.string()}};
    } catch (const tool_error& e) {  // a read-only cache: the bench's figures stand, verify falls back to calibrate's
        out["process_spread"] = json{{"cv_pct", (*rec)["cv_pct"]}, {"kept", nullptr}, {"reason", e.what()}};
    }
}

struct bench_args {
    std::string script;
    std::size_t n = 0;
    double timeout_s = 0;
    std::vector<std::string> args;
    bool warm = true;
    bool allow_unsandboxed = false;
    bool isolate = true;
    bool profile_check = false;
    std::optional<std::string> plot;
};

json bench_handler(const bench_args& a, tool_context& ctx) {
    namespace fs = std::filesystem;
    const std::string& script = a.script;
    const std::size_t n = a.n;
    const double timeout_s = a.timeout_s;
    const bool profile_check = a.profile_check;
    const std::vector<std::string>& script_args = a.args;

    std::error_code ec;
    if (!fs::is_regular_file(script, ec))
        throw tool_error(fmt::format("script '{}' does not exist or is not a file; pass the path of a Python script that "
                                     "prints one JSON line with \"ms\"",
                                     script));
    if (a.plot) plot::check_plot_arg(*a.plot);
    const std::string python = resolve_python(ctx);
    // Protocol-3 targets run under the harness; every run is forked from a warm
    // interpreter unless warm=false or forking is unsafe (the result says which).
    const trust_options trust{.isolated = a.isolate, .allow_unsandboxed = a.allow_unsandboxed};
    auto launcher = make_warm_launcher(make_launcher_for({script}, trust), a.warm, ctx.fork_servers);
    launcher->prestart(python, script, *ctx.runner);  // its imports start now, not at the first run

    // The card's pool lease, held for every run as verify holds it (src/scale/lease.h); asking
    // nvidia-smi for the card overlaps the interpreter's imports.
    const auto lease = scale::lease_visible_card(
        *ctx.runner, ctx.cancel, fmt::format("bench {} (pid {})", script, ::getpid()), std::max(600.0, 2 * timeout_s),
        [&](const std::string& holder) {
            ctx.progress(0, static_cast<double>(n), "waiting for GPU " + shorten(trim(holder), 200));
        });

    std::vector<run_record> runs;
    std::vector<double> samples;
    std::vector<json> lines;
    double total_wall = 0;
    ctx.progress(0, static_cast<double>(n), "starting");
    for (std::size_t i = 1; i <= n; ++i) {
        run_request req{.script = script, .args = script_args, .role = "bench", .index = i, .total = n,
                        .python = python, .timeout_s = timeout_s, .env = {},
                        .profile_check = profile_check};
        run_record r = run_once(req, *ctx.runner, ctx.cancel, *launcher);
        samples.push_back(r.ms);
        lines.push_back(r.line);
        total_wall += r.wall_s;
        runs.push_back(std::move(r));
        const auto s = summarize(samples);
        ctx.progress(static_cast<double>(i), static_cast<double>(n),
                     fmt::format("run {} of {}: {:.4g} ms (mean {:.4g} ms)", i, n, runs.back().ms, s.mean));
    }

    const sample_summary s = summarize(samples);
    const json& first = lines.front();
    const int protocol = line_protocol(first);
    json warnings = json::array();

    json result;
    result["script"] = script;
    result["command"] = shell_join(runs.front().command);
    result["n"] = n;
    const json summary = summary_json_ms(s);  // a named value: items() of a temporary would dangle
    for (const auto& [k, v] : summary.items())
        if (k != "n") result[k] = v;  // n: the runs asked for
    result["samples_ms"] = samples;
    if (has_workloads(first)) {
        // The run's figures above are of its total: the workloads' ms, weighted, summed.
        result["workloads"] = workload_stats(runs);
        result["total_is"] = "the workloads' ms a run, each times its weight, summed";
    }

    // Correctness: every run's claim, never hidden by averaging.
    std::vector<std::size_t> failed;
    bool any_claim = false;
    for (const auto& r : runs) {
        if (r.ok.has_value()) any_claim = true;
        if (r.ok == false) failed.push_back(r.index);
    }
    result["ok"] = any_claim ? json(failed.empty()) : json(nullptr);
    if (!failed.empty()) {
        std::string which;
        for (auto i : failed) which += (which.empty() ? "" : ", ") + std::to_string(i);
        warnings.push_back(findings::script_check_failed(which));
    }
    if (!any_claim)
        warnings.push_back(findings::output_unchecked(1));

    for (const char* f : {"target", "seed", "iters", "timer", "dtype"}) {
        json v = line_field(first, f);
        if (!v.is_null()) result[f] = v;
    }
    json shapes = line_field(first, "shapes");
    if (!shapes.is_null()) result["shapes"] = shapes;
    if (first.contains("roofline_inputs") && first["roofline_inputs"].is_object())
        result["roofline_inputs"] = first["roofline_inputs"];
    if (first.contains("versions") && first["versions"].is_object()) result["versions"] = first["versions"];
    result["protocol"] = protocol;
    result["self_reported"] = !(protocol >= 3 && launcher->trusted());
    const json how = launcher->describe();  // a named value: items() of a temporary would dangle
    for (const auto& [k, v] : how.items()) result[k] = v;
    result["wall_s"] = total_wall;

    if (n >= 2 && std::isfinite(s.cv()) && s.cv() > 0.05)
        warnings.push_back(findings::high_variance(s.cv() * 100));
    if (n < 2) warnings.push_back(findings::single_run());
    if (n >= 3) {
        // hyperfine's warning: a first run far slower than the rest means the warm-up is too short.
        std::vector<double> rest(samples.begin() + 1, samples.end());
        auto rs = summarize(rest);
        if (samples[0] > rs.max && rs.std > 0 && samples[0] - rs.mean > 5 * rs.std)
            warnings.push_back(findings::slow_first_run(samples[0], rs.mean));
    }
    for (auto& w : launcher->warnings()) warnings.push_back(std::move(w));
    describe_trust(result, warnings, *launcher, {script});
    for (const auto& r : runs)  // the harness's verdict on a run (patched harness, forged result, ...)
        if (r.status == run_status::invalid)
            warnings.push_back(findings::runner_declared_invalid(r.index, r.reason.empty() ? "no reason given" : r.reason));
    if (!launcher->trusted())
        if (auto w = contract_mismatch(first, contract_hash())) warnings.push_back(*w);
    for (const auto& u : unstable_fields(lines, "bench"))
        warnings.push_back(findings::description_changed(u));
    if (result["self_reported"].get<bool>())
        warnings.push_back(findings::self_reported_timing(protocol, 1));
    for (const auto& r : runs)
        if (r.had_invalid_utf8) {
            warnings.push_back(findings::invalid_utf8(r.index));
            break;
        }

    if (profile_check) {
        if (launcher->trusted())
            summarize_profile_check(runs, result, warnings);
        else  // a script's own line could say anything here
            warnings.push_back(findings::profile_check_untrusted());
    }
    {
        // bench reads no clock state (it stays quick): the fastest reading is the reference.
        std::vector<const run_record*> all;
        for (const auto& r : runs) all.push_back(&r);
        report_run_findings(all, NAN, result, warnings);
    }
    if (launcher->trusted() && timed_on_gpu(first)) {
        std::optional<std::string> uuid = lease ? std::optional<std::string>(lease->uuid()) : std::nullopt;
        if (!uuid) uuid = visible_card_uuid(ctx);
        keep_spread(result, script, script_args, uuid, result);
    }
    json run_list = json::array();
    for (const auto& r : runs) run_list.push_back(r.to_json());
    result["runs"] = run_list;
    result["warnings"] = warnings;
    if (a.plot) {
        const std::string what = result.value("target", json()).is_string() ? result["target"].get<std::string>()
                                                                            : fs::path(script).stem().string();
        result["plot"] = plot::save_plot(*a.plot, "bench", what, [&](plot::format f) { return plot::draw_bench(result, f); });
    }
    return result;
}

std::string stats_line(const json& r) {
    auto num = [&](const char* k) { return r.value(k, json()).is_number() ? r[k].get<double>() : NAN; };
    std::string out = fmt::format("{}: n={}  mean {:.4g} ms", r.value("script", ""), r.value("n", 0), num("mean_ms"));
    if (std::isfinite(num("std_ms"))) out += fmt::format(" ± {:.3g}", num("std_ms"));
    if (std::isfinite(num("min_ms"))) out += fmt::format("  min {:.4g}", num("min_ms"));
    if (r.value("median_ms", json()).is_number()) out += fmt::format("  median {:.4g}", r["median_ms"].get<double>());
    if (r.value("cv_pct", json()).is_number()) out += fmt::format("  cv {:.2f}%", r["cv_pct"].get<double>());
    out += "\n";
    if (!r.value("ok", json()).is_null()) out += fmt::format("ok: {}\n", r["ok"].get<bool>() ? "true (every run)" : "FALSE");
    return out;
}

std::string bench_summary(const json& r);

/// A line per workload: "  M=16: mean 0.0123 ms ± 0.0002  min 0.0120  ok".
std::string bench_workload_lines(const json& r) {
    std::string out;
    if (!r.contains("workloads")) return out;
    out += fmt::format("workloads ({}; the figures above are their total a run):\n", r["workloads"].size());
    for (const auto& w : r["workloads"]) {
        auto num = [&](const char* k) { return w.value(k, json()).is_number() ? w[k].get<double>() : NAN; };
        out += fmt::format("  {}: mean {:.4g} ms ± {:.3g}  min {:.4g}{}\n", w.value("name", ""), num("mean_ms"),
                           num("std_ms"), num("min_ms"), w.value("ok", false) ? "" : "  ok: FALSE");
    }
    return out;
}

std::string bench_render(const json& r) {
    if (!r.contains("samples_ms")) return bench_summary(r);  // --detail lean: the lean lines
    std::string out = stats_line(r);
    if (r.contains("seed")) out += "seed: " + dump_line(r["seed"]) + "\n";
    if (r.contains("roofline_inputs")) out += "roofline_inputs: " + dump_line(r["roofline_inputs"]) + "\n";
    std::string samples;
    for (const auto& v : r["samples_ms"]) samples += (samples.empty() ? "" : " ") + fmt::format("{:.4g}", v.get<double>());
    out += "samples_ms: " + samples + "\n";
    out += bench_workload_lines(r);
    for (const auto& w : r["warnings"]) out += "warning: " + finding_message(w) + "\n";
    out += plot_line(r);
    if (r.value("full_record", json()).is_string()) out += "full record: " + r["full_record"].get<std::string>() + "\n";
    return out;
}

/// What a caller acts on: the statistics, the check, the roofline inputs, the findings, the file.
json bench_lean(const json& r) {
    json out = pick(r, {"script", "n", "mean_ms", "std_ms", "min_ms", "median_ms", "ok", "target", "seed", "timing"});
    // roofline_inputs when small (flops, bytes, dtype): a script's own line could put anything there.
    if (r.contains("roofline_inputs") && dump_line(r["roofline_inputs"]).size() <= 200)
        out["roofline_inputs"] = r["roofline_inputs"];
    if (r.contains("profile_check"))  // asked for: its figures (the full record says how they were taken)
        out["profile_check"] = pick(r["profile_check"], {"runs", "ms_over_span_median", "ms_over_kernel_busy_median",
                                                         "span_per_call_ms_median", "kernel_median_ms"});
    if (r.contains("workloads")) {
        out["workloads"] = json::array();
        for (const auto& w : r["workloads"])
            out["workloads"].push_back(pick(w, {"name", "mean_ms", "std_ms", "min_ms", "ok"}));
    }
    if (r.contains("process_spread")) out["process_spread"] = r["process_spread"];  // what verify's floors will use
    out.update(pick(r, {"plot", "flags", "warnings", "full_record"}));
    return round_numbers(std::move(out));
}

/// MCP's text block: the statistics line, findings by id, the file.
std::string bench_summary(const json& r) {
    std::string out = stats_line(r);
    if (r.contains("roofline_inputs")) out += "roofline_inputs: " + dump_line(r["roofline_inputs"]) + "\n";
    out += bench_workload_lines(r);
    for (const char* kind : {"flags", "warnings"}) {
        std::vector<std::string> ids;
        for (const auto& f : r.value(kind, json::array())) ids.push_back(finding_id_of(f));
        if (!ids.empty()) out += fmt::format("{}: {} (what to do: structuredContent)\n", kind, join(ids));
    }
    if (r.value("full_record", json()).is_string()) out += "full record: " + r["full_record"].get<std::string>() + "\n";
    return out;
}

std::vector<bound_param<bench_args>> bench_params() {
    return {
        param(&bench_args::script,
              {.name = "script", .summary = "Python script", .required = true, .positional = true}),
        param(&bench_args::n, {.name = "n",
                               .summary = "Runs, a process each",
                               .details = "Number of runs, each a fresh process.",
                               .default_value = 10,
                               .minimum = 1,
                               .maximum = 1000}),
        run_timeout_arg(&bench_args::timeout_s),
        param(&bench_args::args, {.name = "args", .summary = "Script arguments",
                                                  .details = "Extra arguments passed to the script after its path."}),
        warm_arg(&bench_args::warm),
        allow_unsandboxed_arg(&bench_args::allow_unsandboxed),
        isolate_arg(&bench_args::isolate),
        param(&bench_args::profile_check,
              {.name = "profile_check",
               .summary = "Also time under torch.profiler",
               .details = "The result's profile_check gives ms over the profiler's kernel busy time and span per "
                          "call; starting the profiler costs ~3.5 s more a run.",
               .default_value = false}),
        param(&bench_args::plot, plot_param("the samples of each run")),
    };
}

}  // namespace


tool_spec bench_tool() {
    tool_spec t;
    t.name = "bench";
    t.title = "Benchmark";
    t.summary = "Run a script n times, each its own process: mean/std/min and every sample";
    t.description =
        "Time scripts over n runs: returns mean/std/min, ok, warnings, full_record. Call it on the "
        "baseline first.";
    t.details =
        "Contract: the script prints one JSON line to stdout containing at least {\"ms\": <float>} and optionally "
        "{\"ok\": <bool>} for a correctness check (the last stdout line that is a JSON object with \"ms\" counts). "
        "The full record (detail=full, and always the file full_record names) adds every raw sample and each run's "
        "JSON line, and the seed when the script gives it, so a LEADERBOARD row can cite n and seed. A run that "
        "crashes, hangs (timeout_s) or prints no such line is an error naming the run, with its stderr tail. On a GPU, "
        "a bench of 3 or more runs, every one ok under the trusted harness, keeps the spread between them "
        "(process_spread: the cv over runs, each a process) for this card and this baseline's bytes; verify's early "
        "stops then need an effect past it.";
    // The lean result; the full one (detail=full) has these fields too, and more.
    t.output_schema = json{
        {"type", "object"},
        {"required", {"n", "mean_ms", "std_ms", "min_ms", "warnings", "full_record"}},
        {"properties",
         {{"script", {{"type", "string"}}},
          {"n", {{"type", "integer"}}},
          {"mean_ms", {{"type", {"number", "null"}}}},
          {"std_ms", {{"type", {"number", "null"}}}},
          {"min_ms", {{"type", {"number", "null"}}}},
          {"ok", {{"type", {"boolean", "null"}}}},
          {"warnings", findings_schema(finding_kind::warning)},
          {"full_record", {{"type", {"string", "null"}}}}}}};
    t.annotations = {.read_only = false, .destructive = true, .idempotent = false, .open_world = false};  // runs the user's script
    t.render = bench_render;
    t.summarize = bench_summary;
    t.lean = bench_lean;
    t.record_beside = "script";
    // More than one script, or gpus/executor/partition: one job each, spread (src/scale/spread.h).
    return scale::spreadable(make_tool<bench_args>(std::move(t), bench_params(), bench_handler));
}

}  // namespace hotkernel
