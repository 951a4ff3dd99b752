#include "mcp/plot_image.h"

#include "process/fork_protocol.h"
#include "util/errors.h"
#include "util/files.h"

namespace hotkernel {

void add_plot_image(json& call_result) {
    const json* sc = call_result.is_object() && call_result.contains("structuredContent")
                         ? &call_result["structuredContent"]
                         : nullptr;
    if (sc == nullptr || !sc->is_object() || !sc->contains("plot")) return;
    const json& plot = (*sc)["plot"];
    if (!plot.is_object() || plot.value("format", "") != "png" || !plot.value("path", json()).is_string() ||
        plot.contains("error"))
        return;
    std::string bytes;
    try {
        bytes = read_file(plot["path"].get<std::string>());
    } catch (const tool_error&) {
        return;  // the result already says where the file was meant to be
    }
    call_result["content"].push_back(json{{"type", "image"}, {"data", base64_encode(bytes)}, {"mimeType", "image/png"}});
}

}  // namespace hotkernel
