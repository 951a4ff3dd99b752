// Finding NVIDIA's tools (see nvidia_tools.h).
#include "nvidia/nvidia_tools.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "python/interpreter.h"
#include "registry/tool.h"
#include "util/strings.h"

namespace hotkernel {
namespace fs = std::filesystem;
namespace {

bool is_executable_file(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec) && !fs::is_directory(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

/// Sub-folders of `root` whose name starts with `prefix`, newest-looking first.
std::vector<fs::path> subdirs(const fs::path& root, const std::string& prefix) {
    std::vector<fs::path> out;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) return out;
    for (const auto& e : fs::directory_iterator(root, ec))
        if (e.is_directory(ec) && e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
    std::sort(out.begin(), out.end(), [&](const fs::path& a, const fs::path& b) {
        // The plain "cuda" link first (the admin's choice), then versions descending.
        if (a.filename() == prefix) return b.filename() != prefix;
        if (b.filename() == prefix) return false;
        return a.filename().string() > b.filename().string();
    });
    return out;
}

std::vector<std::pair<fs::path, std::string>> system_dirs(const std::string& name) {
    std::vector<std::pair<fs::path, std::string>> dirs;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* v = std::getenv(var); v && *v) dirs.push_back({fs::path(v) / "bin", std::string("$") + var + "/bin"});
    for (const auto& d : subdirs("/usr/local", "cuda")) dirs.push_back({d / "bin", d.string() + "/bin"});
    for (const auto& d : subdirs("/opt/nvidia/nsight-compute", "")) dirs.push_back({d, d.string()});
    for (const auto& d : subdirs("/opt/nvidia/nsight-systems", "")) dirs.push_back({d / "bin", d.string() + "/bin"});
    // Nsight Compute bundles an nsys; last resort, it may not be able to import its traces.
    if (name == "nsys")
        for (const auto& d : subdirs("/opt/nvidia/nsight-compute", ""))
            dirs.push_back({d / "host" / "target-linux-x64", d.string() + "/host/target-linux-x64"});
    return dirs;
}

/// site-packages folders of an interpreter (cached per interpreter for the process).
std::vector<fs::path> python_package_dirs(const tool_context& ctx, const std::string& python) {
    static std::mutex mu;
    static std::map<std::string, std::vector<fs::path>> cache;
    {
        std::lock_guard lock(mu);
        if (auto it = cache.find(python); it != cache.end()) return it->second;
    }
    std::vector<fs::path> dirs;
    if (ctx.runner) {
        process_spec spec;
        spec.argv = {python, "-c",
                     "import site, sys\n"
                     "d = []\n"
                     "try: d += site.getsitepackages()\nexcept Exception: pass\n"
                     "try: d.append(site.getusersitepackages())\nexcept Exception: pass\n"
                     "print('\\n'.join(x for x in d + sys.path if x))\n"};
        spec.timeout_s = 30;
        auto res = ctx.runner->run(spec, ctx.cancel);
        if (res.ok())
            for (const auto& line : split_lines(res.stdout_text))
                if (!trim(line).empty()) dirs.emplace_back(trim(line));
    }
    std::lock_guard lock(mu);
    cache[python] = dirs;
    return dirs;
}

}  // namespace

located_tool locate_nvidia_tool(const std::string& name, const tool_context* ctx) {
    if (auto p = find_executable(name); !p.empty()) return {p, "PATH"};
    for (const auto& [dir, label] : system_dirs(name))
        if (is_executable_file(dir / name)) return {dir / name, label};
    if (!ctx) return {};
    std::string python;
    try {
        python = resolve_python(*ctx);
    } catch (const tool_error&) {
        return {};
    }
    // A venv's bin folder first (pip-installed console scripts), then the package folders.
    const fs::path py_bin = fs::path(python).parent_path();
    if (is_executable_file(py_bin / name)) return {py_bin / name, "next to " + python};
    for (const auto& sp : python_package_dirs(*ctx, python)) {
        for (const auto& d : subdirs(sp / "nvidia", ""))
            if (is_executable_file(d / "bin" / name))
                return {d / "bin" / name, "python package nvidia/" + d.filename().string() + " of " + python};
        const fs::path tri = sp / "triton" / "backends" / "nvidia" / "bin" / name;
        if (is_executable_file(tri)) return {tri, "the triton package of " + python};
    }
    return {};
}

std::vector<std::string> nvidia_tool_search_description(const std::string& name) {
    std::vector<std::string> out = {"PATH"};
    for (const auto& [dir, label] : system_dirs(name)) out.push_back(label);
    if (out.size() == 1) out.push_back("/usr/local/cuda*/bin, /opt/nvidia/nsight-compute/*, /opt/nvidia/nsight-systems/*/bin (none exist)");
    out.push_back("the interpreter's site-packages (nvidia/*/bin, triton/backends/nvidia/bin)");
    return out;
}

}  // namespace hotkernel
