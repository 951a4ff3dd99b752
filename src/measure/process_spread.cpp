#include "measure/process_spread.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gpu/gpu_query.h"
#include "stats/summary.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"
#include "store/results_store.h"

namespace hotkernel {
namespace {

std::optional<double> finite_number(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
    const double v = j[key].get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

}  // namespace

std::optional<json> spread_record_of_bench(const json& bench_result) {
    const auto n = finite_number(bench_result, "n");
    if (!n || *n < 3 || bench_result.value("ok", json()) != json(true)) return std::nullopt;
    json per = json::object();
    double widest = -1;
    if (bench_result.contains("workloads") && bench_result["workloads"].is_array()) {
        for (const auto& w : bench_result["workloads"]) {
            const auto cv = finite_number(w, "cv_pct");
            if (!cv || !w.value("name", json()).is_string()) return std::nullopt;
            per[w["name"].get<std::string>()] = *cv;
            widest = std::max(widest, *cv);
        }
    } else if (const auto cv = finite_number(bench_result, "cv_pct")) {
        widest = *cv;
    }
    if (!(widest > 0)) return std::nullopt;  // no spread at all is a reading nothing could give
    json rec{{"cv_pct", widest}, {"processes", static_cast<std::size_t>(*n)}, {"measured_at", utc_now_iso()},
             {"method", "the cv of a bench's runs (each a process) of this baseline on this card; the largest over "
                        "its workloads"}};
    if (!per.empty()) rec["workloads"] = per;
    for (const char* k : {"script", "target"})
        if (bench_result.contains(k) && bench_result[k].is_string()) rec[k] = bench_result[k];
    return rec;
}

std::optional<process_spread> spread_in_record(const json& record, const std::string& where) {
    const auto cv = finite_number(record, "cv_pct");
    const auto n = finite_number(record, "processes");
    if (!cv || !(*cv > 0) || !n || *n < 2 || *n > 1e6) return std::nullopt;
    process_spread p;
    p.benched = true;
    p.processes = static_cast<std::size_t>(*n);
    p.measured = *cv / 100.0;
    p.bound = spread_upper_bound(p.measured, p.processes);
    if (!std::isfinite(p.bound)) return std::nullopt;
    p.source = fmt::format("the 95% upper bound of the {:.3g}% bench measured over {} processes of this baseline, {}",
                           *cv, p.processes, where);
    return p;
}

std::string baseline_key(const std::filesystem::path& script, const std::vector<std::string>& args) {
    std::string bytes = read_file(script);
    for (const auto& a : args) bytes += '\0' + a;  // a NUL cannot be in an argument
    return sha256_hex(bytes);
}

std::filesystem::path target_spread_path(const std::string& uuid, const std::string& script_sha256) {
    if (!plain_gpu_uuid(uuid) || script_sha256.size() < 16) return {};
    return cache_dir() / "spread" / uuid / (script_sha256.substr(0, 16) + ".json");
}

std::filesystem::path save_target_spread(const std::string& uuid, const std::string& script_sha256,
                                         const json& record) {
    const auto path = target_spread_path(uuid, script_sha256);
    if (path.empty()) return {};
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    json rec = record;
    rec["script_sha256"] = script_sha256;
    rec["uuid"] = uuid;
    write_file_atomic(path, dump_pretty(rec) + "\n");
    return path;
}

std::optional<process_spread> read_calibrated_spread(const std::string& uuid) {
    try {
        const auto cal = read_calibration(uuid);
        const auto spread = cal ? process_spread_in(*cal) : std::nullopt;
        if (!spread) return std::nullopt;
        return process_spread{
            .measured = spread->cv_pct / 100.0, .bound = spread->bound_pct / 100.0, .processes = spread->processes,
            .source = fmt::format("the 95% upper bound of the {:.3g}% calibrate measured over {} processes, {}",
                                  spread->cv_pct, spread->processes, calibration_path(uuid).string())};
    } catch (const tool_error&) {  // a damaged calibration: verify's other figures say so; no floor from it
        return std::nullopt;
    }
}

std::optional<process_spread> read_target_spread(const std::string& uuid, const std::string& script_sha256) {
    const auto path = target_spread_path(uuid, script_sha256);
    std::error_code ec;
    if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    try {
        const json rec = json::parse(read_file(path));
        // The file names its script's hash: one copied under another name is not this baseline's.
        if (rec.value("script_sha256", json()) != json(script_sha256)) return std::nullopt;
        return spread_in_record(rec, path.string());
    } catch (const std::exception&) {  // unreadable or not JSON: as if bench had not measured it
        return std::nullopt;
    }
}

process_spread wider_spread(const std::optional<process_spread>& a, const std::optional<process_spread>& b) {
    process_spread w = a && (!b || a->bound >= b->bound) ? *a : b ? *b : process_spread{};
    w.benched = (a && a->benched) || (b && b->benched);  // a bench was there, even where the copy's is wider
    return w;
}

}  // namespace hotkernel
