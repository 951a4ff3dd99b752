// command_runner: a spec through the user's command template.
#include "scale/command_runner.h"

#include "util/strings.h"

namespace hotkernel::scale {

std::string render_command(const std::string& templ, const process_spec& spec) {
    std::vector<std::string> words;
    if (!spec.env_set.empty() || !spec.env_unset.empty()) {
        words.push_back("env");
        for (const auto& k : spec.env_unset) words.insert(words.end(), {"-u", k});
        for (const auto& [k, v] : spec.env_set) words.push_back(k + "=" + v);
    }
    words.insert(words.end(), spec.argv.begin(), spec.argv.end());
    const std::string cmd = join_command_line(words);
    std::string out;
    const std::string key = "{cmd}";
    for (std::size_t i = 0; i < templ.size();) {
        if (templ.compare(i, key.size(), key) == 0) {
            out += cmd;
            i += key.size();
        } else {
            out += templ[i++];
        }
    }
    return out;
}

process_result command_runner::run(const process_spec& spec, const cancel_token& cancel) {
    process_spec local = spec;
    local.argv = {"sh", "-c", render_command(m_template, spec)};
    local.env_set.clear();  // they travel inside {cmd}, to wherever it runs
    local.env_unset.clear();
    local.cwd.clear();
    local.cpus.clear();
    process_result r = m_inner.run(local, cancel);
    r.placement["command"] = m_template;
    return r;
}

}  // namespace hotkernel::scale
