// record: store a verify result under results/<target>/ and regenerate LEADERBOARD.md.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "export/export.h"
#include "plot/save.h"
#include "registry/tool.h"
#include "report/findings.h"
#include "store/results_store.h"
#include "tools/plot_param.h"
#include "util/words.h"
#include "util/files.h"
#include "util/strings.h"

namespace hotkernel {
namespace {

/// What to pass, in the caller's words.
std::string what_to_pass() {
    return words::either("what `hotkernel verify --json` printed, or the file its full record names",
                         "verify's result, or the file its full_record names");
}

/// The `result` parameter: the verify result as JSON text (the full one, or a lean one, whose
/// full_record file is read), or the path of a file holding it.
json load_verify_result(const std::string& arg) {
    const std::string t = trim(arg);
    if (t.empty()) throw usage_error("result is empty; pass the verify result (JSON) or the path of a file holding it");
    std::string text = t;
    std::string where = "the result argument";
    if (t[0] != '{') {
        text = read_file(t);  // tool_error names the path when it is missing
        where = "'" + t + "'";
    }
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded())
        throw tool_error(fmt::format("{} is not valid JSON; pass {}", where, what_to_pass()));
    // Accept an MCP tool-call envelope too: {"structuredContent": {...}}.
    if (j.is_object() && j.contains("structuredContent") && j["structuredContent"].is_object()) j = j["structuredContent"];
    // A spread's result: a verify result per candidate and card (or partition), each its own record.
    if (j.is_object() && j.value("results", json()).is_array() && !j.contains("verdict")) {
        std::vector<std::string> files;
        for (const auto& item : j["results"])
            if (item.value("full_record", json()).is_string()) files.push_back(item["full_record"].get<std::string>());
        throw tool_error(fmt::format("{} holds {} verify results (one per candidate and GPU); record each you mean by "
                                     "its own full record{}",
                                     where, j["results"].size(),
                                     files.empty() ? std::string() : ": " + shorten(join(files, ", "), 2000)));
    }
    // A lean result: the whole one is in the file it names.
    if (j.is_object() && !j.contains("measurement") && j.value("full_record", json()).is_string()) {
        const std::string path = j["full_record"].get<std::string>();
        json full;
        try {
            full = json::parse(read_file(path), nullptr, false);
        } catch (const tool_error& e) {
            throw tool_error(fmt::format("{} is a lean verify result whose full record cannot be read ({}); pass the "
                                         "full result ({}) or rerun verify",
                                         where, e.what(), words::param("detail", "full")));
        }
        if (full.is_discarded() || !full.is_object())
            throw tool_error(fmt::format("the full record {} that {} names is not valid JSON; rerun verify", path, where));
        if (full.value("verdict", json()) != j.value("verdict", json()))
            throw tool_error(fmt::format("the full record {} says verdict {} but {} says {}: they are not the same "
                                         "verify; pass the file itself",
                                         path, dump_line(full.value("verdict", json())), where,
                                         dump_line(j.value("verdict", json()))));
        j = std::move(full);
        where = "'" + path + "'";
    }
    if (std::string why = check_verify_result(j); !why.empty())
        throw tool_error(fmt::format("{} is not a verify result: {}; pass {}", where, why, what_to_pass()));
    return j;
}

std::string one_line(const std::string& text, const char* name, const char* example) {
    std::string v = trim(text);
    if (v.empty()) throw usage_error(fmt::format("{} is empty; give one line, e.g. {}", name, example));
    if (v.find('\n') != std::string::npos || v.find('\r') != std::string::npos)
        throw usage_error(fmt::format("{} must be one line (it has a line break); e.g. {}", name, example));
    return v;
}

struct record_args {
    std::string result;
    std::string note;
    std::string who;
    std::string results_dir;
    std::string leaderboard;
    std::vector<std::string> exports;
    std::optional<std::string> plot;
};

/// Every record of `target` under results_dir, oldest first (the history plot's input).
std::vector<json> target_history(const std::filesystem::path& results_dir, const std::string& target) {
    std::vector<result_entry> entries;
    std::vector<skipped_file> skipped;
    scan_results(results_dir, entries, skipped);
    std::erase_if(entries, [&](const result_entry& e) { return e.doc.value("target", std::string()) != target; });
    std::stable_sort(entries.begin(), entries.end(), [](const result_entry& a, const result_entry& b) {
        return a.doc.value("recorded_utc", std::string()) < b.doc.value("recorded_utc", std::string());
    });
    std::vector<json> docs;
    for (auto& e : entries) docs.push_back(std::move(e.doc));
    return docs;
}

json record_handler(const record_args& args, tool_context& ctx) {
    std::vector<export_spec> exports;
    for (const auto& e : args.exports) exports.push_back(parse_export(e, "record: " + words::param("export")));
    const json result = load_verify_result(args.result);
    const std::string note = one_line(args.note, "note", "'fused the bias add into the matmul epilogue'");
    const std::string who = one_line(args.who, "who", "'agent: running kernel-speedrun unattended'");
    const std::filesystem::path results_dir = args.results_dir;
    const std::filesystem::path leaderboard = args.leaderboard;
    if (args.plot) plot::check_plot_arg(*args.plot);

    record_outcome o = record_result(result, note, who, results_dir, leaderboard, utc_now_iso());
    json skipped = json::array();
    for (const auto& s : o.skipped) skipped.push_back(json{{"file", s.rel_path}, {"reason", s.reason}});
    json warnings = json::array();
    if (!o.skipped.empty())
        warnings.push_back(findings::results_skipped(o.skipped.size(), results_dir.string()));
    json out{{"file", o.file.string()},
             {"target", o.target},
             {"verdict", result["verdict"]},
             {"leaderboard", o.leaderboard.string()},
             {"row", o.row},
             {"rows", o.rows},
             {"sections", o.sections},
             {"skipped", skipped},
             {"warnings", warnings}};
    if (!exports.empty()) out["exports"] = write_exports(exports, result);
    if (args.plot) {
        const std::vector<json> docs = target_history(results_dir, o.target);
        out["plot"] = plot::save_plot(*args.plot, "record", o.target,
                                      [&](plot::format f) { return plot::draw_history(o.target, docs, f); });
    }
    return out;
}

}  // namespace


tool_spec record_tool() {
    tool_spec t;
    t.name = "record";
    t.title = "Record";
    t.summary = "Save a verify result under results/ and regenerate LEADERBOARD.md";
    t.description =
        "Save a verify result: returns the results/ file and the LEADERBOARD.md row. Call it after every "
        "verify, win or lose.";
    t.details =
        "Write a verify() result to results/<target>/<UTC timestamp>-<id>.json (atomically), then regenerate "
        "LEADERBOARD.md from every file under results/ (so the table is always reproducible from the raw "
        "files). The Speedup cell is filled only when the verdict is 'faster'; otherwise it says 'no gain', "
        "'incorrect' or 'invalid'. Call it after every verify(), win or lose; never edit LEADERBOARD.md by "
        "hand. note is the one-line \"what changed\"; who says honestly who produced the candidate, e.g. "
        "'agent: running kernel-speedrun unattended' or 'hand-written by <name> during tool bring-up'. Files "
        "under results/ that are not results are skipped and named, never fatal; concurrent records lose no "
        "row.";
    t.output_schema = json{
        {"type", "object"},
        {"required", {"file", "target", "verdict", "leaderboard", "row", "rows", "skipped", "warnings"}},
        {"properties",
         {{"file", {{"type", "string"}}},
          {"target", {{"type", "string"}}},
          {"verdict", {{"type", "string"}}},
          {"leaderboard", {{"type", "string"}}},
          {"row", {{"type", "string"}}},
          {"rows", {{"type", "integer"}}},
          {"sections", {{"type", "integer"}}},
          {"skipped", {{"type", "array"}, {"items", {{"type", "object"}}}}},
          {"plot", plot_result_schema()},
          {"warnings", findings_schema(finding_kind::warning)}}}};
    t.annotations = {.read_only = false, .destructive = false, .idempotent = false, .open_world = false};
    return make_tool<record_args>(
        std::move(t),
        {param(&record_args::result, {.name = "result",
                                      .summary = "verify's result (JSON), or its file",
                                      .details = "The verify result: its JSON text, or the path of a file holding it "
                                                 "(e.g. verify.json).",
                                      .required = true,
                                      .max_length = 4u << 20}),
         param(&record_args::note,
               {.name = "note", .summary = "One line: what changed",
                                .details = "One line: what changed in the candidate.", .required = true}),
         param(&record_args::who, {.name = "who",
                                   .summary = "One line: who wrote it",
                                   .details = "One line: honestly who produced the candidate (agent or person).",
                                   .required = true}),
         param(&record_args::results_dir,
               {.name = "results_dir", .summary = "Folder of result files", .default_value = "results"}),
         param(&record_args::leaderboard, {.name = "leaderboard",
                                           .summary = "Leaderboard to regenerate",
                                           .default_value = "LEADERBOARD.md"}),
         param(&record_args::exports,
               {.name = "export",
                .summary = "FORMAT:PATH (markdown, csv, bmf, github-action-benchmark)",
                .details = "bmf is Bencher's format, github-action-benchmark its customSmallerIsBetter input; a PATH "
                           "ending .md or .csv needs no FORMAT. docs/ci.md."}),
         param(&record_args::plot, plot_param("the target's history in results_dir"))},
        record_handler);
}

}  // namespace hotkernel
