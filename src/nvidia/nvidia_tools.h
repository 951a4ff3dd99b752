// Finding NVIDIA's command-line tools (ncu, nsys, cuobjdump, nvdisasm, cu++filt) without
// CUDA_HOME.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace hotkernel {

struct tool_context;

/// Where a tool was found and how ("PATH", "/usr/local/cuda-13.0/bin", "python package ...").
struct located_tool {
    std::filesystem::path path;
    std::string source;
    [[nodiscard]] bool found() const { return !path.empty(); }
};

/// Looks for `name` on PATH, in $CUDA_HOME/$CUDA_PATH/bin, /usr/local/cuda*/bin (newest first),
/// /opt/nvidia/nsight-compute/*/ and /opt/nvidia/nsight-systems/*/bin. Then, when
/// `python` is not empty, in that interpreter's site-packages: nvidia/*/bin (the PyPI
/// nvidia-cuda-cuobjdump / -nvdisasm / -nvcc wheels) and triton/backends/nvidia/bin.
located_tool locate_nvidia_tool(const std::string& name, const tool_context* ctx = nullptr);

/// The folders locate_nvidia_tool searched, for error messages.
std::vector<std::string> nvidia_tool_search_description(const std::string& name);

}  // namespace hotkernel
