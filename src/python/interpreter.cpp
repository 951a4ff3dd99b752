#include "python/interpreter.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <regex>
#include <utility>

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

namespace {
std::mutex g_dir_mutex;
std::vector<std::string> g_dir_found;  ///< what the checks found since take_python_dir_findings()

bool is_embedded(const std::string& name) {
    for (const auto& f : detail::embedded_python_files)
        if (f.name == name) return true;
    return false;
}

/// A write_file_atomic temp file of one of ours (".NAME.tmp-XXXXXX"), young enough to be a
/// concurrent hotkernel's write in progress.
bool is_fresh_temp(const fs::directory_entry& e) {
    const std::string n = e.path().filename().string();
    const auto cut = n.find(".tmp-");
    if (n.size() < 2 || n[0] != '.' || cut == std::string::npos || !is_embedded(n.substr(1, cut - 1))) return false;
    std::error_code ec;
    const auto age = fs::file_time_type::clock::now() - fs::last_write_time(e.path(), ec);
    return !ec && age < std::chrono::seconds(60);
}
}  // namespace

fs::path embedded_python_dir() {
    std::string all;
    for (const auto& f : detail::embedded_python_files) {
        all += f.name;
        all += '\0';
        all += f.text;
    }
    const fs::path dir = cache_dir() / ("py-" + sha256_hex(all).substr(0, 16));
    std::vector<std::string> found;
    // Content, not size: a same-size edit must not survive.
    for (const auto& f : detail::embedded_python_files) {
        const fs::path p = dir / f.name;
        std::error_code ec;
        const bool exists = fs::symlink_status(p, ec).type() != fs::file_type::not_found && !ec;
        if (exists && fs::is_regular_file(fs::symlink_status(p, ec))) {
            try {
                if (read_file(p) == f.text) continue;
            } catch (const std::exception&) {
            }
        }
        if (exists) {
            found.push_back(std::string(f.name) + " (other bytes)");
            fs::remove_all(p, ec);
        }
        write_file_atomic(p, std::string(f.text));
    }
    // Nothing but our files: bytecode (__pycache__, *.pyc), .pth and any other file are removed.
    std::vector<fs::path> extra;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (!is_embedded(e.path().filename().string()) && !is_fresh_temp(e)) extra.push_back(e.path());
    for (const auto& p : extra) {
        std::error_code rm;
        fs::remove_all(p, rm);
        found.push_back(p.filename().string() + (rm ? " (could not be removed: " + rm.message() + ")" : ""));
    }
    if (!found.empty()) {
        std::lock_guard lock(g_dir_mutex);
        for (auto& f : found)
            if (std::find(g_dir_found.begin(), g_dir_found.end(), f) == g_dir_found.end()) g_dir_found.push_back(f);
    }
    return dir;
}

std::vector<std::string> take_python_dir_findings() {
    std::lock_guard lock(g_dir_mutex);
    return std::exchange(g_dir_found, {});
}

std::map<std::string, std::string> embedded_python_hashes() {
    std::map<std::string, std::string> out;
    for (const auto& f : detail::embedded_python_files) out[std::string(f.name)] = sha256_hex(f.text);
    return out;
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
