// spreadable(): verify and bench over several cards, partitions or hosts.
#include "scale/spread.h"

#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "registry/lean.h"
#include "report/findings.h"
#include "scale/dispatch.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/strings.h"
#include "util/words.h"

namespace hotkernel::scale {
namespace fs = std::filesystem;
namespace {

/// verify's or bench's words for the spread.
struct tool_words {
    std::string tool;        ///< "verify"
    std::string single;      ///< its one positional script: "candidate"
    std::string list;        ///< the spread's list of more: "candidates"
    std::string label_key;   ///< where its result names the script: "candidate_script"
};

tool_words words_of(const std::string& tool) {
    if (tool == "verify") return {"verify", "candidate", "candidates", "candidate_script"};
    return {"bench", "script", "scripts", "script"};
}

/// Placement keys copied onto each result, in this order; numbers where they are numbers.
const std::vector<std::string>& placement_keys() {
    static const std::vector<std::string> keys = {"gpu_uuid", "gpu_name", "gpu_index", "cpus", "waited_s",
                                                  "partition", "job_id",   "state",     "node"};
    return keys;
}

json placement_value(const std::string& key, const std::string& v) {
    if (key == "gpu_index" || key == "waited_s") {
        try {
            return key == "gpu_index" ? json(std::stoi(v)) : json(std::stod(v));
        } catch (const std::exception&) {
        }
    }
    return v;
}

/// out.png → out-3.png: each job writes its own file.
std::string tagged_path(const std::string& path, const std::string& tag) {
    const fs::path p(path);
    return (p.parent_path() / (p.stem().string() + "-" + tag + p.extension().string())).string();
}

std::string absolute_path(const std::string& p) {
    std::error_code ec;
    const fs::path a = fs::absolute(p, ec);
    return ec ? p : a.lexically_normal().string();
}

/// What a spread reads of a call's validated arguments, read here and nowhere else: its own
/// (more scripts, gpus, executor, partition) and the few of the wrapped tool's that decide its
/// jobs (the first script, the baseline and its ref, the gate). The jobs get the call's
/// arguments as they came, less the spread's own (child_base).
struct spread_args {
    std::vector<std::string> more;  ///< the scripts after the first (verify: candidates; bench: scripts)
    std::optional<std::string> gpus, executor, partition;
    std::optional<std::string> first, baseline, baseline_ref, fail_on;

    /// Any of the spread's own given (an executor other than the default pool): a spread.
    [[nodiscard]] bool spreads() const { return !more.empty() || gpus || partition || (executor && *executor != "pool"); }
};

/// `w`: the wrapped tool's words (none for a batch's own arguments).
spread_args spread_args_of(const json& valid, const tool_words* w) {
    spread_args a;
    auto text = [&](const std::string& key) -> std::optional<std::string> {
        if (valid.contains(key) && valid[key].is_string()) return valid[key].get<std::string>();
        return std::nullopt;
    };
    a.gpus = text("gpus");
    a.executor = text("executor");
    a.partition = text("partition");
    if (w == nullptr) return a;
    if (valid.contains(w->list) && valid[w->list].is_array())
        for (const auto& s : valid[w->list]) a.more.push_back(s.get<std::string>());
    a.first = text(w->single);
    a.baseline = text("baseline");
    a.baseline_ref = text("baseline_ref");
    a.fail_on = text("fail_on");
    return a;
}

spread_plan parse_plan(const spread_args& args) {
    spread_plan plan;
    const std::string executor = args.executor ? trim(*args.executor) : "";
    if (executor.empty() || executor == "pool") plan.kind = executor_kind::pool;
    else if (executor == "slurm") plan.kind = executor_kind::slurm;
    else if (executor.find("{cmd}") != std::string::npos) {
        plan.kind = executor_kind::command;
        plan.command = executor;
    } else
        throw usage_error(fmt::format("{}: '{}' is none of pool, slurm, or a command with {{cmd}} in it (e.g. {})",
                                      words::param("executor"), shorten(executor, 80),
                                      words::param("executor", "ssh gpu7 {cmd}")));
    const bool has_partition = args.partition.has_value();
    if (has_partition && plan.kind != executor_kind::slurm)
        throw usage_error(fmt::format("{} picks Slurm partitions; add {}", words::param("partition"),
                                      words::param("executor", "slurm")));
    if (plan.kind == executor_kind::slurm) {
        if (has_partition)
            for (const auto& p : split(*args.partition, ','))
                if (!trim(p).empty() && std::find(plan.partitions.begin(), plan.partitions.end(), trim(p)) == plan.partitions.end())
                    plan.partitions.push_back(trim(p));
        if (plan.partitions.empty()) plan.partitions = {""};  // the cluster's default partition
    }
    if (args.gpus) {
        if (plan.kind != executor_kind::pool)
            throw usage_error(fmt::format("{} picks this host's cards; on Slurm each job gets one card of its node "
                                          "(drop {}, or {})",
                                          words::param("gpus"), words::param("gpus"), words::param("executor", "pool")));
        plan.gpus = parse_gpus(*args.gpus);
    }
    return plan;
}

void check_script(const std::string& role, const std::string& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        throw tool_error(fmt::format("{} script '{}' does not exist or is not a file; pass the path of a Python script "
                                     "that prints one JSON line with \"ms\"",
                                     role, shorten(path, 300)));
}

/// One job's arguments: the call's own, one script, its files of its own, paths made absolute
/// where it runs elsewhere.
json job_args(json args, const std::string& tag, bool absolute, const std::vector<std::string>& path_keys) {
    if (absolute)
        for (const auto& k : path_keys)
            if (args.value(k, json()).is_string()) args[k] = absolute_path(args[k].get<std::string>());
    if (args.value("plot", json()).is_string() && args["plot"] != "true" && !tag.empty())
        args["plot"] = tagged_path(absolute ? absolute_path(args["plot"].get<std::string>()) : args["plot"].get<std::string>(), tag);
    if (args.value("export", json()).is_array() && !tag.empty())
        for (auto& e : args["export"]) {
            std::string s = e.get<std::string>();
            const auto colon = s.find(':');
            const bool has_format = colon != std::string::npos && s.substr(0, colon).find('/') == std::string::npos;
            const std::string path = has_format ? s.substr(colon + 1) : s;
            e = (has_format ? s.substr(0, colon + 1) : "") + tagged_path(absolute ? absolute_path(path) : path, tag);
        }
    return args;
}

std::string num(const json& v, const char* f = "{:.4g}") {
    return v.is_number() ? fmt::format(fmt::runtime(f), v.get<double>()) : std::string("-");
}

std::string where_of(const json& item) {
    std::string w;
    if (item.value("partition", json()).is_string()) w = item["partition"].get<std::string>();
    if (item.value("gpu_name", json()).is_string()) {
        const std::string idx = item.value("gpu_index", json()).is_number() ? fmt::format("GPU {} ", item["gpu_index"].get<int>()) : "";
        w += (w.empty() ? "" : " ") + idx + item["gpu_name"].get<std::string>();
    }
    if (item.value("node", json()).is_string() && item.value("gpu_name", json()).is_null())
        w += (w.empty() ? "" : " ") + item["node"].get<std::string>();
    return w.empty() ? "this host" : w;
}

/// A result's cell: "faster 1.234x", "mean 1.02 ms", or "no result".
std::string cell_of(const json& item) {
    if (item.value("verdict", json()).is_string()) {
        std::string s = item["verdict"].get<std::string>();
        if (item.value("speedup", json()).is_number()) s += fmt::format(" {:.3f}x", item["speedup"].get<double>());
        return s;
    }
    if (item.value("mean_ms", json()).is_number()) return "mean " + num(item["mean_ms"]) + " ms";
    return "no result";
}

json table_row(const json& item, const tool_words& w) {
    json row = json::object();
    row[w.list == "candidates" ? "candidate" : "script"] = item.value(w.label_key, json());
    for (const char* k : {"partition", "gpu_name"})
        if (item.contains(k)) row[k == std::string("gpu_name") ? "gpu" : k] = item[k];
    if (w.tool == "verify") {
        row["verdict"] = item.value("verdict", json());
        row["speedup"] = item.value("speedup", json());
    } else {
        row["mean_ms"] = item.value("mean_ms", json());
        row["ok"] = item.value("ok", json());
    }
    if (item.contains("error")) row["error"] = shorten(item["error"].get<std::string>(), 160);
    return round_numbers(std::move(row));
}

/// Every job's gate folded into one: fail if any fails (or gave no result), else undecided if any is.
json combined_gate(const json& results, const std::string& fail_on) {
    std::size_t pass = 0, fail = 0, undecided = 0;
    std::vector<std::string> why;
    for (const auto& item : results) {
        std::string outcome = "fail";
        std::string reason = "no result";
        if (item.value("gate", json()).is_object()) {
            outcome = item["gate"].value("outcome", "undecided");
            reason = item["gate"].value("reason", "");
        }
        (outcome == "pass" ? pass : outcome == "fail" ? fail : undecided)++;
        if (outcome != "pass")
            why.push_back(fmt::format("{} on {}: {} ({})", item.value("candidate_script", item.value("script", std::string("?"))),
                                      where_of(item), outcome, shorten(reason, 100)));
    }
    const std::string outcome = fail > 0 ? "fail" : undecided > 0 ? "undecided" : "pass";
    std::string reason = fmt::format("{} pass, {} fail, {} undecided", pass, fail, undecided);
    if (!why.empty()) reason += ": " + join(why, "; ");
    return json{{"fail_on", fail_on}, {"outcome", outcome}, {"reason", shorten(reason, 1500)}};
}

/// The spread's result from its jobs' outcomes.
json assemble(const std::vector<spread_job>& jobs, spread_run& run, const tool_words& w, bool batch,
              const json& fail_on) {
    json results = json::array();
    json table = json::array();
    for (std::size_t k = 0; k < jobs.size(); ++k) {
        const job_outcome& o = run.outcomes[k];
        const tool_words jw = batch ? words_of(jobs[k].tool) : w;
        json item = o.result.is_object() ? o.result : json::object();
        if (!item.contains(jw.label_key)) item[jw.label_key] = jobs[k].label;
        if (batch) item["tool"] = jobs[k].tool;
        for (const auto& key : placement_keys())
            if (auto it = o.placement.find(key); it != o.placement.end()) item[key] = placement_value(key, it->second);
        // On a node the card is whatever Slurm gave the job: the child's nvidia-smi says which.
        const json gpu = item.value("measurement", json::object()).value("gpu", json());
        if (gpu.is_object()) {
            if (!item.contains("gpu_uuid") && gpu.value("uuid", json()).is_string()) item["gpu_uuid"] = gpu["uuid"];
            if (!item.contains("gpu_name") && gpu.value("name", json()).is_string()) item["gpu_name"] = gpu["name"];
        }
        if (!o.error.empty()) item["error"] = o.error;
        table.push_back(table_row(item, jw));
        results.push_back(std::move(item));
    }
    json out;
    out["results"] = std::move(results);
    out["spread"] = run.about;
    out["spread"]["table"] = std::move(table);
    if (fail_on.is_string()) out["gate"] = combined_gate(out["results"], fail_on.get<std::string>());
    out["warnings"] = run.warnings;
    return out;
}

/// The child's arguments: the call's, without the spread's own.
json child_base(const json& valid, const tool_words& w) {
    json base = valid;
    for (const char* k : {"gpus", "executor", "partition", "detail"}) base.erase(k);
    base.erase(w.list);
    return base;
}

json run_tool_spread(const tool_words& w, const json& valid, tool_context& ctx) {
    const spread_args spread = spread_args_of(valid, &w);
    const spread_plan plan = parse_plan(spread);
    const bool elsewhere = plan.kind != executor_kind::pool;
    const json base = child_base(valid, w);
    std::vector<std::optional<std::string>> scripts;
    if (spread.first) scripts.emplace_back(*spread.first);
    for (const auto& s : spread.more) scripts.emplace_back(s);
    if (scripts.empty()) {
        if (w.tool == "verify" && spread.baseline_ref)
            scripts.emplace_back(std::nullopt);  // the baseline's working copy against the ref
        else
            throw usage_error(fmt::format("{}: missing required parameter {} (the candidate script); or give {} to verify "
                                          "the working copy of {} against that git ref",
                                          w.tool, words::param("candidate"), words::param("baseline_ref"),
                                          words::param("baseline")));
    }
    std::vector<std::string> path_keys = {w.single};
    if (w.tool == "verify") {
        path_keys.push_back("baseline");
        if (!spread.baseline_ref) check_script("baseline", spread.baseline.value_or(""));
    }
    for (const auto& s : scripts)
        if (s) check_script(w.single, *s);

    std::vector<spread_job> jobs;
    const std::vector<std::string> partitions = plan.kind == executor_kind::slurm ? plan.partitions : std::vector<std::string>{""};
    const bool many = scripts.size() * partitions.size() > 1;
    for (std::size_t i = 0; i < scripts.size(); ++i)
        for (const auto& part : partitions) {
            json args = base;
            if (scripts[i]) args[w.single] = *scripts[i];
            std::string tag = std::to_string(i + 1);
            if (!part.empty() && partitions.size() > 1) tag += "-" + part;
            spread_job j;
            j.tool = w.tool;
            j.args = job_args(std::move(args), many ? tag : "", elsewhere, path_keys);
            j.label = scripts[i] ? *scripts[i] : spread.baseline.value_or("");
            j.partition = part;
            jobs.push_back(std::move(j));
        }
    spread_run run = run_spread(plan, jobs, ctx);
    // Every child refused its arguments the same way: that is the caller's mistake, said once.
    if (std::all_of(run.outcomes.begin(), run.outcomes.end(), [](const job_outcome& o) { return o.usage_error; }))
        throw usage_error(run.outcomes.front().error);
    return assemble(jobs, run, w, false, spread.fail_on ? json(*spread.fail_on) : json());
}

std::string item_lines(const json& item) {
    std::string out;
    for (const char* kind : {"flags", "warnings"}) {
        std::vector<std::string> ids;
        for (const auto& f : item.value(kind, json::array())) ids.push_back(finding_id_of(f));
        if (!ids.empty()) out += fmt::format("    {}: {}\n", kind, join(ids));
    }
    if (item.value("error", json()).is_string()) out += "    error: " + item["error"].get<std::string>() + "\n";
    if (item.value("full_record", json()).is_string()) out += "    full record: " + item["full_record"].get<std::string>() + "\n";
    return out;
}

}  // namespace

bool is_spread_result(const json& r) { return r.is_object() && r.value("results", json()).is_array() && r.contains("spread"); }

const std::vector<param_spec>& spread_params() {
    static const std::vector<param_spec> params = [] {
        param_spec gpus = make_param("gpus", param_type::string, "all, N or GPU indices/UUIDs");
        gpus.details =
            "Each pair (or script) runs on one card of this host, pinned by UUID (CUDA_VISIBLE_DEVICES=GPU-<uuid>) and to a "
            "slice of the CPU cores, while the card's lease (a lock file every hotkernel on the host respects) is held. "
            "Indices count the cards visible inside CUDA_VISIBLE_DEVICES; one index alone is written '2,'. Default, "
            "when more candidates are given: every visible card. docs/scale.md.";
        param_spec executor = make_param("executor", param_type::string, "slurm, or a {cmd} template");
        executor.details =
            "Without it (or pool): this host's GPUs (gpus). slurm: one job per pair and partition through sbatch (a job array per "
            "partition, --gres=gpu:1), polled to the end, scancel'd on cancellation; HOTKERNEL_SLURM_ARGS adds sbatch "
            "options (--time, --account), HOTKERNEL_REMOTE_BIN names the hotkernel the nodes run when they do not "
            "share this one's path. A command such as 'ssh gpu7 {cmd}' runs each job through it; {cmd} answers JSON.";
        param_spec partition = make_param("partition", param_type::string, "Slurm partitions: a,b");
        partition.details = "With executor slurm: every pair runs once on each, and the result shows them side by side.";
        return std::vector<param_spec>{gpus, executor, partition};
    }();
    return params;
}

tool_spec spreadable(tool_spec t) {
    const tool_words w = words_of(t.name);
    param_spec more = make_param(w.list, param_type::string_array,
                                 w.tool == "verify" ? "More candidates" : "More scripts");
    more.positional = true;
    more.details = w.tool == "verify"
                       ? "Each candidate is verified against baseline in a job of its own, on one GPU (gpus, executor); "
                         "the result has one verify result per candidate (and partition)."
                       : "Each script is benchmarked in a job of its own, on one GPU of this host (gpus); `hotkernel "
                         "batch` takes bench jobs to Slurm too.";
    // Before `detail`, which make_tool put last.
    auto at = std::find_if(t.params.begin(), t.params.end(), [](const param_spec& p) { return p.name == "detail"; });
    std::vector<param_spec> add = {more};
    for (const auto& p : spread_params())  // bench goes to Slurm in a batch file: tools/list stays small
        if (w.tool == "verify" || p.name == "gpus") add.push_back(p);
    t.params.insert(at, add.begin(), add.end());

    auto& props = t.output_schema["properties"];
    props["results"] = json{{"type", "array"}, {"items", {{"type", "object"}}}};
    props["spread"] = json{{"type", "object"}};  // with its table: one row per job

    t.handler = [orig = t.handler, w](const json& valid, tool_context& ctx) {
        if (!spread_args_of(valid, &w).spreads()) return orig(valid, ctx);
        return run_tool_spread(w, valid, ctx);
    };
    if (t.lean)
        t.lean = [orig = t.lean, w](const json& full) {
            if (!is_spread_result(full)) return orig(full);
            json out = json::object();
            json items = json::array();
            for (const auto& item : full["results"]) {
                const bool whole = w.tool == "verify" ? item.value("verdict", json()).is_string() && item.contains("baseline")
                                                      : item.value("samples_ms", json()).is_array();
                json lean = whole ? orig(item) : json::object();
                lean.erase("schema_version");
                json head = pick(item, {"candidate_script", "script"});
                head.update(lean);
                for (const auto& k : placement_keys())
                    if (item.contains(k)) head[k] = item[k];
                if (item.contains("error")) head["error"] = item["error"];
                items.push_back(std::move(head));
            }
            out["results"] = std::move(items);
            out.update(pick(full, {"spread", "gate", "warnings", "full_record"}));
            return round_numbers(std::move(out));
        };
    if (t.render)
        t.render = [orig = t.render](const json& r) { return is_spread_result(r) ? render_spread(r) : orig(r); };
    if (t.summarize)
        t.summarize = [orig = t.summarize](const json& r) { return is_spread_result(r) ? render_spread(r) : orig(r); };
    return t;
}

std::string render_spread(const json& r) {
    const json& about = r.value("spread", json::object());
    const std::string executor = about.value("executor", "pool");
    std::string out = fmt::format("{} job(s) through {} in {:.1f} s", about.value("jobs", 0), executor,
                                  about.value("wall_s", 0.0));
    if (executor == "pool" && about.value("gpus", json()).is_array()) {
        std::vector<std::string> cards;
        for (const auto& g : about["gpus"])
            cards.push_back(fmt::format("{} {}", g.value("index", json()).is_number() ? std::to_string(g["index"].get<int>()) : "?",
                                        g.value("name", "")));
        out += cards.empty() ? " (no GPU: one after another)" : " over GPU " + join(cards, ", ");
    }
    if (executor == "slurm" && about.value("dir", json()).is_string()) out += "; files in " + about["dir"].get<std::string>();
    out += "\n";
    // The platform matrix: one row per script, one column per partition.
    std::vector<std::string> parts;
    for (const auto& item : r["results"])
        if (item.value("partition", json()).is_string()) {
            const std::string p = item["partition"].get<std::string>();
            if (std::find(parts.begin(), parts.end(), p) == parts.end()) parts.push_back(p);
        }
    auto label = [](const json& item) {
        return item.value("candidate_script", item.value("script", json("?"))).get<std::string>();
    };
    if (parts.size() > 1) {
        std::vector<std::string> rows;
        for (const auto& item : r["results"])
            if (std::find(rows.begin(), rows.end(), label(item)) == rows.end()) rows.push_back(label(item));
        out += fmt::format("{:<28}", "");
        for (const auto& p : parts) out += fmt::format(" {:<24}", p);
        out += "\n";
        for (const auto& row : rows) {
            out += fmt::format("{:<28}", shorten(row, 28));
            for (const auto& p : parts) {
                std::string cell = "-";
                for (const auto& item : r["results"])
                    if (label(item) == row && item.value("partition", json()) == p) cell = cell_of(item);
                out += fmt::format(" {:<24}", cell);
            }
            out += "\n";
        }
    }
    for (const auto& item : r["results"]) {
        out += fmt::format("{}  on {}: {}", label(item), where_of(item), cell_of(item));
        if (item.value("speedup_ci95", json()).is_object() && item["speedup_ci95"].value("low", json()).is_number())
            out += fmt::format(" (95% CI {:.3f}-{:.3f})", item["speedup_ci95"]["low"].get<double>(),
                               item["speedup_ci95"].value("high", json(0.0)).get<double>());
        if (item.value("job_id", json()).is_string())
            out += fmt::format(" [job {} {}]", item["job_id"].get<std::string>(), item.value("state", ""));
        out += "\n" + item_lines(item);
    }
    if (r.value("gate", json()).is_object())
        out += fmt::format("gate: {} ({}): {}\n", r["gate"].value("outcome", "?"), r["gate"].value("fail_on", "?"),
                           r["gate"].value("reason", ""));
    for (const auto& wng : r.value("warnings", json::array())) out += "warning: " + finding_message(wng) + "\n";
    if (r.value("full_record", json()).is_string()) out += "full record: " + r["full_record"].get<std::string>() + "\n";
    for (const auto& item : r["results"])
        if (item.value("verdict", json()).is_string() && item.value("full_record", json()).is_string()) {
            out += "record one: " +
                   words::call("record", json{{"result", item["full_record"]}, {"note", "<what changed>"}, {"who", "<who>"}}) +
                   "\n";
            break;
        }
    return out;
}

json run_batch_file(const std::string& path, const json& batch_args, tool_context& ctx) {
    const spread_plan plan = parse_plan(spread_args_of(batch_args, nullptr));
    const bool elsewhere = plan.kind != executor_kind::pool;
    std::vector<spread_job> jobs;
    std::size_t line_no = 0;
    const std::vector<std::string> partitions = plan.kind == executor_kind::slurm ? plan.partitions : std::vector<std::string>{""};
    for (const auto& line : split_lines(read_file(path))) {
        ++line_no;
        const std::string t = trim(line);
        if (t.empty() || t[0] == '#') continue;
        const json j = json::parse(t, nullptr, false);
        const std::string where = fmt::format("{} line {}", path, line_no);
        if (!j.is_object() || !j.value("tool", json()).is_string() || !j.value("args", json()).is_object())
            throw usage_error(fmt::format("{} is not a job: write one JSON object a line, {{\"tool\": \"verify\" or "
                                          "\"bench\", \"args\": {{...}}}}",
                                          where));
        const std::string tool_name = j["tool"].get<std::string>();
        if (tool_name != "verify" && tool_name != "bench")
            throw usage_error(fmt::format("{}: tool '{}' cannot be spread; use verify or bench", where, shorten(tool_name, 40)));
        const tool_spec* tool = find_tool(tool_name);
        json valid;
        try {
            valid = validate_args(*tool, j["args"], ctx.words);
        } catch (const usage_error& e) {
            throw usage_error(fmt::format("{}: {}", where, e.what()));
        }
        const tool_words w = words_of(tool_name);
        for (const char* k : {"gpus", "executor", "partition"})
            if (j["args"].contains(k)) throw usage_error(fmt::format("{}: {} belongs to the batch, not to a job", where, words::param(k)));
        const spread_args job_read = spread_args_of(valid, &w);
        if (!job_read.more.empty())
            throw usage_error(fmt::format("{}: one job is one {}; write a line per script", where, w.single));
        if (!job_read.first && !(tool_name == "verify" && job_read.baseline_ref))
            throw usage_error(fmt::format("{}: {} needs {}", where, tool_name, words::param(w.single)));
        if (job_read.first) check_script(w.single, *job_read.first);
        std::vector<std::string> keys = {w.single};
        if (tool_name == "verify") keys.push_back("baseline");
        for (const auto& part : partitions) {
            spread_job job;
            job.tool = tool_name;
            std::string tag = std::to_string(jobs.size() + 1);
            job.args = job_args(child_base(valid, w), tag, elsewhere, keys);
            job.label = job_read.first.value_or(job_read.baseline.value_or(""));
            job.partition = part;
            jobs.push_back(std::move(job));
        }
    }
    if (jobs.empty()) throw usage_error(fmt::format("{} holds no job: write one JSON object a line", path));
    spread_run run = run_spread(plan, jobs, ctx);
    return assemble(jobs, run, words_of("verify"), true, json());
}

}  // namespace hotkernel::scale
