#include "cli/cli.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <deque>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/command_line.h"
#include "cli/completions.h"
#include "cli/docs.h"
#include "mcp/server.h"
#include "process/fake_runner.h"
#include "registry/tool.h"
#include "render/render.h"
#include "report/findings.h"
#include "scale/run_job.h"
#include "scale/spread.h"
#include "util/files.h"
#include "util/strings.h"
#include "util/schema_version.h"

namespace hotkernel {
namespace {

/// Per-parameter storage for CLI11 to fill; converted to the JSON arguments MCP would send.
struct flag_value {
    const param_spec* param = nullptr;
    CLI::Option* option = nullptr;
    std::string text;
    std::vector<std::string> list;
    bool flag = false;
};

/// Turns what CLI11 collected into the tool's JSON arguments; numbers are parsed here so
/// a bad number gets the same kind of message as through MCP. A list's comma form
/// ("x,w_q,scales") is split here, the one place it is accepted.
json collect_args(const tool_spec& tool, const std::deque<flag_value>& values) {
    json args = json::object();
    for (const auto& v : values) {
        const param_spec& p = *v.param;
        if (std::none_of(tool.params.begin(), tool.params.end(), [&](const param_spec& q) { return &q == v.param; }))
            continue;  // another subcommand's flag
        if (v.option->count() == 0) {
            if (!p.cli_default.is_null()) args[p.name] = p.cli_default;
            continue;
        }
        switch (p.type) {
            case param_type::string: args[p.name] = v.text; break;
            case param_type::string_array: {
                json arr = json::array();
                for (const auto& item : v.list)
                    for (const auto& part : split(item, ','))
                        if (!trim(part).empty()) arr.push_back(trim(part));
                args[p.name] = arr;
                break;
            }
            case param_type::boolean: args[p.name] = v.flag; break;
            case param_type::integer:
            case param_type::number: {
                const std::string t = trim(v.text);
                try {
                    std::size_t used = 0;
                    if (p.type == param_type::integer) {
                        long long n = std::stoll(t, &used, 0);
                        if (used != t.size()) throw std::invalid_argument(t);
                        args[p.name] = n;
                    } else {
                        double d = std::stod(t, &used);
                        if (used != t.size()) throw std::invalid_argument(t);
                        args[p.name] = d;
                    }
                } catch (const std::exception&) {
                    throw usage_error(fmt::format("{}: --{} expects {}, got '{}'", to_kebab(tool.name), to_kebab(p.name),
                                                  p.type == param_type::integer ? "an integer" : "a number", v.text));
                }
                break;
            }
        }
    }
    return args;
}

/// Progress on stderr: a bar redrawn in place on a terminal; in a log (CI), one line per step at
/// most once a second, so a long verify shows life without flooding the log.
class progress_printer {
public:
    progress_printer(std::string tool, bool quiet) : m_tool(std::move(tool)), m_quiet(quiet), m_tty(::isatty(2) != 0) {}

    void operator()(double done, double total, const std::string& msg) {
        if (m_quiet) return;
        const std::string text = total > 0 ? fmt::format("{:.0f}/{:.0f} {}", done, total, msg) : msg;
        if (m_tty) {
            std::cerr << fmt::format("\r\033[K[{}] {}", m_tool, text) << std::flush;
            m_drawn = true;
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        if (m_printed && now - m_last < std::chrono::seconds(1)) return;
        const double elapsed = std::chrono::duration<double>(now - m_start).count();
        std::cerr << fmt::format("hotkernel {}: {} ({:.0f} s)\n", m_tool, text, elapsed) << std::flush;
        m_printed = true;
        m_last = now;
    }

    /// Clears the bar before the result is printed.
    void finish() {
        if (m_tty && m_drawn) std::cerr << "\r\033[K" << std::flush;
    }

private:
    std::string m_tool;
    bool m_quiet;
    bool m_tty;
    bool m_drawn = false;
    bool m_printed = false;
    std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point m_last{};
};

// Ctrl-C (or SIGTERM) cancels the call: its children are killed with their groups, Slurm jobs
// scancel'd, and the result says so; a second one ends hotkernel at once.
const cancel_token* g_signal_token = nullptr;
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_cancel_signal(int sig) {
    if (g_signal != 0 || g_signal_token == nullptr) {
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    g_signal = sig;
    g_signal_token->cancel();  // an atomic store: safe in a handler
}

void cancel_on_signals(const cancel_token& token) {
    g_signal_token = &token;
    struct sigaction sa {};
    sa.sa_handler = on_cancel_signal;
    sigemptyset(&sa.sa_mask);
    for (int s : {SIGINT, SIGTERM}) sigaction(s, &sa, nullptr);
}

/// 128 + the signal that cancelled the call (the shell's convention), else `code`.
int exit_after_signal(int code) { return g_signal != 0 ? 128 + g_signal : code; }

/// A verify's gate (fail_on) decides the exit code; any other result exits 0.
int result_exit_code(const json& result) {
    if (!result.is_object() || !result.contains("gate") || !result["gate"].is_object()) return 0;
    const std::string outcome = result["gate"].value("outcome", std::string());
    if (outcome == "pass") return static_cast<int>(exit_status::ok);
    if (outcome == "fail") return static_cast<int>(exit_status::gate_failed);
    return static_cast<int>(exit_status::undecided);
}

}  // namespace

int run_cli(int argc, char** argv) {
    CLI::App app{"hotkernel: the measuring loop for making a GPU kernel faster.\n"
                 "Every tool prints a readable result, or one JSON object with --json.\n"
                 "`hotkernel mcp` serves the same tools to an agent over stdio (MCP)."};
    app.footer(std::string(exit_status_help));
    app.name("hotkernel");
    app.set_version_flag("--version", std::string("hotkernel ") + hotkernel_version());
    app.fallthrough(true);
    app.require_subcommand(0, 1);

    bool as_json = false;
    bool quiet = false;
    std::string python;
    std::string json_out;
    const std::map<std::string_view, bool*> switches = {{"--json", &as_json}, {"--quiet", &quiet}};
    const std::map<std::string_view, std::string*> values_of = {{"--json-out", &json_out}, {"--python", &python}};
    for (const auto& g : global_options) {
        const std::string names = std::string(g.flag) + (g.alias.empty() ? "" : "," + std::string(g.alias));
        if (g.value.empty()) app.add_flag(names, *switches.at(g.flag), std::string(g.help));
        else app.add_option(names, *values_of.at(g.flag), std::string(g.help))->type_name(std::string(g.value));
    }

    std::map<std::string_view, CLI::App*> command;
    auto add_commands = [&](bool before_tools) {
        for (const auto& c : cli_commands) {
            if (c.before_tools != before_tools) continue;
            command[c.name] = app.add_subcommand(std::string(c.name), std::string(c.help));
            if (c.hidden) command[c.name]->group("");  // used by scripts/generate-docs and the docs check
        }
    };
    add_commands(true);
    auto* mcp = command.at("mcp");
    std::deque<flag_value> values;  // deque: CLI11 keeps pointers into it
    std::map<CLI::App*, const tool_spec*> tool_of;
    for (const auto& tool : all_tools()) {
        auto* sub = app.add_subcommand(to_kebab(tool.name), tool.summary);
        sub->footer("\n" + tool.description + (tool.details.empty() ? "" : "\n\n" + tool.details));
        tool_of[sub] = &tool;
        for (const auto& p : tool.params) {
            values.push_back(flag_value{.param = &p});
            auto& v = values.back();
            const std::string flag = "--" + to_kebab(p.name);
            const std::string help = param_cli_help(p);
            switch (p.type) {
                case param_type::boolean:
                    v.option = sub->add_flag(flag + ",!--no-" + to_kebab(p.name), v.flag, help);
                    break;
                case param_type::string_array:
                    v.option = sub->add_option(p.positional ? p.name + "," + flag : flag, v.list, help + " (repeat or comma-separate)");
                    v.option->type_name(param_metavar(p.type));
                    break;
                default:
                    v.option = sub->add_option(p.positional ? p.name + "," + flag : flag, v.text, help);
                    v.option->type_name(param_metavar(p.type));
                    break;
            }
        }
    }

    add_commands(false);
    auto* docs = command.at("docs");
    bool readme_table = false;
    docs->add_flag("--readme-table", readme_table, "Print the README's tool table instead");
    bool warnings_doc = false;
    docs->add_flag("--warnings", warnings_doc, "Print docs/warnings.md (every warning and flag id) instead");
    auto* completions = command.at("completions");
    std::string shell;
    completions->add_option("shell", shell, "bash, zsh or fish")->required();
    completions->footer("\nbash: hotkernel completions bash > ~/.local/share/bash-completion/completions/hotkernel\n"
                        "zsh:  hotkernel completions zsh > \"${fpath[1]}/_hotkernel\"\n"
                        "fish: hotkernel completions fish > ~/.config/fish/completions/hotkernel.fish");
    auto* man = command.at("man");
    auto* list = command.at("list-tools");
    auto* run_job = command.at("run-job");
    std::string job_file;
    run_job->add_option("job", job_file, "The job file, or - for stdin")->required();
    auto* batch = command.at("batch");
    std::string batch_file;
    batch->add_option("file", batch_file, "One job a line: {\"tool\": \"verify\"|\"bench\", \"args\": {...}}")->required();
    std::map<std::string, std::string> batch_values;
    for (const auto& p : scale::spread_params())
        batch->add_option("--" + to_kebab(p.name), batch_values[p.name], param_cli_help(p))->type_name("TEXT");
    batch->footer("\nEach line is one call's arguments, as MCP would send them; the jobs run as --gpus, --executor and "
                  "--partition say (docs/scale.md), and the result lists each job's result.");
    bool output_schemas = false;
    list->add_flag("--output-schemas", output_schemas, "Print every tool's declared result schema instead, by name");

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "hotkernel: error: " << e.what() << "\n(run 'hotkernel --help' or 'hotkernel <tool> --help')\n";
        return static_cast<int>(exit_status::usage);
    }

    if (mcp->parsed()) {
        mcp_options opts;
        opts.python = python;
        return run_mcp_server(std::cin, std::cout, opts);
    }
    if (completions->parsed()) {
        try {
            std::cout << completion_script(shell);
            return 0;
        } catch (const usage_error& e) {
            std::cerr << "hotkernel: error: " << e.what() << "\n";
            return static_cast<int>(exit_status::usage);
        }
    }
    if (man->parsed()) {
        std::cout << man_page();
        return 0;
    }
    if (docs->parsed()) {
        std::cout << (readme_table ? tools_readme_table() : warnings_doc ? findings_markdown() : tools_markdown());
        return 0;
    }
    if (list->parsed() && output_schemas) {
        json schemas = json::object();
        for (const auto& t : all_tools()) schemas[t.name] = t.output_schema;
        std::cout << dump_pretty(schemas) << "\n";
        return 0;
    }
    if (list->parsed()) {
        json tools = json::array();
        for (const auto& t : all_tools()) tools.push_back(tool_listing(t));
        std::cout << dump_pretty(json{{"tools", tools}}) << "\n";
        return 0;
    }

    if (run_job->parsed()) {
        cancel_token token;
        cancel_on_signals(token);
        return scale::run_job_main(job_file, python, token);
    }

    const tool_spec* tool = nullptr;
    for (auto& [sub, t] : tool_of)
        if (sub->parsed()) tool = t;
    if (tool == nullptr && !batch->parsed()) {
        std::cout << app.help();
        return 0;
    }

    // HOTKERNEL_FAKE_RUNNER: a scripted runner instead of real processes (tests; process/fake_runner.h).
    std::unique_ptr<process_runner> fake;
    try {
        fake = fake_runner_from_env();
    } catch (const tool_error& e) {
        std::cerr << "hotkernel: error: " << e.what() << "\n";
        return static_cast<int>(exit_status::tool_failed);
    }
    posix_runner runner;
    tool_context ctx;
    ctx.runner = fake ? fake.get() : &runner;
    ctx.python = python;
    cancel_on_signals(ctx.cancel);
    auto progress = std::make_shared<progress_printer>(tool ? to_kebab(tool->name) : std::string("batch"), quiet);
    ctx.progress = [progress](double done, double total, const std::string& msg) { (*progress)(done, total, msg); };
    ctx.log = [](const std::string& line) { std::cerr << line << "\n"; };
    try {
        json result;
        if (tool != nullptr) {
            result = call_tool(*tool, collect_args(*tool, values), ctx);
        } else {
            json spread_args = json::object();
            for (const auto& [k, v] : batch_values)
                if (!v.empty()) spread_args[k] = v;
            result = scale::run_batch_file(batch_file, spread_args, ctx);
            normalize_findings(result);
            render_words(result, ctx.words);
            stamp_schema(result);
        }
        progress->finish();
        if (!json_out.empty()) write_file_atomic(json_out, dump_pretty(result) + "\n");
        if (as_json) std::cout << dump_pretty(result) << "\n";
        else if (tool == nullptr) std::cout << render_words(scale::render_spread(result), ctx.words);
        else std::cout << render_words(tool->render ? tool->render(result) : render_text(result), ctx.words);
        return exit_after_signal(result_exit_code(result));
    } catch (const usage_error& e) {
        progress->finish();
        std::cerr << "hotkernel: error: " << render_words(e.what(), ctx.words) << "\n";
        return exit_after_signal(static_cast<int>(exit_status::usage));
    } catch (const tool_error& e) {
        progress->finish();
        std::cerr << "hotkernel: error: " << render_words(e.what(), ctx.words) << "\n";
        return exit_after_signal(static_cast<int>(exit_status::tool_failed));
    }
}

}  // namespace hotkernel
