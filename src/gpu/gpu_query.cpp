// Runs nvidia-smi through the runner and turns its failures into fixable tool_errors.
#include "gpu/gpu_query.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include "gpu/roofline.h"
#include "gpu/spec_table.h"
#include "stats/summary.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/strings.h"
#include "util/words.h"

namespace hotkernel {

namespace {

const char* const driver_fix =
    "check that the NVIDIA driver is installed and loaded (`nvidia-smi` alone should list the GPUs; "
    "`lsmod | grep nvidia`; after a driver upgrade reboot or reload the kernel module), and, in a "
    "container, that it was started with GPU access (e.g. docker --gpus all)";

// The first few non-empty lines nvidia-smi printed (it writes its errors to stdout).
std::string first_lines(const process_result& r, std::size_t max_lines = 3) {
    std::string out;
    std::size_t n = 0;
    for (const std::string* s : {&r.stdout_text, &r.stderr_text})
        for (const auto& line : split_lines(*s)) {
            std::string t = trim(line);
            if (t.empty() || n >= max_lines) continue;
            if (!out.empty()) out += " ";
            out += t;
            ++n;
        }
    return out;
}

// Runs nvidia-smi with `args`; throws for everything but a non-zero exit.
process_result run_nvidia_smi(process_runner& runner, const cancel_token& cancel,
                              const std::vector<std::string>& args) {
    process_spec spec;
    spec.argv = {"nvidia-smi"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout_s = nvidia_smi_timeout_s;
    spec.max_capture_bytes = 1u << 20;
    spec.kill_grace_s = 1.0;
    process_result r = runner.run(spec, cancel);
    if (r.cancelled) throw tool_error("cancelled while waiting for nvidia-smi");
    if (r.spawn_failed && find_executable("nvidia-smi").empty())
        throw tool_error(
            "no NVIDIA driver found: nvidia-smi is not on PATH; install the NVIDIA driver (it ships "
            "nvidia-smi) or add the folder that holds nvidia-smi to PATH. roofline still works without "
            "a GPU when you name one: " + words::param("gpu", "NVIDIA H200") + " or a key such as h100_sxm5");
    if (r.spawn_failed)
        throw tool_error(fmt::format("could not start nvidia-smi: {}; check that the nvidia-smi on PATH ({}) is "
                                     "an executable, and reinstall the NVIDIA driver if it is not",
                                     r.spawn_error, find_executable("nvidia-smi").string()));
    if (r.timed_out)
        throw tool_error(fmt::format("nvidia-smi did not answer within {:g} s: the NVIDIA driver looks hung; "
                                     "check `dmesg` for Xid errors and {}",
                                     nvidia_smi_timeout_s, driver_fix));
    if (r.term_signal != 0)
        throw tool_error(fmt::format("nvidia-smi {}: {}; {}", r.describe(), first_lines(r), driver_fix));
    return r;
}

[[noreturn]] void throw_failed(const process_result& r) {
    std::string msg = first_lines(r);
    if (contains_ci(msg, "No devices were found"))
        throw tool_error(fmt::format("nvidia-smi found no NVIDIA GPU ({}: {}); {}", r.describe(), msg, driver_fix));
    throw tool_error(fmt::format("nvidia-smi failed ({}): {}; {}", r.describe(),
                                 msg.empty() ? "it printed nothing" : msg, driver_fix));
}

// Runs a --query-gpu, dropping fields in `optional` that the driver rejects. Returns the
// output and the fields actually asked for.
std::pair<std::string, std::vector<std::string>> run_query(process_runner& runner, const cancel_token& cancel,
                                                           std::vector<std::string> fields,
                                                           const std::vector<std::string>& optional,
                                                           const std::vector<std::string>& extra_args = {}) {
    for (std::size_t attempt = 0; attempt <= optional.size(); ++attempt) {
        std::vector<std::string> args = extra_args;
        std::string joined;
        for (const auto& f : fields) joined += (joined.empty() ? "" : ",") + f;
        args.push_back("--query-gpu=" + joined);
        args.emplace_back("--format=csv,noheader,nounits");  // push_back trips g++ 12 -Warray-bounds (PR105329)
        process_result r = run_nvidia_smi(runner, cancel, args);
        if (r.exit_code == 0) return {r.stdout_text, fields};
        auto bad = invalid_query_field(r.stdout_text + "\n" + r.stderr_text);
        if (bad && std::find(optional.begin(), optional.end(), *bad) != optional.end()) {
            fields.erase(std::remove(fields.begin(), fields.end(), *bad), fields.end());
            continue;
        }
        if (bad)
            throw tool_error(fmt::format("this NVIDIA driver does not know the nvidia-smi field '{}' ({}); "
                                         "update the driver (R535 or newer is known to work)",
                                         *bad, first_lines(r)));
        throw_failed(r);
    }
    throw tool_error("nvidia-smi rejected every optional field; update the NVIDIA driver");
}

}  // namespace

std::vector<gpu_record> query_gpus(process_runner& runner, const cancel_token& cancel) {
    auto [text, fields] = run_query(runner, cancel, gpu_query_fields, {"compute_cap", "mig.mode.current"});
    std::vector<gpu_record> gpus;
    try {
        gpus = parse_gpu_query(text, fields);
    } catch (const std::runtime_error& e) {
        throw tool_error(fmt::format("could not read nvidia-smi's GPU list: {}; run the query by hand "
                                     "(nvidia-smi --query-gpu=index,name --format=csv) and report the output",
                                     e.what()));
    }
    for (auto& g : gpus) {
        if (g.compute_capability) continue;
        if (const gpu_spec* s = spec_table::builtin().find(g.name); s && s->compute_capability) {
            g.compute_capability = s->compute_capability;
            g.compute_capability_source = "spec table";
        }
    }
    return gpus;
}

json query_clock_state(process_runner& runner, const cancel_token& cancel, int index) {
    // Ask with the R535+ name; the pre-R535 alias is the fallback (580 knows both).
    std::vector<std::string> fields = clock_query_fields;
    const std::vector<std::string> selector = {"-i", std::to_string(index)};
    std::string text;
    std::vector<std::string> used;
    try {
        std::tie(text, used) = run_query(runner, cancel, fields, {}, selector);
    } catch (const tool_error& e) {
        if (std::string(e.what()).find("clocks_event_reasons.active") == std::string::npos) throw;
        std::replace(fields.begin(), fields.end(), std::string("clocks_event_reasons.active"),
                     std::string("clocks_throttle_reasons.active"));
        std::tie(text, used) = run_query(runner, cancel, fields, {}, selector);
    }
    std::vector<clock_state> states;
    try {
        states = parse_clock_query(text, used);
    } catch (const std::runtime_error& e) {
        throw tool_error(fmt::format("could not read nvidia-smi's clock state of GPU {}: {}", index, e.what()));
    }
    for (const auto& s : states) {
        if (s.index && *s.index != index) continue;
        json j = clock_state_json(s);
        j["reasons_field"] = used[3];
        return j;
    }
    throw tool_error(fmt::format("nvidia-smi reported no GPU with index {}; run `hotkernel gpu-info` to list them",
                                 index));
}

std::filesystem::path calibration_path(const std::string& uuid) {
    return cache_dir() / "calibration" / (uuid + ".json");
}

bool plain_gpu_uuid(const std::string& uuid) {
    return !uuid.empty() && std::all_of(uuid.begin(), uuid.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
    });
}

std::optional<json> read_calibration(const std::string& uuid) {
    if (!plain_gpu_uuid(uuid)) return std::nullopt;
    const auto path = calibration_path(uuid);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    json j;
    try {
        j = json::parse(read_file(path));
    } catch (const json::exception& e) {
        throw tool_error(fmt::format("calibration file {} is not valid JSON ({}); delete it or re-create it "
                                     "with `hotkernel calibrate`",
                                     path.string(), e.what()));
    }
    if (!j.is_object() || !j.contains("mem_gbs") || !j["mem_gbs"].is_number() || j["mem_gbs"].get<double>() <= 0)
        throw tool_error(fmt::format("calibration file {} has no positive number \"mem_gbs\"; delete it or "
                                     "re-create it with `hotkernel calibrate`",
                                     path.string()));
    return j;
}

double calibrated_gbs_at(const json& calibration, double bytes) {
    const double ceiling = calibration.at("mem_gbs").get<double>();
    std::vector<std::pair<double, double>> points;
    const json curve = calibration.value("copy_curve", json());
    if (curve.is_array())
        for (const auto& p : curve)
            if (p.is_object() && p.value("bytes", json()).is_number() && p.value("gbs", json()).is_number())
                points.emplace_back(p["bytes"].get<double>(), p["gbs"].get<double>());
    return bandwidth_at(std::move(points), bytes, ceiling);
}

std::optional<calibrated_spread> process_spread_in(const json& calibration) {
    if (!calibration.is_object() || !calibration.value("process_spread_pct", json()).is_number()) return std::nullopt;
    calibrated_spread s;
    s.cv_pct = calibration["process_spread_pct"].get<double>();
    s.processes = 6;  // calibrate has always timed 6; older files do not say
    const json runs =
        calibration.value("details", json::object()).value("process_spread", json::object()).value("runs", json());
    if (runs.is_number_integer() && runs.get<long long>() >= 2) s.processes = runs.get<std::size_t>();
    s.bound_pct = spread_upper_bound(s.cv_pct, s.processes);
    if (!(s.cv_pct >= 0) || !std::isfinite(s.bound_pct)) return std::nullopt;
    return s;
}

// Which nvidia-smi index the runs use: the first entry of CUDA_VISIBLE_DEVICES (an index or
// a GPU-uuid), else 0.
std::optional<gpu_record> visible_gpu(const std::vector<gpu_record>& gpus) {
    if (gpus.empty()) return std::nullopt;
    const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
    if (env == nullptr) return gpus.front();
    const std::string first = trim(split(env, ',').empty() ? std::string() : split(env, ',').front());
    if (first.empty()) return std::nullopt;  // CUDA_VISIBLE_DEVICES="" hides every GPU
    for (const auto& g : gpus) {
        if (g.uuid && starts_with_ci(*g.uuid, first) && first.size() >= 5) return g;
        if (g.index && std::to_string(*g.index) == first) return g;
    }
    return std::nullopt;
}

json gpu_record_json(const gpu_record& g) {
    auto opt = [](const auto& o) -> json { return o ? json(*o) : json(nullptr); };
    return json{{"index", opt(g.index)},
                {"name", g.name},
                {"uuid", opt(g.uuid)},
                {"driver", opt(g.driver)},
                {"power_limit_w", opt(g.power_limit_w)},
                {"memory_mib", opt(g.memory_mib)},
                {"compute_capability", opt(g.compute_capability)},
                {"max_sm_clock_mhz", opt(g.max_sm_clock_mhz)},
                {"mig_mode", opt(g.mig_mode)}};
}

}  // namespace hotkernel
