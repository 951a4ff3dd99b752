// gpu_info: every GPU in this machine from nvidia-smi, with its spec-table entry.
#include <fmt/format.h>

#include "gpu/gpu_query.h"
#include "gpu/spec_table.h"
#include "registry/tool.h"
#include "report/findings.h"
#include "render/render.h"
#include "util/strings.h"

namespace hotkernel {

namespace {

json gpu_json(const gpu_record& g, std::vector<finding>& warnings) {
    json j = gpu_record_json(g);
    if (g.name.empty()) j["name"] = nullptr;
    j["compute_capability_source"] = g.compute_capability_source.empty() ? json(nullptr) : json(g.compute_capability_source);
    const std::string label = fmt::format("GPU {}", g.index ? std::to_string(*g.index) : std::string("?"));
    const gpu_spec* spec = g.name.empty() ? nullptr : spec_table::builtin().find(g.name);
    if (spec) {
        j["spec"] = spec->to_json();
    } else {
        j["spec"] = nullptr;
        std::string reason;
        if (g.name.empty()) {
            reason = "nvidia-smi gave no name for this GPU";
        } else {
            auto close = spec_table::builtin().suggestions(g.name);
            reason = fmt::format("'{}' is not in the spec table (data/gpu-specs.csv)", g.name);
            if (!close.empty()) {
                std::string list;
                for (const auto& k : close) list += (list.empty() ? "" : ", ") + k;
                reason += "; close entries: " + list;
            }
        }
        j["spec_reason"] = reason;
        warnings.push_back(findings::gpu_not_in_spec_table(label, reason));
    }
    if (g.compute_capability_source == "spec table")
        warnings.push_back(findings::compute_cap_from_spec_table(label, *g.compute_capability));
    else if (!g.compute_capability)
        warnings.push_back(findings::compute_cap_unknown(label));
    if (g.mig_mode && to_lower(*g.mig_mode) == "enabled")
        warnings.push_back(findings::mig_enabled(label));
    return j;
}

struct gpu_info_args {};

json run(const gpu_info_args&, tool_context& ctx) {
    auto gpus = query_gpus(*ctx.runner, ctx.cancel);
    if (gpus.empty())
        throw tool_error("nvidia-smi listed no GPU; check that the NVIDIA driver sees the card "
                         "(`nvidia-smi -L`) and, in a container, that it was started with GPU access");
    json result;
    std::vector<finding> warnings;
    json list = json::array();
    for (const auto& g : gpus) list.push_back(gpu_json(g, warnings));
    result["count"] = list.size();
    result["gpus"] = list;
    result["warnings"] = warnings;
    return result;
}

std::string num(const json& v, const char* unit) {
    return v.is_number() ? format_number(v.get<double>()) + unit : std::string("n/a");
}

// One block per GPU: the nvidia-smi facts on one line, the datasheet row on the next.
std::string render(const json& r) {
    std::string out;
    for (const auto& g : r["gpus"]) {
        out += fmt::format("GPU {}  {}  ({})\n", g["index"].is_number() ? g["index"].dump() : "?",
                           g["name"].is_string() ? g["name"].get<std::string>() : "unknown",
                           g["uuid"].is_string() ? g["uuid"].get<std::string>() : "no uuid");
        out += fmt::format("  driver {} | {} | power limit {} | cc {}{} | max SM clock {}{}\n",
                           g["driver"].is_string() ? g["driver"].get<std::string>() : "n/a", num(g["memory_mib"], " MiB"),
                           num(g["power_limit_w"], " W"),
                           g["compute_capability"].is_string() ? g["compute_capability"].get<std::string>() : "n/a",
                           g["compute_capability_source"] == "spec table" ? " (from the spec table)" : "",
                           num(g["max_sm_clock_mhz"], " MHz"),
                           g["mig_mode"].is_string() ? " | MIG " + g["mig_mode"].get<std::string>() : "");
        if (g["spec"].is_object()) {
            const json& s = g["spec"];
            std::string peaks;
            for (const auto& [dtype, v] : s["peak_tflops"].items())
                if (v.is_number()) peaks += fmt::format("{}{} {}", peaks.empty() ? "" : ", ", dtype, format_number(v.get<double>()));
            out += fmt::format("  spec {}: dense peak TFLOPS (int8 TOPS) {} | {} | L2 {} | {} SMs\n",
                               s["key"].get<std::string>(), peaks, num(s["mem_gbs"], " GB/s"), num(s["l2_mib"], " MiB"),
                               s["sm_count"].is_number() ? s["sm_count"].dump() : "n/a");
        } else {
            out += "  spec: none (" + g.value("spec_reason", std::string("not in the table")) + ")\n";
        }
    }
    for (const auto& w : r["warnings"]) out += "warning: " + finding_message(w) + "\n";
    return out;
}

json gpu_info_schema() {
    const auto nullable = [](const char* type) { return json{{"type", json::array({type, "null"})}}; };
    json spec = gpu_spec_schema();
    spec["type"] = json::array({"object", "null"});
    json gpu = {
        {"type", "object"},
        {"properties",
         {{"index", nullable("integer")},
          {"name", nullable("string")},
          {"uuid", nullable("string")},
          {"driver", nullable("string")},
          {"memory_mib", nullable("number")},
          {"power_limit_w", nullable("number")},
          {"compute_capability", nullable("string")},
          {"compute_capability_source",
           {{"type", json::array({"string", "null"})},
            {"description", "'nvidia-smi', or 'spec table' on drivers without compute_cap"}}},
          {"max_sm_clock_mhz", nullable("number")},
          {"mig_mode", nullable("string")},
          {"spec", spec},
          {"spec_reason", {{"type", "string"}, {"description", "why spec is null"}}}}},
        {"required", json::array({"index", "name", "uuid", "driver", "memory_mib", "power_limit_w",
                                  "compute_capability", "max_sm_clock_mhz", "spec"})},
    };
    return json{
        {"type", "object"},
        {"properties",
         {{"count", {{"type", "integer"}}},
          {"gpus", {{"type", "array"}, {"items", gpu}}},
          {"warnings", findings_schema(finding_kind::warning)}}},
        {"required", json::array({"count", "gpus", "warnings"})},
    };
}

}  // namespace

tool_spec gpu_info_tool() {
    tool_spec t;
    t.name = "gpu_info";
    t.title = "GPU info";
    t.summary = "Every GPU from nvidia-smi, with its datasheet row";
    t.description =
        "List this machine's GPUs: returns each one's name, driver, memory, clocks and datasheet row. Call it "
        "first.";
    t.details =
        "Identify the GPU(s) in this machine via nvidia-smi: index, name, uuid, driver, memory_mib, "
        "power_limit_w, compute_capability, max_sm_clock_mhz for every GPU, plus `spec`, the matching "
        "datasheet row used by roofline (dense peak TFLOPS per dtype, memory bandwidth GB/s, L2, SMs) or null "
        "with `spec_reason`. Use it first to learn which card results will be measured on, and which index to "
        "pass to roofline. Read-only; takes about a second; fails with a clear message when no NVIDIA driver "
        "is present.";
    t.output_schema = gpu_info_schema();
    t.annotations = tool_annotations{.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    t.render = render;
    return make_tool<gpu_info_args>(std::move(t), {}, run);
}

}  // namespace hotkernel
