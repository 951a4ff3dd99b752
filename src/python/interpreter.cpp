#include "python/interpreter.h"

#include <regex>

#include <fmt/format.h>

#include "python/embedded_sources.h"
#include "registry/tool.h"
#include "util/files.h"
#include "util/hash.h"

namespace hotkernel {
namespace fs = std::filesystem;

std::string resolve_python(const tool_context& ctx) {
    std::string name = ctx.python;
    std::string source = "--python";
    if (name.empty()) {
        if (const char* e = std::getenv("HOTKERNEL_PYTHON"); e && *e) {
            name = e;
            source = "HOTKERNEL_PYTHON";
        } else {
            name = "python3";
            source = "PATH";
        }
    }
    auto exe = find_executable(name);
    if (exe.empty())
        throw tool_error(fmt::format("Python interpreter '{}' (from {}) was not found or is not executable; pass --python "
                                     "/path/to/python (or set HOTKERNEL_PYTHON) to the interpreter that has torch",
                                     name, source));
    return exe.string();
}

std::string_view embedded_python(std::string_view name) {
    for (const auto& f : detail::embedded_python_files)
        if (f.name == name) return f.text;
    throw std::out_of_range(fmt::format("no embedded python file '{}'", name));
}

std::vector<std::string> embedded_python_names() {
    std::vector<std::string> out;
    for (const auto& f : detail::embedded_python_files) out.emplace_back(f.name);
    return out;
}

fs::path embedded_python_dir() {
    std::string all;
    for (const auto& f : detail::embedded_python_files) {
        all += f.name;
        all += '\0';
        all += f.text;
    }
    const fs::path dir = cache_dir() / ("py-" + sha256_hex(all).substr(0, 16));
    for (const auto& f : detail::embedded_python_files) {
        const fs::path p = dir / f.name;
        std::error_code ec;
        if (fs::exists(p, ec) && fs::file_size(p, ec) == f.text.size()) continue;
        write_file_atomic(p, std::string(f.text));
    }
    return dir;
}

int contract_protocol() {
    static const int protocol = [] {
        std::string text(embedded_python("hotkernel_contract.py"));
        std::smatch m;
        if (std::regex_search(text, m, std::regex(R"(\nPROTOCOL\s*=\s*(\d+))"))) return std::stoi(m[1]);
        return 0;
    }();
    return protocol;
}

std::string contract_hash() { return sha256_hex(embedded_python("hotkernel_contract.py")); }

}  // namespace hotkernel
