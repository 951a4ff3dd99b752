// libFuzzer target for the MCP session: arbitrary bytes, split on '\n', fed as lines to one
// mcp_session serving the real tool registry. tools/call is disabled in this session
// (mcp_session_options::allow_tool_calls = false): name lookup and argument validation still
// run, but no handler does, so fuzz input can never start a process or touch files.
// Checked on every input: each message is one line of JSON-RPC 2.0, every error is bounded,
// and the id scanner (mcp/framing.h) agrees with the parser on every line that parses.
// Build: CXX=clang++ cmake -S . -B build-fuzz -DHOTKERNEL_FUZZ=ON -DHOTKERNEL_TESTS=OFF
//        -DCMAKE_CXX_COMPILER=clang++ && ninja -C build-fuzz fuzz_mcp
// Run:   build-fuzz/fuzz_mcp -max_total_time=60 -max_len=4096
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "mcp/framing.h"
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
            // Errors echo at most 200 bytes of any value: the whole text stays short.
            if (msg.contains("error") && msg["error"].value("message", std::string()).size() > 1024) std::abort();
            if (msg.contains("result") && msg["result"].value("isError", false) &&
                msg["result"]["content"].at(0).value("text", std::string()).size() > 1024)
                std::abort();
        });
    return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    auto& s = session();
    while (!input.empty()) {
        const auto nl = input.find('\n');
        const std::string_view line = input.substr(0, nl);
        const auto parsed = hotkernel::json::parse(line.begin(), line.end(), nullptr, false);
        if (parsed.is_object()) {  // where the parser reads an id, the scanner reads the same one
            const bool has = parsed.contains("id") && (parsed["id"].is_string() || parsed["id"].is_number_integer());
            const auto scanned = hotkernel::scan_request_id(line);
            if (has != scanned.has_value() || (has && *scanned != parsed["id"])) {
                // Except for an id string that may be past the scanner's bound (in its escaped
                // form, up to 6 bytes a byte), which it leaves out.
                const bool may_be_long = has && parsed["id"].is_string() && !scanned &&
                                         parsed["id"].get_ref<const std::string&>().size() * 6 > hotkernel::max_scanned_id_bytes;
                if (!may_be_long) std::abort();
            }
        }
        s.handle_line(line);
        if (nl == std::string_view::npos) break;
        input.remove_prefix(nl + 1);
    }
    if (s.running_calls() != 0) std::abort();  // no call may ever start in this session
    return 0;
}
