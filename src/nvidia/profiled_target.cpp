#include "nvidia/profiled_target.h"

#include <regex>

#include <fmt/format.h>

#include "util/files.h"
#include "util/strings.h"

namespace hotkernel {
namespace fs = std::filesystem;

namespace {

/// `s` cut to `n` bytes (an ellipsis marks the cut): a kernel name or stage in an error stays short.
std::string cut(std::string_view s, std::size_t n = 200) {
    return s.size() <= n ? std::string(s) : std::string(s.substr(0, n)) + "...";
}

}  // namespace

int parse_profile_mode(std::string_view contract_text) {
    static const std::regex re(R"((?:^|\n)PROFILE_MODE\s*=\s*(\d+))");
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(contract_text.begin(), contract_text.end(), m, re)) return 0;
    try {
        return std::stoi(m[1].str());
    } catch (const std::exception&) {
        return 0;
    }
}

std::optional<profiled_target> find_profiled_target(const std::vector<std::string>& command, const fs::path& cwd) {
    for (std::size_t i = 1; i < command.size(); ++i) {
        const std::string& a = command[i];
        if (a.size() < 4 || a.compare(a.size() - 3, 3, ".py") != 0) continue;
        fs::path p = fs::path(a).is_absolute() ? fs::path(a) : cwd / a;
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) continue;
        std::string text;
        try {
            text = read_file(p);
        } catch (const std::exception&) {
            continue;
        }
        if (!is_target_script_text(text)) continue;
        profiled_target t;
        t.script = p.lexically_normal();
        t.contract = t.script.parent_path() / "hotkernel_contract.py";
        if (fs::is_regular_file(t.contract, ec)) {
            try {
                t.profile_mode = parse_profile_mode(read_file(t.contract));
            } catch (const std::exception&) {
                t.profile_mode = 0;
            }
        }
        return t;
    }
    return std::nullopt;
}

std::string last_profile_stage(std::string_view output) {
    std::string stage;
    for (const auto& line : split_lines(output)) {
        const auto at = line.find(profile_stage_prefix);
        if (at != std::string::npos) stage = trim(line.substr(at + profile_stage_prefix.size()));
    }
    return stage;
}

std::string ncu_waiting_for(std::string_view output) {
    // Walk the output in order; the last event seen says what was under way.
    std::string state = "ncu's start (it had printed nothing yet)";
    // Found by hand, not std::regex: its matcher recurses once a character, and a long kernel
    // name ran a sanitized build out of stack.
    constexpr std::string_view profiling = "==PROF== Profiling \"";
    for (const auto& raw : split_lines(output)) {
        const std::string line = trim(raw);
        const auto p = line.find(profiling);
        const auto name_end = p == std::string::npos ? p : line.find('"', p + profiling.size());
        if (line.starts_with("==PROF== Connected to process")) {
            state = "the command's start (its imports, before any kernel ncu profiles)";
        } else if (const auto at = line.find(profile_stage_prefix); at != std::string::npos) {
            state = "the target's profile mode, " + cut(trim(line.substr(at + profile_stage_prefix.size())));
        } else if (name_end != std::string::npos) {
            const std::string name = line.substr(p + profiling.size(), name_end - p - profiling.size());
            if (line.find("100%", name_end) != std::string::npos)
                state = fmt::format("the command, after ncu profiled kernel '{}'", cut(name));
            else
                state = fmt::format("ncu's replay of kernel '{}' (each profiled kernel is replayed once per pass)",
                                    cut(name));
        } else if (line.starts_with("==PROF== Disconnected from process")) {
            state = "ncu writing its report, after the command ended";
        }
    }
    return state;
}

std::string nsys_waiting_for(std::string_view output) {
    std::string state = "nsys's start (it had printed nothing yet)";
    for (const auto& raw : split_lines(output)) {
        const std::string line = trim(raw);
        if (line.starts_with("Collecting data")) {
            state = "the command, traced by nsys";
        } else if (const auto at = line.find(profile_stage_prefix); at != std::string::npos) {
            state = "the target's profile mode, " + cut(trim(line.substr(at + profile_stage_prefix.size()))) +
                    ", traced by nsys";
        } else if (line.starts_with("Generating '") || line.starts_with("Processing events")) {
            state = "nsys's export of its trace into a report, after the command ended";
        }
    }
    return state;
}

}  // namespace hotkernel
