// Writing and reading results/, and regenerating LEADERBOARD.md under a lock.
#include "store/results_store.h"
#include "util/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/schema_version.h"

namespace hotkernel {
namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t k_max_result_bytes = 64u << 20;  // a result is a few hundred KB at most
constexpr double k_lock_timeout_s = 120;

bool hidden(const fs::path& rel) {
    for (const auto& part : rel)
        if (!part.empty() && part.string()[0] == '.') return true;
    return false;
}

}  // namespace

std::string safe_component(std::string_view s) {
    std::string out;
    for (char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                        c == '_' || c == '-';
        out += ok ? c : '_';
    }
    while (!out.empty() && out[0] == '.') out.erase(0, 1);
    if (out.size() > 100) out.resize(100);
    return out.empty() ? "unnamed" : out;
}

std::string result_target(const json& r) {
    if (r.contains("target") && r["target"].is_string() && !r["target"].get<std::string>().empty())
        return safe_component(r["target"].get<std::string>());
    if (r.contains("candidate_script") && r["candidate_script"].is_string()) {
        std::string stem = fs::path(r["candidate_script"].get<std::string>()).stem().string();
        if (stem.size() > 10 && stem.ends_with("_candidate")) stem.resize(stem.size() - 10);
        return safe_component(stem);
    }
    return "unnamed";
}

std::string check_verify_result(const json& r) {
    if (!r.is_object()) return "it is not a JSON object";
    if (std::string why = newer_schema(r); !why.empty()) return why;
    if (!r.contains("verdict") || !r["verdict"].is_string()) return "it has no \"verdict\"";
    const std::string v = r["verdict"].get<std::string>();
    if (v != "faster" && v != "slower" && v != "mixed" && v != "inconclusive" && v != "incorrect" && v != "invalid")
        return "its verdict '" + v + "' is not one of faster, slower, mixed, inconclusive, incorrect, invalid";
    if (!r.contains("baseline") || !r["baseline"].is_object() || !r.contains("candidate") || !r["candidate"].is_object())
        return "it has no \"baseline\"/\"candidate\" statistics";
    if (v == "faster" && !(r.contains("speedup") && r["speedup"].is_number())) return "verdict faster without a speedup";
    return "";
}

std::string utc_now_iso() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void scan_results(const fs::path& dir, std::vector<result_entry>& entries, std::vector<skipped_file>& skipped) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return;
    std::vector<fs::path> files;
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        const fs::path rel = fs::relative(it->path(), dir, ec);
        if (hidden(rel)) {
            if (it->is_directory(ec)) it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file(ec)) files.push_back(rel);
        else if (!it->is_directory(ec)) skipped.push_back({rel.generic_string(), "not a regular file"});
    }
    std::sort(files.begin(), files.end());
    for (const auto& rel : files) {
        const std::string name = rel.generic_string();
        if (rel.extension() != ".json") {
            skipped.push_back({name, "not a .json file"});
            continue;
        }
        const auto size = fs::file_size(dir / rel, ec);
        if (ec) {
            skipped.push_back({name, "cannot read: " + ec.message()});
            continue;
        }
        if (size > k_max_result_bytes) {
            skipped.push_back({name, fmt::format("too large ({} bytes) to be a result", size)});
            continue;
        }
        std::string text;
        try {
            text = read_file(dir / rel);
        } catch (const tool_error& e) {
            skipped.push_back({name, std::string("cannot read: ") + e.what()});
            continue;
        }
        json doc = json::parse(text, nullptr, false);
        if (doc.is_discarded()) {
            skipped.push_back({name, "not valid JSON"});
            continue;
        }
        if (std::string why = check_result_doc(doc); !why.empty()) {
            skipped.push_back({name, why});
            continue;
        }
        entries.push_back({name, std::move(doc)});
    }
}

record_outcome record_result(const json& verify_result, const std::string& note, const std::string& who,
                             const fs::path& results_dir, const fs::path& leaderboard, const std::string& now_utc) {
    record_outcome out;
    out.target = result_target(verify_result);
    // 2026-11-30T03:34:10Z -> 20261130T033410Z: sortable and safe in a file name.
    std::string stamp;
    for (char c : now_utc)
        if (c != '-' && c != ':') stamp += c;
    const std::string id = random_hex(4);
    out.rel_path = out.target + "/" + stamp + "-" + id + ".json";
    out.file = results_dir / out.target / (stamp + "-" + id + ".json");
    out.leaderboard = leaderboard;

    json doc{{"format", 1}, {"target", out.target}, {"recorded_utc", now_utc}, {"note", note},
             {"who", who},  {"result", verify_result}};
    stamp_schema(doc);
    std::error_code ec;
    fs::create_directories(results_dir / out.target, ec);
    if (ec)
        throw tool_error(fmt::format("cannot create '{}': {}; make the results folder writable or pass another "
                                     "results_dir; nothing was written",
                                     (results_dir / out.target).string(), ec.message()));
    write_file_atomic(out.file, dump_pretty(doc) + "\n");

    try {
        file_lock lock(results_dir / ".lock", {.timeout_s = k_lock_timeout_s, .holder_what = "another hotkernel record"});
        std::vector<result_entry> entries;
        scan_results(results_dir, entries, out.skipped);
        std::string label = results_dir.generic_string();
        if (label.empty() || label.back() != '/') label += '/';
        const std::string text = render_leaderboard(entries, out.skipped, label);
        write_file_atomic(leaderboard, text);
        std::set<std::string> sections;
        for (const auto& e : entries) sections.insert(e.doc["target"].get<std::string>() + "\n" + gpu_label(e.doc["result"]));
        // This result's row as rendered (the rows end with the cited file).
        const std::string cite = "`" + out.rel_path + "` |";
        if (auto pos = text.find(cite); pos != std::string::npos) {
            auto start = text.rfind('\n', pos);
            start = start == std::string::npos ? 0 : start + 1;
            out.row = text.substr(start, pos + cite.size() - start);
        }
        out.rows = entries.size();
        out.sections = sections.size();
    } catch (const tool_error& e) {
        throw tool_error(fmt::format("the result was written to '{}', but {} could not be regenerated: {}; fix that and "
                                     "rerun record (the leaderboard is rebuilt from every file under results/)",
                                     out.file.string(), leaderboard.string(), e.what()));
    }
    return out;
}

}  // namespace hotkernel
