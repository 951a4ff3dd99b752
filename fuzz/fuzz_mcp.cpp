// libFuzzer target for the MCP session: arbitrary bytes, split on '\n', fed as lines to one
// mcp_session serving the real tool registry. tools/call is disabled in this session
// (mcp_session_options::allow_tool_calls = false): name lookup and argument validation still
// run, but no handler does, so fuzz input can never start a process or touch files.
// Build: CXX=clang++ cmake -S . -B build-fuzz -DHOTKERNEL_FUZZ=ON -DHOTKERNEL_TESTS=OFF
//        -DCMAKE_CXX_COMPILER=clang++ && ninja -C build-fuzz fuzz_mcp
// Run:   build-fuzz/fuzz_mcp -max_total_time=60 -max_len=4096
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "mcp/server.h"

namespace {

hotkernel::mcp_session& session() {
    static hotkernel::mcp_session s(
        [] {
            hotkernel::mcp_session_options o;
            o.allow_tool_calls = false;
            return o;
        }(),
        [](const hotkernel::json& msg) {
            // Serialise as the real writer does; every message must be one line of JSON-RPC 2.0.
            const std::string line = hotkernel::dump_line(msg);
            if (line.find('\n') != std::string::npos || !msg.is_object() || msg.value("jsonrpc", "") != "2.0") std::abort();
        });
    return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    auto& s = session();
    while (!input.empty()) {
        const auto nl = input.find('\n');
        s.handle_line(input.substr(0, nl));
        if (nl == std::string_view::npos) break;
        input.remove_prefix(nl + 1);
    }
    if (s.running_calls() != 0) std::abort();  // no call may ever start in this session
    return 0;
}
