// THE list of tools, in the order the docs, the README table and tools/list show them.
// Adding a tool: write src/tools/<name>.cpp defining `tool_spec <name>_tool()`, then add
// one X(<name>) line here.
#include "registry/tool.h"
#include "util/schema_version.h"

#define HOTKERNEL_TOOLS(X) \
    X(gpu_info) \
    X(roofline) \
    X(calibrate) \
    X(new) \
    X(bench) \
    X(verify) \
    X(record) \
    X(torch_profile) \
    X(profile) \
    X(top_kernels) \
    X(disassemble) \

namespace hotkernel {

#define HOTKERNEL_DECLARE(name) tool_spec name##_tool();
HOTKERNEL_TOOLS(HOTKERNEL_DECLARE)
#undef HOTKERNEL_DECLARE

namespace {
/// call_tool stamps every result (util/schema_version.h); every declared result schema says so.
std::vector<tool_spec> declared(std::vector<tool_spec> tools) {
    for (auto& t : tools)
        if (t.output_schema.is_object() && t.output_schema.contains("properties")) {
            t.output_schema["properties"]["schema_version"] = {{"type", "string"}};
            t.output_schema["properties"]["hotkernel_version"] = {{"type", "string"}};
        }
    return tools;
}
}  // namespace

const std::vector<tool_spec>& all_tools() {
#define HOTKERNEL_ENTRY(name) name##_tool(),
    static const std::vector<tool_spec> tools = declared({HOTKERNEL_TOOLS(HOTKERNEL_ENTRY)});
#undef HOTKERNEL_ENTRY
    return tools;
}

}  // namespace hotkernel
