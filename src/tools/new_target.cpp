// new: scaffold a protocol-3 target (baseline, candidate, vendored contract) from a PyTorch function.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "measure/measure.h"
#include "measure/warm_launcher.h"
#include "python/interpreter.h"
#include "registry/tool.h"
#include "report/findings.h"
#include "scaffold/target_spec.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/strings.h"

namespace hotkernel {
namespace {
namespace fs = std::filesystem;

constexpr double probe_timeout_s = 300;

struct new_args {
    std::string from;
    std::string shape;
    std::vector<std::string> extra;
    std::vector<std::string> dims;
    std::vector<std::string> rotate;
    std::optional<std::string> flops;
    std::optional<std::string> reference;
    std::optional<std::string> derive;
    std::vector<std::string> inputs;
    std::optional<std::string> min_bytes;
    std::string dtype;
    std::optional<std::string> name;
    std::string out_dir;
    long long seed = 0;
    long long iters = 0;
    std::string device;
    bool force = false;
    bool warm = true;
};

std::string optional_string(const std::optional<std::string>& v) { return v ? trim(*v) : std::string(); }

/// A './file.py:fn' spec is resolved against the current folder, checked, and rewritten relative
/// to out_dir (where the scripts live and resolve it); module specs pass through unchanged.
std::string place_spec(const std::string& text, const char* what, const fs::path& out_dir) {
    callable_spec s = parse_callable_spec(text, what);
    if (!s.is_file()) return s.module + ":" + s.attr;
    const fs::path file = fs::absolute(s.module).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
        throw tool_error(fmt::format("{} '{}': the file {} does not exist; give the path of the Python file that "
                                     "defines {} (relative to the current folder)",
                                     what, text, file.string(), s.attr));
    fs::path rel = file.lexically_relative(out_dir);
    std::string r = rel.empty() ? file.string() : rel.string();
    if (!r.starts_with(".") && !r.starts_with("/")) r = "./" + r;
    return r + ":" + s.attr;
}

/// dims' workloads: values of each dim ('M=1,16,256', 'K=4096': their product), or a list with
/// ';' between workloads ('M=1,K=4096; M=16,K=1024'), which the CLI's comma split does not break.
std::vector<workload_dims> dims_workloads(const std::vector<std::string>& dims) {
    std::string joined;
    for (const auto& d : dims) joined += (joined.empty() ? "" : ",") + d;
    if (joined.find(';') != std::string::npos) return parse_workload_list(joined);
    return expand_dims(parse_dims(dims));
}

/// flops or min_bytes as the TARGET holds it: a number stays a number (integral ones integers:
/// 8388608, not 8388608.0); anything else is an expression of the dims ("2*M*N*K") that the
/// contract evaluates per workload (and the probe checks before anything is written).
json count_or_expression(const std::optional<std::string>& text, const char* what,
                         const std::vector<std::string>& dim_names) {
    if (!text) return nullptr;
    const std::string t = trim(*text);
    char* end = nullptr;
    const double f = std::strtod(t.c_str(), &end);
    if (!t.empty() && end == t.c_str() + t.size() && std::isfinite(f)) {
        if (f < 0) throw tool_error(fmt::format("{} {} is negative; give the count one call does", what, t));
        return (f == std::floor(f) && f < 9e15) ? json(static_cast<long long>(f)) : json(f);
    }
    if (t.empty() || t.size() > 200 || t.find_first_not_of("0123456789.+-*/%() _ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwyz") != std::string::npos)
        throw tool_error(fmt::format("{} '{}' is not a number or an arithmetic expression of the dims{}, like "
                                     "'2*M*N*K'",
                                     what, t.substr(0, 80), dim_names.empty() ? "" : " (" + join(dim_names) + ")"));
    return t;
}

/// The TARGET dict the scripts will hold, from validated options (no Python yet).
json build_target(const new_args& args, const fs::path& out_dir, std::vector<finding>& warnings) {
    const std::string from_text = args.from;
    const callable_spec from = parse_callable_spec(from_text, "from");

    std::string name = optional_string(args.name);
    if (name.empty()) {
        const auto dot = from.attr.rfind('.');
        name = dot == std::string::npos ? from.attr : from.attr.substr(dot + 1);
    }
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
            throw tool_error(fmt::format("name '{}' is not usable in a file name; use letters, digits, '_' or '-'", name));
    if (name.empty() || name.starts_with(".")) throw tool_error(fmt::format("name '{}' is not a valid target name", name));

    // Workloads: the shape and the extra inputs' shapes are written in the dims' names.
    const std::vector<workload_dims> wls = dims_workloads(args.dims);
    std::vector<std::string> dim_names;
    if (!wls.empty())
        for (const auto& [n, v] : wls.front()) dim_names.push_back(n);
    json shape = wls.empty() ? json(parse_shape_text(args.shape, "shape")) : json(check_dims_shape(args.shape, dim_names, "shape"));
    json extra = json::object();
    std::vector<std::string> raw_names = {"x"};
    for (const auto& e : args.extra) {
        named_shape ns;
        if (wls.empty()) {
            ns = parse_extra_item(e);
        } else {
            const auto colon = e.find(':');
            ns.name = colon == std::string::npos ? std::string() : trim(e.substr(0, colon));
            if (!is_identifier(ns.name))
                throw tool_error(fmt::format("extra input '{}' must be 'name:shape' in the dims, like 'w:K'", e));
        }
        if (ns.name == "x" || extra.contains(ns.name))
            throw tool_error(fmt::format("extra input '{}': the name '{}' is already used (x is the primary input); "
                                         "give each input its own name",
                                         e, ns.name));
        extra[ns.name] = wls.empty() ? json(ns.shape)
                                     : json(check_dims_shape(e.substr(e.find(':') + 1), dim_names,
                                                             fmt::format("extra input '{}': shape", ns.name)));
        raw_names.push_back(ns.name);
    }

    std::vector<std::string> rotate = args.rotate;
    for (const auto& r : rotate)
        if (std::find(raw_names.begin(), raw_names.end(), r) == raw_names.end())
            throw tool_error(fmt::format("rotate names '{}', which is not an input; the inputs are {} (x from {}, "
                                         "the others from {})",
                                         r, join(raw_names), words::param("shape"), words::param("extra")));

    const std::string derive = optional_string(args.derive);
    const std::string reference = optional_string(args.reference);
    std::vector<std::string> inputs = args.inputs;
    if (!derive.empty()) {
        if (reference.empty())
            throw tool_error(fmt::format("derive needs reference: the derived inputs (an int8 weight and its scales) "
                                         "cannot just be upcast to fp32, so pass {} that takes them as they are and "
                                         "does its own fp32 math",
                                         words::param("reference", "module:function")));
        if (inputs.empty())
            throw tool_error("derive needs inputs: the names derive returns, in call order, e.g. " +
                             words::param("inputs", json::array({"x", "w_q", "scales"})));
        std::set<std::string> seen;
        for (const auto& n : inputs) {
            if (!is_identifier(n))
                throw tool_error(fmt::format("inputs name '{}' is not a Python identifier; names become the candidate's "
                                             "arguments",
                                             n));
            if (!seen.insert(n).second) throw tool_error(fmt::format("inputs names '{}' twice; each name once", n));
        }
    } else if (!inputs.empty()) {
        throw tool_error(fmt::format("inputs ({}) is only used with derive; without derive the call takes {} (x, then "
                                     "{} in order)",
                                     join(inputs), join(raw_names), words::param("extra")));
    }

    json t;
    t["name"] = name;
    t["from"] = place_spec(from_text, "from", out_dir);
    t["shape"] = shape;
    t["extra"] = extra;
    t["rotate"] = rotate;
    t["derive"] = derive.empty() ? json(nullptr) : json(place_spec(derive, "derive", out_dir));
    t["inputs"] = inputs.empty() ? json(nullptr) : json(inputs);
    t["reference"] = reference.empty() ? json(nullptr) : json(place_spec(reference, "reference", out_dir));
    t["flops"] = count_or_expression(args.flops, "flops", dim_names);
    t["min_bytes"] = count_or_expression(args.min_bytes, "min_bytes", dim_names);
    t["dtype"] = args.dtype;
    t["device"] = args.device;
    t["seed"] = args.seed;
    t["iters"] = args.iters;
    t["samples"] = 10;
    t["warmup_s"] = "auto";  // steady-state warm-up: see WARMUP_MIN_S in the contract
    t["timer"] = "auto";
    if (!wls.empty()) {
        json list = json::array();
        for (const auto& w : wls) {
            json one = json::object();
            for (const auto& [n, v] : w) one[n] = v;
            list.push_back(one);
        }
        t["workloads"] = list;
    }
    if (rotate.empty()) warnings.push_back(findings::rotate_empty());
    if (t["flops"].is_null())
        warnings.push_back(findings::no_flops());
    return t;
}

/// Runs the probe in the user's interpreter; returns its result object or throws a tool_error
/// that says which stage failed and how to fix it.
json run_probe(const json& target, const fs::path& out_dir, const std::string& python, tool_context& ctx) {
    const fs::path dir = embedded_python_dir();
    process_spec spec;
    spec.argv = {python, (dir / "hotkernel_probe.py").string()};
    spec.stdin_data = dump_line(json{{"target", target}, {"base_dir", out_dir.string()}});
    spec.result_channel = true;
    spec.timeout_s = probe_timeout_s;
    spec.max_capture_bytes = 1u << 20;
    ctx.progress(0, 0, fmt::format("checking {} in {}", target["from"].get<std::string>(), python));
    const process_result r = ctx.runner->run(spec, ctx.cancel);
    json res;
    try {
        if (!trim(r.channel_text).empty()) res = json::parse(split_lines(trim(r.channel_text)).back());
    } catch (const json::exception&) {
        res = nullptr;
    }
    if (!res.is_object()) {
        if (r.cancelled) throw tool_error("new was cancelled while checking the function");
        throw tool_error(fmt::format("checking the function in {} failed: the probe {} without a result{}{}", python,
                                     r.describe(probe_timeout_s),
                                     r.timed_out ? fmt::format(" (the function or its import took too long on the "
                                                               "given shape; try a smaller {} or {})",
                                                               words::param("shape"), words::param("device", "cuda"))
                                                 : "",
                                     r.stderr_text.empty() ? "" : "; stderr:\n" + tail_text(r.stderr_text)));
    }
    if (res.value("ok", false)) return res;

    const std::string stage = res.value("stage", "");
    const std::string reason = res.value("reason", "unknown failure");
    const std::string from = target["from"].get<std::string>();
    std::string hint = res.contains("hint") ? "; " + res["hint"].get<std::string>() : "";
    if (stage == "torch")
        throw tool_error(fmt::format("torch is not importable in the interpreter {} ({}); point hotkernel at the "
                                     "Python that has torch: {}",
                                     python, reason, words::python_setting()));
    if (stage == "import")
        throw tool_error(fmt::format("cannot import the function's module in {}: {}{}; check the name, or give a file: "
                                     "{}",
                                     python, reason, hint, words::param("from", "./file.py:function")));
    if (stage == "function") throw tool_error(fmt::format("from '{}': {}", from, reason));
    if (stage == "derive")
        throw tool_error(fmt::format("{}; make derive return a dict with exactly the names in {}, in call order",
                                     reason, words::param("inputs")));
    if (stage == "device") throw tool_error(reason);
    if (stage == "call")
        throw tool_error(fmt::format("the function does not run on the scaffolded inputs ({}): {}; check {}, {} "
                                     "(inputs in call order) and {}",
                                     dump_line(res.value("input_shapes", json::object())), reason,
                                     words::param("shape"), words::param("extra"), words::param("dtype")));
    if (stage == "reference") throw tool_error(reason);
    if (stage == "check")
        throw tool_error(fmt::format("{}; the target would fail its own check: pass {} (a function that computes the "
                                     "same result in fp32) or use another {}",
                                     reason, words::param("reference"), words::param("dtype")));
    throw tool_error(fmt::format("checking the target in {} failed at '{}': {}", python, stage, reason));
}

std::string quote_arg(const std::string& s) {
    if (!s.empty() && s.find_first_of(" \t\"'$\\`;&|<>()*?[]#~") == std::string::npos) return s;
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

json new_handler(const new_args& args, tool_context& ctx) {
    std::vector<finding> warnings;
    std::error_code ec;
    fs::path out_dir = fs::absolute(args.out_dir).lexically_normal();
    if (!out_dir.has_filename() && out_dir.has_parent_path()) out_dir = out_dir.parent_path();  // "dir/" -> "dir"
    if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
        throw tool_error(fmt::format("out_dir {} exists and is not a folder; pass a folder for the target's files",
                                     out_dir.string()));
    json target = build_target(args, out_dir, warnings);
    const std::string name = target["name"].get<std::string>();

    const std::string python = resolve_python(ctx);
    // The next bench/verify of these scripts forks from a server whose imports (torch: 3-5 s on
    // an H200 host) start now, beside the probe's own. The scripts do not exist yet; the contract
    // they import stands in for them (it names torch: the server imports it).
    auto launcher = make_warm_launcher(make_launcher(), args.warm, ctx.fork_servers);
    const json fork_server = launcher->prewarm(python, embedded_python_dir() / "hotkernel_contract.py", *ctx.runner);
    const json probe = run_probe(target, out_dir, python, ctx);

    const fs::path baseline_path = out_dir / (name + "_baseline.py");
    const fs::path candidate_path = out_dir / (name + "_candidate.py");
    const fs::path contract_path = out_dir / "hotkernel_contract.py";
    const std::string baseline_text = render_target_script(target, "baseline");
    const std::string candidate_text = render_target_script(target, "candidate");
    const std::string contract_text(embedded_python("hotkernel_contract.py"));

    // An edited candidate is the user's work: only --force replaces it.
    const bool force = args.force;
    json written = json::array();
    json unchanged = json::array();
    auto plan = [&](const fs::path& p, const std::string& text, bool protect) -> bool {
        if (!fs::exists(p, ec)) return true;
        const std::string old = read_file(p);
        if (old == text) {
            unchanged.push_back(p.string());
            return false;
        }
        if (protect && !force)
            throw tool_error(fmt::format("{} exists and differs from what new would write (it was edited, or the target "
                                         "changed); move it away or pass {} to replace it",
                                         p.string(), words::param("force", true)));
        warnings.push_back(findings::file_replaced(p.string(), protect));
        return true;
    };
    const bool w_candidate = plan(candidate_path, candidate_text, true);
    const bool w_baseline = plan(baseline_path, baseline_text, false);
    const bool w_contract = plan(contract_path, contract_text, false);
    fs::create_directories(out_dir, ec);
    if (ec) throw tool_error(fmt::format("cannot create out_dir {}: {}", out_dir.string(), ec.message()));
    if (w_contract) write_file_atomic(contract_path, contract_text), written.push_back(contract_path.string());
    if (w_baseline) write_file_atomic(baseline_path, baseline_text), written.push_back(baseline_path.string());
    if (w_candidate) write_file_atomic(candidate_path, candidate_text), written.push_back(candidate_path.string());

    // Commands relative to the current folder when the files are below it.
    auto shown = [&](const fs::path& p) {
        fs::path rel = p.lexically_relative(fs::current_path(ec));
        return (!rel.empty() && !rel.string().starts_with("..")) ? rel.string() : p.string();
    };
    // What to run next: tool calls over MCP, shell lines in the CLI.
    json next = json::array();
    if (ctx.words == front_end::mcp) {
        next.push_back(json{{"tool", "bench"}, {"arguments", {{"script", shown(baseline_path)}}}});
        next.push_back(json{{"tool", "verify"},
                            {"arguments", {{"baseline", shown(baseline_path)}, {"candidate", shown(candidate_path)}}}});
    } else {
        std::string py_flag;
        if (!ctx.python.empty()) py_flag = " --python " + quote_arg(ctx.python);
        next.push_back(fmt::format("hotkernel bench {}{}", quote_arg(shown(baseline_path)), py_flag));
        next.push_back(fmt::format("hotkernel verify {} {}{}", quote_arg(shown(baseline_path)),
                                   quote_arg(shown(candidate_path)), py_flag));
    }
    if (probe.value("device", "") == "cpu" && args.device == "auto")
        warnings.push_back(findings::cpu_only_python(python));

    json result;
    result["name"] = name;
    result["out_dir"] = out_dir.string();
    result["files"] = {{"baseline", baseline_path.string()},
                       {"candidate", candidate_path.string()},
                       {"contract", contract_path.string()}};
    result["written"] = written;
    result["unchanged"] = unchanged;
    result["target"] = target;
    result["contract"] = {{"protocol", contract_protocol()}, {"sha256", contract_hash()}};
    json p = json::object();
    for (const char* k : {"python", "python_version", "torch", "device", "call_names", "input_shapes", "input_dtypes",
                          "out_shapes", "out_dtypes", "error", "seconds", "workloads"})
        if (probe.contains(k)) p[k] = probe[k];
    result["probe"] = p;
    result["next_steps"] = next;
    result["fork_server"] = fork_server;
    result["warnings"] = warnings;
    return result;
}

std::string new_render(const json& r) {
    std::string out = fmt::format("target {} in {}\n", r.value("name", ""), r.value("out_dir", ""));
    for (const auto& [role, path] : r["files"].items()) {
        const std::string p = path.get<std::string>();
        bool was_written = false;
        for (const auto& w : r["written"]) was_written = was_written || w == p;
        out += fmt::format("  {:<9} {}{}\n", role, p, was_written ? "" : "  (unchanged)");
    }
    const json& p = r["probe"];
    out += fmt::format("checked in {} (torch {}, {}): kernel({}) -> {} {}\n", p.value("python", "?"),
                       p.value("torch", "?"), p.value("device", "?"),
                       p.contains("call_names") ? join(p["call_names"].get<std::vector<std::string>>()) : "",
                       p.contains("out_shapes") ? dump_line(p["out_shapes"]) : "?",
                       p.contains("out_dtypes") ? dump_line(p["out_dtypes"]) : "");
    if (p.contains("workloads") && p["workloads"].is_array()) {
        std::vector<std::string> names;
        for (const auto& w : p["workloads"]) names.push_back(w.value("name", ""));
        out += fmt::format("workloads: {} ({}), each checked; bench and verify time every one in each run\n",
                           names.size(), join(names));
    }
    out += fmt::format("contract: protocol {}  sha256 {}\n", r["contract"].value("protocol", 0),
                       r["contract"].value("sha256", "").substr(0, 16));
    out += "next:\n";
    for (const auto& s : r["next_steps"]) out += "  " + (s.is_string() ? s.get<std::string>() : dump_line(s)) + "\n";
    if (const json& f = r.value("fork_server", json::object()); f.value("started", false))
        out += "fork server: importing torch for them now, " + f.value("note", std::string()) + "\n";
    else if (f.value("already_running", false))
        out += "fork server: warm already, " + f.value("note", std::string()) + "\n";
    else if (f.contains("reason"))
        out += "fork server: not started (" + f.value("reason", std::string()) + ")\n";
    for (const auto& w : r["warnings"]) out += "warning: " + finding_message(w) + "\n";
    return out;
}

}  // namespace

tool_spec new_tool() {
    tool_spec t;
    t.name = "new";
    t.title = "Scaffold";
    t.summary = "Scaffold a baseline, a candidate and the contract from a PyTorch function";
    t.description =
        "Scaffold a target from a PyTorch function: returns the files written and next_steps. Call it first "
        "on a new kernel.";
    t.details =
        "Scaffold a target from the user's own PyTorch function so the loop can run on it: writes "
        "<out_dir>/<name>_baseline.py (the function as the baseline plus the Target definition: inputs, seed, "
        "fp32 reference, dtype-default tolerances, rotation, timer), <out_dir>/<name>_candidate.py (the file "
        "to edit; starts as the baseline) and the vendored hotkernel_contract.py (protocol 3) they import, so "
        "they run in HOTKERNEL_PYTHON without hotkernel installed there. It first checks, in that "
        "interpreter, that torch imports and the function runs on the inputs and matches its fp32 reference; "
        "it refuses to overwrite an edited candidate without force. Then bench() the baseline and verify() "
        "the blank candidate (expect 'inconclusive') before changing anything; next_steps has the exact "
        "commands.";
    t.output_schema = json{
        {"type", "object"},
        {"required", {"name", "out_dir", "files", "written", "target", "contract", "probe", "next_steps", "warnings"}},
        {"properties",
         {{"name", {{"type", "string"}}},
          {"out_dir", {{"type", "string"}}},
          {"files",
           {{"type", "object"},
            {"properties",
             {{"baseline", {{"type", "string"}}}, {"candidate", {{"type", "string"}}}, {"contract", {{"type", "string"}}}}}}},
          {"written", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"unchanged", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"target", {{"type", "object"}}},
          {"contract",
           {{"type", "object"},
            {"properties", {{"protocol", {{"type", "integer"}}}, {"sha256", {{"type", "string"}}}}}}},
          {"probe", {{"type", "object"}}},
          // MCP: {"tool": name, "arguments": {...}} calls; the CLI: shell lines.
          {"next_steps", {{"type", "array"}, {"items", {{"type", {"object", "string"}}}}}},
          {"fork_server",
           {{"type", "object"},
            {"properties",
             {{"started", {{"type", "boolean"}}},
              {"kept", {{"type", "boolean"}}},
              {"pooled", {{"type", "boolean"}}},
              {"already_running", {{"type", "boolean"}}},
              {"note", {{"type", "string"}}},
              {"reason", {{"type", "string"}}}}}}},
          {"warnings", findings_schema(finding_kind::warning)}}}};
    // Imports the user's module (its top level runs) and writes files; force replaces an edited candidate.
    t.annotations = {.read_only = false, .destructive = true, .idempotent = true, .open_world = false};
    t.render = new_render;
    t.summarize = new_render;  // short already, and next_steps read best as lines
    return make_tool<new_args>(
        std::move(t),
        {
            param(&new_args::from, {.name = "from",
                                    .summary = "'module:function' or './file.py:function'",
                                    .details = "The function: 'module:function' or './file.py:function'.",
                                    .required = true,
                                    .positional = true}),
            param(&new_args::shape, {.name = "shape",
                                     .summary = "Shape of x: '4096x8192' or 'MxK'",
                                     .required = true}),
            param(&new_args::dims, {.name = "dims",
                                    .summary = "Workload dims, e.g. 'M=1,16,256'",
                                    .details = "Values per dim (the workloads are their product), or the workloads one "
                                               "by one with ';' between them. Each workload is a shape the target is "
                                               "checked and timed at, all in one run; shape, extra, flops and min_bytes "
                                               "may use the dims' names. docs/workloads.md."}),
            param(&new_args::extra, {.name = "extra",
                                     .summary = "More inputs, 'name:shape', in order",
                                     .details = "Random tensors of the same dtype. With dims a shape in their names: "
                                                "'w:K'."}),
            param(&new_args::rotate, {.name = "rotate",
                                      .summary = "Inputs rotated so calls read DRAM",
                                      .details = "An empty list: none.",
                                      .default_value = json::array({"x"})}),
            param(&new_args::flops, {.name = "flops", .summary = "Flops per call, or '2*M*N*K'",
                                     .details = "Nominal flops per call, for roofline(): a number, or an expression of "
                                                "the dims (+ - * / // % **)."}),
            param(&new_args::reference,
                  {.name = "reference",
                   .summary = "'module:function': fp32 reference",
                   .details = "With derive it gets the derived inputs as they are and does its own fp32 math."}),
            param(&new_args::derive,
                  {.name = "derive",
                   .summary = "'module:function' deriving the inputs",
                   .details = "It takes the dict of raw tensors (x and extra) and returns the dict of tensors the call "
                              "takes, in call order (a quantized weight and its scales)."}),
            param(&new_args::inputs, {.name = "inputs",
                                      .summary = "derive's outputs, in call order",
                                      .details = "e.g. ['x', 'w_q', 'scales']."}),
            param(&new_args::min_bytes, {.name = "min_bytes",
                                         .summary = "Bytes one call must read",
                                         .details = "One weight layout, say: a number or an expression of the dims. "
                                                    "Without it: the inputs' bytes."}),
            param(&new_args::dtype, {.name = "dtype",
                                     .summary = "Dtype of the inputs",
                                     .default_value = "bf16",
                                     .choices = {"bf16", "fp16", "fp32"}}),
            param(&new_args::name, {.name = "name",
                                    .summary = "Target name (else the function's)"}),
            param(&new_args::out_dir,
                  {.name = "out_dir", .summary = "Folder for the files", .default_value = "."}),
            param(&new_args::seed, {.name = "seed",
                                    .summary = "Seed of the inputs",
                                    .default_value = 0,
                                    .minimum = 0,
                                    .maximum = 2147483647}),
            param(&new_args::iters, {.name = "iters",
                                     .summary = "Calls a timing sample plans",
                                     .details = "Calls a timing sample plans, each on an input set of its own: fewer where "
                                                "their sets would not fit the memory budget or the sample would last "
                                                "over ~10 ms (~20 ms on a CPU); a sample of short calls grows toward "
                                                "that (at most 256 calls on a GPU, 1024 on a CPU; calls_per_sample in "
                                                "each run's line says what it used).",
                                     .default_value = 100,
                                     .minimum = 1,
                                     .maximum = 1000000}),
            param(&new_args::device, {.name = "device",
                                      .summary = "Where the scripts run",
                                      .details = "auto: cuda when torch sees a GPU, else cpu.",
                                      .default_value = "auto",
                                      .choices = {"auto", "cuda", "cpu"}}),
            param(&new_args::force, {.name = "force",
                                     .summary = "Replace an edited candidate",
                                     .details = "Replace an existing candidate that was edited.",
                                     .default_value = false}),
            param(&new_args::warm,
                  {.name = "warm",
                   .summary = "Start their fork server now",
                   .details = "Only where it outlives this call: from the CLI a kept server, until idle for "
                              "HOTKERNEL_KEEP_WARM_S seconds (600; 0: none); in an MCP session its pool.",
                   .default_value = true}),
        },
        new_handler);
}

}  // namespace hotkernel
