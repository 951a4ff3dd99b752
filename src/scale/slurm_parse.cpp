// Slurm's squeue/sacct/sbatch text, and the array script.
#include "scale/slurm_parse.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "util/strings.h"

namespace hotkernel::scale {
namespace {

std::optional<int> slurm_int(std::string_view s) {
    int v = 0;
    const auto* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, v);
    if (ec != std::errc() || p != end || s.empty() || v < 0) return std::nullopt;
    return v;
}

}  // namespace

std::optional<std::vector<int>> parse_task_range(std::string_view text) {
    std::string_view t = text;
    if (!t.empty() && t.front() == '[') t.remove_prefix(1);
    if (!t.empty() && t.back() == ']') t.remove_suffix(1);
    if (auto pct = t.find('%'); pct != std::string_view::npos) t = t.substr(0, pct);  // the throttle
    std::vector<int> out;
    for (const auto& part : split(t, ',')) {
        const auto dash = part.find('-');
        auto lo = slurm_int(dash == std::string::npos ? part : std::string_view(part).substr(0, dash));
        auto hi = dash == std::string::npos ? lo : slurm_int(std::string_view(part).substr(dash + 1));
        if (!lo || !hi || *hi < *lo || *hi - *lo > 1000000 || out.size() > 1000000) return std::nullopt;
        for (int i = *lo; i <= *hi; ++i) out.push_back(i);
    }
    if (out.empty()) return std::nullopt;
    return out;
}

std::vector<slurm_row> parse_slurm_rows(std::string_view text) {
    std::vector<slurm_row> rows;
    for (const auto& line : split_lines(text)) {
        const auto cells = split(trim(line), '|');
        if (cells.size() < 2) continue;
        const std::string id = trim(cells[0]);
        if (id.empty() || id.find('.') != std::string::npos) continue;  // sacct's steps: 12.batch, 12.0
        slurm_row r;
        if (const auto us = id.find('_'); us != std::string::npos) {
            r.job = id.substr(0, us);
            auto tasks = parse_task_range(std::string_view(id).substr(us + 1));
            if (!tasks) continue;
            r.tasks = std::move(*tasks);
        } else {
            r.job = id;
        }
        if (!slurm_int(r.job)) continue;
        const std::string state = trim(cells[1]);
        r.state = state.substr(0, state.find(' '));  // "CANCELLED by 0"
        if (r.state.empty() || !std::all_of(r.state.begin(), r.state.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) || c == '_'; }))
            continue;
        if (cells.size() > 2) r.detail = trim(cells[2]);
        if (cells.size() > 3) r.node = trim(cells[3]);
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string sbatch_job_id(std::string_view out) {
    for (const auto& line : split_lines(out)) {
        const std::string t = trim(line);
        const std::string id = t.substr(0, t.find(';'));
        if (slurm_int(id)) return id;
    }
    return "";
}

bool is_final_state(std::string_view s) {
    static const std::vector<std::string_view> final_states = {
        "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL",
        "DEADLINE", "REVOKED", "SPECIAL_EXIT"};
    return std::find(final_states.begin(), final_states.end(), s) != final_states.end();
}

std::string describe_state(std::string_view s, std::string_view exit_code) {
    const std::string code = exit_code.empty() || exit_code == "0:0" ? "" : fmt::format(", exit code {}", exit_code);
    if (s == "COMPLETED") return "";
    if (s == "FAILED") return fmt::format("the job failed (FAILED{})", code);
    if (s == "CANCELLED") return "the job was cancelled (CANCELLED)";
    if (s == "TIMEOUT") return "the job ran past its time limit (TIMEOUT); give it more time (--time in HOTKERNEL_SLURM_ARGS)";
    if (s == "NODE_FAIL") return "the job's node failed (NODE_FAIL); rerun it, or exclude that node";
    if (s == "OUT_OF_MEMORY") return "the job ran out of memory (OUT_OF_MEMORY); ask for more (--mem in HOTKERNEL_SLURM_ARGS)";
    if (s == "PREEMPTED") return "the job was preempted (PREEMPTED); rerun it";
    if (s == "BOOT_FAIL") return "the job's node did not boot (BOOT_FAIL); rerun it";
    if (s == "DEADLINE") return "the job missed its deadline (DEADLINE)";
    return fmt::format("the job ended {}{}", s, code);
}

std::string slurm_minutes(double seconds) {
    const double m = std::ceil(std::max(seconds, 1.0) / 60.0);
    return fmt::format("{:.0f}", std::min(m, 365.0 * 24 * 60));
}

std::string array_script(const std::vector<process_spec>& specs, const std::string& what) {
    std::string s = "#!/bin/bash\n# " + what + "\n# Task i of this array runs line i below; its answer is its stdout.\n";
    s += "case \"$SLURM_ARRAY_TASK_ID\" in\n";
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const process_spec& p = specs[i];
        std::vector<std::string> cmd = {"env"};
        for (const auto& k : p.env_unset) cmd.insert(cmd.end(), {"-u", k});
        for (const auto& [k, v] : p.env_set) cmd.push_back(k + "=" + v);
        cmd.insert(cmd.end(), p.argv.begin(), p.argv.end());
        std::string line = "exec " + join_command_line(cmd);
        if (!p.cwd.empty()) line = "cd " + join_command_line({p.cwd.string()}) + " && " + line;
        s += fmt::format("{}) {} ;;\n", i, line);
    }
    s += "esac\necho \"hotkernel: array task '$SLURM_ARRAY_TASK_ID' has no command in $0\" >&2\nexit 99\n";
    return s;
}

}  // namespace hotkernel::scale
