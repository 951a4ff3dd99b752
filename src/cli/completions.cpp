// Shell completions and the man page, rendered from the registry and cli/command_line.h.
#include "cli/completions.h"

#include <fmt/format.h>

#include "cli/command_line.h"
#include "registry/tool.h"
#include "util/errors.h"
#include "util/strings.h"
#include "util/schema_version.h"

namespace hotkernel {
namespace {

std::string flag_of(const param_spec& p) { return "--" + to_kebab(p.name); }
bool takes_value(const param_spec& p) { return p.type != param_type::boolean; }
bool is_number(const param_spec& p) { return p.type == param_type::integer || p.type == param_type::number; }
const char* metavar(const param_spec& p) { return param_metavar(p.type); }

/// A description on one line, without the characters a completion spec gives a meaning to.
std::string plain(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '\n' || c == '\t') c = ' ';
        if (c == '[') c = '(';
        if (c == ']') c = ')';
        if (c == '\\' || c == '`') continue;
        out += c;
    }
    return out;
}

/// Inside single quotes, for sh (zsh, bash) and for fish.
std::string sh_quoted(std::string_view text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}
std::string fish_quoted(std::string_view text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

std::vector<std::string> visible_commands() {
    std::vector<std::string> names;
    for (const auto& t : all_tools()) names.push_back(to_kebab(t.name));
    for (const auto& c : cli_commands)
        if (!c.hidden) names.emplace_back(c.name);
    return names;
}

std::string bash_script() {
    std::string valued, top;
    for (const auto& g : global_options) {
        if (!g.value.empty()) valued += (valued.empty() ? "" : "|") + std::string(g.flag);
        top += " " + std::string(g.flag) + (g.alias.empty() ? "" : " " + std::string(g.alias));
    }
    for (const auto& c : visible_commands()) top += " " + c;
    std::string s = fmt::format(
        "# bash completion for hotkernel {}, generated from its tool registry: hotkernel completions bash\n"
        "_hotkernel() {{\n"
        "    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} cmd='' opts='' i\n"
        "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "        case ${{COMP_WORDS[i]}} in\n"
        "            {}) ((i++)) ;;\n"
        "            -*) ;;\n"
        "            *) cmd=${{COMP_WORDS[i]}}; break ;;\n"
        "        esac\n"
        "    done\n"
        "    case $prev in\n"
        "        {}) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
        "    esac\n"
        "    case $cmd in\n"
        "        '') COMPREPLY=($(compgen -W '{} --help --version' -- \"$cur\")); return ;;\n"
        "        completions) COMPREPLY=($(compgen -W '{}' -- \"$cur\")); return ;;\n"
        "        mcp|man) COMPREPLY=($(compgen -W '--help' -- \"$cur\")); return ;;\n",
        hotkernel_version(), valued, valued, top.substr(1), fmt::join(completion_shells, " "));
    for (const auto& t : all_tools()) {
        std::string opts = "--help", numbers, choices;
        for (const auto& p : t.params) {
            opts += " " + flag_of(p);
            if (p.type == param_type::boolean) opts += " --no-" + to_kebab(p.name);
            if (!p.choices.empty())
                choices += fmt::format("                {}) COMPREPLY=($(compgen -W '{}' -- \"$cur\")); return ;;\n",
                                       flag_of(p), fmt::join(p.choices, " "));
            else if (is_number(p)) numbers += (numbers.empty() ? "" : "|") + flag_of(p);
        }
        s += fmt::format("        {})\n            case $prev in\n{}", to_kebab(t.name), choices);
        if (!numbers.empty()) s += fmt::format("                {}) return ;;\n", numbers);
        s += fmt::format("            esac\n            opts='{}' ;;\n", opts);
    }
    s += "    esac\n"
         "    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
         "    else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
         "}\n"
         "complete -o filenames -o bashdefault -F _hotkernel hotkernel\n";
    return s;
}

std::string zsh_option(const param_spec& p) {
    const std::string help = plain(p.summary);
    if (p.type == param_type::boolean) {
        const std::string no = "--no-" + to_kebab(p.name);
        return sh_quoted(fmt::format("({} {}){}[{}]", flag_of(p), no, flag_of(p), help)) + " " +
               sh_quoted(fmt::format("({} {}){}[not: {}]", flag_of(p), no, no, help));
    }
    std::string action = is_number(p) ? "" : "_files";
    if (!p.choices.empty()) action = fmt::format("({})", fmt::join(p.choices, " "));
    const std::string repeat = p.type == param_type::string_array ? "*" : "";
    return sh_quoted(fmt::format("{}{}=[{}]:{}:{}", repeat, flag_of(p), help, metavar(p), action));
}

std::string zsh_script() {
    std::string s = fmt::format(
        "#compdef hotkernel\n"
        "# zsh completion for hotkernel {}, generated from its tool registry: hotkernel completions zsh\n"
        "_hotkernel() {{\n"
        "    local curcontext=$curcontext state line ret=1\n"
        "    local -a commands=(\n",
        hotkernel_version());
    for (const auto& t : all_tools()) s += "        " + sh_quoted(to_kebab(t.name) + ":" + plain(t.summary)) + "\n";
    for (const auto& c : cli_commands)
        if (!c.hidden) s += "        " + sh_quoted(std::string(c.name) + ":" + plain(c.help)) + "\n";
    s += "    )\n    _arguments -C \\\n";
    for (const auto& g : global_options) {
        const std::string names = g.alias.empty() ? std::string(g.flag) : fmt::format("({} {})'{{{},{}}}'", g.flag, g.alias, g.flag, g.alias);
        if (g.value.empty() && g.alias.empty()) s += "        " + sh_quoted(fmt::format("{}[{}]", g.flag, plain(g.help)));
        else if (g.value.empty()) s += fmt::format("        '{}[{}]'", names, sh_quoted(plain(g.help)).substr(1, sh_quoted(plain(g.help)).size() - 2));
        else s += "        " + sh_quoted(fmt::format("{}=[{}]:{}:_files", g.flag, plain(g.help), g.value));
        s += " \\\n";
    }
    s += "        '(- *)--version[Print the version]' \\\n"
         "        '(- *)'{-h,--help}'[Print help]' \\\n"
         "        '1: :->command' \\\n"
         "        '*:: :->args' && ret=0\n"
         "    case $state in\n"
         "        command) _describe -t commands 'hotkernel command' commands && ret=0 ;;\n"
         "        args)\n"
         "            case $words[1] in\n";
    s += fmt::format("                completions) _arguments '1:shell:({})' && ret=0 ;;\n",
                     fmt::join(completion_shells, " "));
    for (const auto& t : all_tools()) {
        s += fmt::format("                {}) _arguments \\\n", to_kebab(t.name));
        int position = 0;
        for (const auto& p : t.params) {
            s += "                    " + zsh_option(p) + " \\\n";
            if (!p.positional) continue;
            const std::string spec = p.type == param_type::string_array ? "*" : std::to_string(++position);
            s += "                    " + sh_quoted(fmt::format("{}:{}:_files", spec, p.name)) + " \\\n";
        }
        s += "                    '(- *)'{-h,--help}'[Print help]' && ret=0 ;;\n";
    }
    s += "            esac ;;\n"
         "    esac\n"
         "    return ret\n"
         "}\n"
         "if [ \"$funcstack[1]\" = \"_hotkernel\" ]; then _hotkernel \"$@\"; else compdef _hotkernel hotkernel; fi\n";
    return s;
}

std::string fish_script() {
    std::string s = fmt::format(
        "# fish completion for hotkernel {}, generated from its tool registry: hotkernel completions fish\n"
        "complete -c hotkernel -f\n",
        hotkernel_version());
    const std::string top = "complete -c hotkernel -n __fish_use_subcommand";
    for (const auto& g : global_options) {
        s += top + " -l " + std::string(g.flag.substr(2));
        if (!g.alias.empty()) s += " -s " + std::string(g.alias.substr(1));
        if (!g.value.empty()) s += " -r -F";
        s += " -d " + fish_quoted(plain(g.help)) + "\n";
    }
    for (const auto& t : all_tools()) s += top + " -a " + to_kebab(t.name) + " -d " + fish_quoted(plain(t.summary)) + "\n";
    for (const auto& c : cli_commands)
        if (!c.hidden) s += top + " -a " + std::string(c.name) + " -d " + fish_quoted(plain(c.help)) + "\n";
    s += fmt::format("complete -c hotkernel -n '__fish_seen_subcommand_from completions' -x -a '{}'\n",
                     fmt::join(completion_shells, " "));
    for (const auto& t : all_tools()) {
        const std::string in = fmt::format("complete -c hotkernel -n '__fish_seen_subcommand_from {}'", to_kebab(t.name));
        bool positional = false;
        for (const auto& p : t.params) {
            positional |= p.positional;
            s += in + " -l " + to_kebab(p.name);
            if (!p.choices.empty()) s += fmt::format(" -x -a '{}'", fmt::join(p.choices, " "));
            else if (is_number(p)) s += " -x";
            else if (takes_value(p)) s += " -r -F";
            s += " -d " + fish_quoted(plain(p.summary)) + "\n";
            if (p.type == param_type::boolean)
                s += in + " -l no-" + to_kebab(p.name) + " -d " + fish_quoted("not: " + plain(p.summary)) + "\n";
        }
        if (positional) s += in + " -F\n";  // its positional arguments are files
    }
    return s;
}

// ---- the man page ----------------------------------------------------------------------------

/// Text as roff shows it: backslashes and hyphens escaped, no line starting with a control character.
std::string roff(std::string_view text) {
    std::string out;
    bool line_start = true;
    for (char c : text) {
        if (line_start && (c == '.' || c == '\'')) out += "\\&";
        if (c == '\\') out += "\\e";
        else if (c == '-') out += "\\-";
        else out += c;
        line_start = c == '\n';
    }
    return out;
}

std::string man_option(const std::string& flags, const std::string& value, const std::string& help) {
    return ".TP\n\\fB" + roff(flags) + "\\fR" + (value.empty() ? "" : " \\fI" + roff(value) + "\\fR") + "\n" + roff(help) + "\n";
}

}  // namespace

std::string completion_script(std::string_view shell) {
    if (shell == "bash") return bash_script();
    if (shell == "zsh") return zsh_script();
    if (shell == "fish") return fish_script();
    throw usage_error(fmt::format("completions: no script for the shell '{}'; the shells are {}", shorten(std::string(shell), 40),
                                  fmt::join(completion_shells, ", ")));
}

std::string man_page() {
    std::string s = fmt::format(".TH HOTKERNEL 1 \"\" \"hotkernel {}\" \"User Commands\"\n", hotkernel_version());
    s += ".SH NAME\nhotkernel \\- the measuring loop for making a GPU kernel faster\n"
         ".SH SYNOPSIS\n.B hotkernel\n[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGUMENTS\\fR]\n"
         ".br\n.B hotkernel mcp\n"
         ".SH DESCRIPTION\n" +
         roff("Scaffold a target from a PyTorch function, benchmark the baseline, edit a candidate, profile, "
              "disassemble, verify the candidate against the baseline, record the result, and use the roofline to "
              "know when to stop. Every command prints a readable result, or one JSON object with --json; "
              "hotkernel mcp serves the same tools to an agent over stdio (the Model Context Protocol).") +
         "\n.SH OPTIONS\n";
    for (const auto& g : global_options)
        s += man_option(std::string(g.flag) + (g.alias.empty() ? "" : ", " + std::string(g.alias)), std::string(g.value),
                        std::string(g.help));
    s += man_option("--version", "", "Print the version.") + man_option("--help, -h", "", "Print help (also after a command).");
    s += ".SH COMMANDS\n";
    for (const auto& t : all_tools()) {
        std::string usage = "hotkernel " + to_kebab(t.name);
        for (const auto& p : t.params)
            if (p.positional) usage += " " + std::string(p.required ? "" : "[") + to_upper(p.name) + (p.required ? "" : "]");
        s += ".SS \"" + roff(usage) + " [OPTIONS]\"\n" + roff(t.description) + "\n";
        if (!t.details.empty()) s += ".PP\n" + roff(t.details) + "\n";
        for (const auto& p : t.params) {
            std::string flags = flag_of(p);
            if (p.type == param_type::boolean) flags += ", --no-" + to_kebab(p.name);
            std::string help = param_cli_help(p);
            if (p.positional) help += " Also the " + std::string(p.required ? "" : "optional ") + "positional argument " +
                                      to_upper(p.name) + ".";
            s += man_option(flags, takes_value(p) ? metavar(p) : "", help);
        }
    }
    for (const auto& c : cli_commands)
        if (!c.hidden) s += ".SS \"hotkernel " + std::string(c.name) + "\"\n" + roff(std::string(c.help)) + ".\n";
    s += ".SH EXIT STATUS\n" + roff(std::string(exit_status_help)) + "\n";
    s += ".SH ENVIRONMENT\n" +
         man_option("HOTKERNEL_PYTHON", "", "The interpreter that runs kernels when --python is not given.") +
         man_option("HOTKERNEL_KEEP_WARM_S", "", "Seconds a kept fork server outlives the last command that used it.");
    s += ".SH SEE ALSO\n" + roff("docs/tools.md (every tool and parameter), docs/measurement.md, docs/trust.md and "
                                 "docs/mcp.md in the hotkernel repository.") + "\n";
    return s;
}

}  // namespace hotkernel
