#include "plot/save.h"

#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "store/results_store.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/strings.h"

namespace hotkernel::plot {
namespace fs = std::filesystem;

format check_plot_arg(const std::string& arg) {
    format f = format::png;
    if (arg != default_plot) {
        const std::string ext = to_lower(fs::path(arg).extension().string());
        if (ext == ".svg") f = format::svg;
        else if (ext != ".png")
            throw usage_error(fmt::format("plot must be a file ending .png or .svg (or true: a PNG in hotkernel's runs "
                                          "folder), got '{}'",
                                          arg.size() > 200 ? arg.substr(0, 197) + "..." : arg));
    }
    if (!available()) canvas probe(f, 1, 1);  // throws: this build has no plots
    return f;
}

std::string plot_path(const std::string& arg, const std::string& tool, const std::string& what) {
    if (arg != default_plot) return arg;
    std::string stamp = utc_now_iso();  // 2026-12-01T15:04:05Z -> 20261201T150405Z
    std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
    std::string part = what.substr(0, 40);
    for (char& c : part)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) c = '_';
    return (cache_dir() / "runs" / fmt::format("{}-{}-{}-{}.png", stamp, tool, part, random_hex(3))).string();
}

json save_plot(const std::string& arg, const std::string& tool, const std::string& what,
               const std::function<picture(format)>& draw) {
    const format f = check_plot_arg(arg);
    const std::string path = plot_path(arg, tool, what);
    std::error_code ec;
    const std::string shown = fs::absolute(path, ec).lexically_normal().string();
    json out{{"path", shown.empty() ? path : shown}, {"format", format_name(f)}};
    try {
        const picture p = draw(f);
        write_file_atomic(path, p.bytes);
        out["bytes"] = p.bytes.size();
    } catch (const tool_error& e) {
        out["error"] = e.what();
    }
    return out;
}

}  // namespace hotkernel::plot
