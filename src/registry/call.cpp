// call_tool: validation, the handler, the interface's words, and for tools with a lean
// projection the full record on disk and the lean result.
#include <cmath>
#include <filesystem>
#include <fmt/format.h>

#include "registry/lean.h"
#include "registry/tool.h"
#include "report/findings.h"
#include "store/results_store.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/schema_version.h"
#include "util/strings.h"

namespace hotkernel {
namespace {
namespace fs = std::filesystem;

constexpr const char* detail_name = "detail";

/// A name part safe in a file name: letters, digits, '-', '_', '.'; at most 40 characters.
std::string file_part(std::string s) {
    for (char& c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
    if (s.size() > 40) s.resize(40);
    return s.empty() || s[0] == '.' ? "_" + s : s;
}

bool write_record(const fs::path& dir, const std::string& name, const std::string& text, std::string& path,
                  std::string& why) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        why = fmt::format("cannot create {}: {}", dir.string(), ec.message());
        return false;
    }
    try {
        // The runs folder is hotkernel's own: keep it out of the user's commits.
        if (dir.filename() == "runs" && dir.parent_path().filename() == ".hotkernel" &&
            !fs::exists(dir.parent_path() / ".gitignore", ec))
            write_file_atomic(dir.parent_path() / ".gitignore", "# hotkernel's full records of bench and verify\n*\n");
        write_file_atomic(dir / name, text);
    } catch (const tool_error& e) {
        why = e.what();
        return false;
    }
    path = (dir / name).string();
    return true;
}

}  // namespace

json pick(const json& obj, std::initializer_list<std::string_view> keys) {
    json out = json::object();
    if (!obj.is_object()) return out;
    for (auto k : keys)
        if (auto it = obj.find(std::string(k)); it != obj.end()) out[std::string(k)] = *it;
    return out;
}

json round_numbers(json v, int digits) {
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d)) return std::stod(fmt::format("{:.{}g}", d, digits));
    } else if (v.is_structured()) {
        for (auto& e : v) e = round_numbers(std::move(e), digits);
    }
    return v;
}

param_spec detail_param() {
    param_spec p = make_param(detail_name, param_type::string, "full: the whole record inline");
    p.details = "lean: what the caller acts on, and full_record, the path of the file holding the whole record. That "
                "file is written whatever detail says; record() takes either result, or the file.";
    p.default_value = "lean";
    p.cli_default = "full";
    p.choices = {"lean", "full"};
    return p;
}

std::string keep_full_record(const tool_spec& tool, const json& valid_args, const json& full, std::string& why) {
    std::error_code ec;
    fs::path beside;
    if (!tool.record_beside.empty() && valid_args.contains(tool.record_beside) &&
        valid_args[tool.record_beside].is_string())
        beside = fs::absolute(valid_args[tool.record_beside].get<std::string>(), ec).lexically_normal().parent_path();
    std::string stamp = utc_now_iso();  // 2026-12-01T15:04:05Z -> 20261201T150405Z
    std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
    const json target = full.value("target", json());
    std::string what = target.is_string() ? target.get<std::string>() : std::string();
    if (what.empty() && !beside.empty()) what = fs::path(valid_args[tool.record_beside].get<std::string>()).stem().string();
    const std::string name = fmt::format("{}-{}-{}-{}.json", stamp, tool.name, file_part(what), random_hex(3));

    json record = full;
    std::string path, first_why;
    std::vector<fs::path> dirs;
    if (!beside.empty()) dirs.push_back(beside / ".hotkernel" / "runs");
    dirs.push_back(cache_dir() / "runs");
    for (const auto& dir : dirs) {
        record["full_record"] = fs::absolute(dir / name, ec).lexically_normal().string();
        std::string w;
        if (write_record(dir, name, dump_pretty(record) + "\n", path, w))
            return fs::absolute(path, ec).lexically_normal().string();
        if (first_why.empty()) first_why = w;
    }
    why = first_why;
    return "";
}

json call_tool(const tool_spec& tool, const json& args, tool_context& ctx) {
    try {
        const json valid = validate_args(tool, args, ctx.words);
        json result = tool.handler(valid, ctx);
        normalize_findings(result);  // one shape for every result, whatever a handler still pushes
        if (result.is_object() && ctx.result_extra.is_object()) result.update(ctx.result_extra);
        render_words(result, ctx.words);
        stamp_schema(result);
        if (!tool.lean || !result.is_object()) return result;
        std::string why;
        const std::string path = keep_full_record(tool, valid, result, why);
        if (path.empty()) {
            // Nothing may be lost: without a file the caller gets the whole record.
            result["full_record"] = nullptr;
            result["warnings"].push_back(findings::full_record_unwritten(why));
            return result;
        }
        result["full_record"] = path;
        if (valid.value(detail_name, "lean") == "full") return result;
        json lean = tool.lean(result);
        stamp_schema(lean);
        return lean;
    } catch (const usage_error& e) {
        throw usage_error(render_words(e.what(), ctx.words));
    } catch (const tool_error& e) {
        throw tool_error(render_words(e.what(), ctx.words));
    }
}

}  // namespace hotkernel
