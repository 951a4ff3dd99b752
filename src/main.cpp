// hotkernel: one binary whose tools (src/registry/all_tools.cpp) are served as a CLI and as an MCP
// server over stdio.
#include <exception>
#include <iostream>

#include "cli/cli.h"
#include "process/strays.h"
#include "util/errors.h"

int main(int argc, char** argv) {
    // Whatever a run leaves behind (a setsid daemon) is re-parented to us, not to init, so the
    // stray sweep after each run finds it (process/strays.h).
    hotkernel::become_subreaper();
    try {
        return hotkernel::run_cli(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "hotkernel: internal error: " << e.what()
                  << "\nThis is a bug in hotkernel; please report it with the command you ran.\n";
        return static_cast<int>(hotkernel::exit_status::internal);
    }
}
