// The scratch folder, the compiler caches and the sandbox summary of a trusted run (sandbox.h).
#include "measure/sandbox.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "measure/measure.h"
#include "report/findings.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"

namespace hotkernel {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view scratch_prefix = "run-";

/// The pid in "run-<pid>-<random>", or 0.
pid_t owner_of(const std::string& name) {
    if (name.rfind(scratch_prefix, 0) != 0) return 0;
    try {
        std::size_t used = 0;
        const long pid = std::stol(name.substr(scratch_prefix.size()), &used);
        return pid > 0 ? static_cast<pid_t>(pid) : 0;
    } catch (const std::exception&) {
        return 0;
    }
}

void sweep_stale(const fs::path& root) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root, ec)) {
        const pid_t pid = owner_of(e.path().filename().string());
        if (pid != 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) remove_tree(e.path());
    }
}

}  // namespace

void remove_tree(const fs::path& dir) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (!ec || !fs::exists(dir, ec)) return;
    // A folder the run made unreadable or unwritable: give the owner its rights back, then again.
    ::chmod(dir.c_str(), 0700);
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
    fs::remove_all(dir, ec);
}

run_scratch run_scratch::make(const fs::path& root_in) {
    const fs::path root = root_in.empty() ? cache_dir() / "scratch" : root_in;
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec)
        throw tool_error(fmt::format("cannot create the runs' scratch folder '{}': {}; make it writable or set "
                                     "XDG_CACHE_HOME to a writable folder",
                                     root.string(), ec.message()));
    sweep_stale(root);
    const fs::path p = root / fmt::format("{}{}-{}", scratch_prefix, ::getpid(), random_hex(6));
    if (::mkdir(p.c_str(), 0700) != 0)
        throw tool_error(fmt::format("cannot create the run's scratch folder '{}': {}", p.string(), std::strerror(errno)));
    return run_scratch(p);
}

run_scratch::~run_scratch() {
    if (!m_path.empty()) remove_tree(m_path);
}

std::map<std::string, fs::path> compiler_caches(const std::string& role, const fs::path& script,
                                                const fs::path& root_in) {
    const fs::path root = root_in.empty() ? cache_dir() / "compile" : root_in;
    std::string bytes;
    try {
        bytes = read_file(script);
    } catch (const tool_error&) {
        // Unreadable: the run fails on it with its own message; the cache is keyed by the path then.
        bytes = fs::absolute(script).string();
    }
    const fs::path dir = root / fmt::format("{}-{}", role, sha256_hex(bytes).substr(0, 16));
    const std::map<std::string, fs::path> out{{"TRITON_CACHE_DIR", dir / "triton"},
                                              {"TORCHINDUCTOR_CACHE_DIR", dir / "inductor"},
                                              {"CUDA_CACHE_PATH", dir / "nv"},
                                              {"TORCH_EXTENSIONS_DIR", dir / "torch_extensions"},
                                              {"PYTORCH_KERNEL_CACHE_PATH", dir / "torch_kernels"}};
    for (const auto& [k, d] : out) {
        std::error_code ec;
        fs::create_directories(d, ec);
        if (ec)
            throw tool_error(fmt::format("cannot create the compiler cache '{}' ({}): {}; make {} writable",
                                         d.string(), k, ec.message(), root.string()));
    }
    return out;
}

void describe_sandbox(const std::vector<const run_record*>& runs, json& result, json& warnings) {
    json distinct = json::array();
    for (const run_record* r : runs) {
        if (r == nullptr || !r->sandbox.is_object()) continue;
        json s = r->sandbox;
        s.erase("threads_before");  // a count of the moment, not the policy: it stays on each run record
        if (std::find(distinct.begin(), distinct.end(), s) == distinct.end()) distinct.push_back(s);
    }
    if (distinct.empty()) return;
    result["sandbox"] = distinct.size() == 1 ? distinct.front() : json{{"runs_differ", true}, {"records", distinct}};
    for (const auto& s : distinct)
        if (s.value("fs", std::string("none")) != "read-only outside scratch") {
            std::string what = s.contains("error") && s["error"].is_string() ? s["error"].get<std::string>()
                               : s.contains("missing") && s["missing"].is_string()
                                   ? "no " + s["missing"].get<std::string>()
                                   : std::string("nothing applied");
            warnings.push_back(findings::measured_unsandboxed(what));
            break;
        }
}

}  // namespace hotkernel
