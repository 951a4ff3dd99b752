// Finding NVIDIA's command-line tools (ncu, nsys, cuobjdump, nvdisasm, cu++filt) without
// CUDA_HOME, and small helpers the look-inside tools share: shell-like splitting of a command
// line and a case-insensitive form of a regex that any regex engine accepts.
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

/// Splits a command line like a POSIX shell does for words: whitespace separates, single
/// quotes keep everything, double quotes keep all but \" and \\, a backslash escapes one char.
/// No variables, globs or pipes. Throws usage_error on an unterminated quote.
std::vector<std::string> split_command_line(const std::string& text);

/// Joins argv back into one line a shell would split the same way (for display).
std::string join_command_line(const std::vector<std::string>& argv);

/// Rewrites a regex so that letters outside bracket expressions match either case:
/// "gelu" -> "[gG][eE][lL][uU]". Escapes and bracket expressions are kept as they are.
std::string case_insensitive_regex(const std::string& pattern);

}  // namespace hotkernel
