#include "util/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "util/errors.h"

namespace hotkernel {
namespace fs = std::filesystem;

void write_file_atomic(const fs::path& path, const std::string& content) {
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw tool_error(fmt::format("cannot create folder '{}': {}; check that it is writable", dir.string(), ec.message()));
    std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0)
        throw tool_error(fmt::format("cannot write to '{}': {}; check that the folder is writable and the disk not full",
                                     dir.string(), std::strerror(errno)));
    const char* p = content.data();
    std::size_t left = content.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            ::unlink(tmpl.c_str());
            throw tool_error(fmt::format("cannot write '{}': {}; nothing was changed (check free disk space)", path.string(),
                                         std::strerror(err)));
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        throw tool_error(fmt::format("cannot write '{}': {}; nothing was changed", path.string(), std::strerror(err)));
    }
    ::chmod(tmpl.c_str(), 0644);
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        throw tool_error(fmt::format("cannot replace '{}': {}", path.string(), std::strerror(err)));
    }
}

std::string read_file(const fs::path& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw tool_error(fmt::format("file '{}' does not exist", path.string()));
    if (fs::is_directory(path, ec)) throw tool_error(fmt::format("'{}' is a folder, expected a file", path.string()));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw tool_error(fmt::format("cannot read '{}': {}", path.string(), std::strerror(errno)));
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

fs::path make_temp_dir(const std::string& prefix) {
    const char* t = std::getenv("TMPDIR");
    fs::path base = (t && *t) ? fs::path(t) : fs::path("/tmp");
    std::string tmpl = (base / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr)
        throw tool_error(fmt::format("cannot create a temporary folder in '{}': {}", base.string(), std::strerror(errno)));
    return fs::path(tmpl);
}

fs::path cache_dir() {
    fs::path base;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) base = x;
    else if (const char* h = std::getenv("HOME"); h && *h) base = fs::path(h) / ".cache";
    else base = "/tmp";
    fs::path dir = base / "hotkernel";
    std::error_code ec;
    fs::create_directories(dir, ec);
    return dir;
}

}  // namespace hotkernel
