// The command-template executor: each spec runs through a command the user writes, with {cmd}
// replaced by the spec (its environment changes and argv, shell-quoted), e.g.
// `ssh gpu7 {cmd}` or `sky exec dev -- {cmd}`; `sh -c` runs the result here, with the spec's
// stdin, timeout and cancellation, so what answers on stdout is the remote hotkernel's JSON.
#pragma once
#include <string>

#include "process/runner.h"

namespace hotkernel::scale {

/// The template with every {cmd} replaced by `spec` as one shell command line.
std::string render_command(const std::string& templ, const process_spec& spec);

class command_runner final : public process_runner {
public:
    command_runner(process_runner& inner, std::string templ) : m_inner(inner), m_template(std::move(templ)) {}
    using process_runner::run;
    /// placement: command (the template).
    process_result run(const process_spec& spec, const cancel_token& cancel) override;

private:
    process_runner& m_inner;
    std::string m_template;
};

}  // namespace hotkernel::scale
