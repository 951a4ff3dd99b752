// A run over several workloads, split into one record per shape (see workloads.h).
#include "measure/workloads.h"

#include <algorithm>

#include <fmt/format.h>

namespace hotkernel {
namespace {

int status_rank(const std::string& s) {
    if (s == "error") return 0;
    if (s == "invalid") return 1;
    if (s == "incorrect") return 2;
    if (s == "ok") return 3;
    return 0;  // unknown: as bad as it gets
}

}  // namespace

bool has_workloads(const json& line) {
    return line.is_object() && line.contains("workloads") && line["workloads"].is_array() &&
           !line["workloads"].empty();
}

std::vector<std::string> workload_names(const json& line) {
    std::vector<std::string> names;
    if (!has_workloads(line)) return names;
    for (const auto& w : line["workloads"]) names.push_back(w.is_object() ? w.value("name", "") : "");
    return names;
}

std::vector<run_record> split_by_workload(const run_record& run) {
    if (!has_workloads(run.line)) return {run};
    std::vector<run_record> out;
    json base = run.line;
    base.erase("workloads");
    // A run-level verdict on the whole process (a TARGET that differs, a changed script) is worse
    // than any of its workloads' and holds for each of them.
    int worst = 3;
    for (const auto& w : run.line["workloads"])
        if (w.is_object()) worst = std::min(worst, status_rank(w.value("status", "")));
    // The run's status, not its line's: hotkernel may have voided the run (run_answer::voided).
    const std::string run_status(to_string(run.status));
    const bool run_verdict = status_rank(run_status) < worst;
    for (const auto& w : run.line["workloads"]) {
        if (!w.is_object()) continue;
        run_record r = run;
        r.line = base;
        for (const auto& [k, v] : w.items())
            if (k != "name") r.line[k] = v;
        r.line["workload"] = w.value("name", "");
        r.ms = w.contains("ms") && w["ms"].is_number() ? w["ms"].get<double>() : 0;
        r.ok = w.contains("ok") && w["ok"].is_boolean() ? std::optional<bool>(w["ok"].get<bool>()) : std::nullopt;
        r.status = parse_run_status(w.value("status", json()));
        r.reason = w.contains("reason") && w["reason"].is_string() ? w["reason"].get<std::string>() : "";
        if (run_verdict) {
            r.status = run.status;
            r.reason = run.reason;
            r.ok = run.ok;
            r.line["status"] = run_status;
            r.line["reason"] = r.reason;
            r.line["ok"] = false;
        }
        r.contract_flags = json::array();
        if (w.contains("flags") && w["flags"].is_array())
            for (const auto& f : w["flags"])
                if (f.is_object()) r.contract_flags.push_back(f);
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<std::pair<std::string, compare_input>> split_by_workload(const compare_input& in) {
    const run_record* first = !in.baseline.empty() ? &in.baseline.front() : !in.candidate.empty() ? &in.candidate.front() : nullptr;
    std::vector<std::pair<std::string, compare_input>> out;
    if (first == nullptr) return out;
    for (const auto& name : workload_names(first->line)) out.emplace_back(name, compare_input{});
    auto add = [&](const std::vector<run_record>& from, std::vector<run_record> compare_input::*side) {
        for (const auto& r : from)
            for (auto& part : split_by_workload(r))
                for (auto& [name, ci] : out)
                    if (part.line.value("workload", "") == name) (ci.*side).push_back(part);
    };
    add(in.baseline, &compare_input::baseline);
    add(in.candidate, &compare_input::candidate);
    add(in.warmup_baseline, &compare_input::warmup_baseline);
    add(in.warmup_candidate, &compare_input::warmup_candidate);
    return out;
}

void restate_run_status(json& line) {
    if (!has_workloads(line)) return;
    const json* worst = nullptr;
    bool all_ok = true;
    for (const auto& w : line["workloads"]) {
        if (!w.is_object()) continue;
        all_ok = all_ok && w.value("ok", false);
        if (worst == nullptr || status_rank(w.value("status", "")) < status_rank((*worst).value("status", "")))
            worst = &w;
    }
    if (worst == nullptr) return;
    const std::string ws = worst->value("status", "");
    if (status_rank(line.value("status", "")) < status_rank(ws)) return;  // the run's own verdict is worse
    line["status"] = ws;
    line["ok"] = all_ok;
    const json& reason = worst->contains("reason") ? (*worst)["reason"] : json();
    line["reason"] = ws == "ok" ? json(nullptr)
                                : json(fmt::format("workload {}: {}", worst->value("name", ""),
                                                   reason.is_string() ? reason.get<std::string>() : ""));
}

}  // namespace hotkernel
