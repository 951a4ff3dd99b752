// disassemble: SASS (cuobjdump -sass) or PTX of a .cubin/.ptx/.so/executable or of the newest
// matching Triton cache entry, with the summary a kernel engineer reads first: instruction mix,
// tensor-core instructions, widest global load/store, local-memory spills, registers.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "nvidia/nvidia_tools.h"
#include "parsers/sass.h"
#include "registry/tool.h"
#include "report/findings.h"
#include "render/render.h"
#include "util/files.h"
#include "util/strings.h"

namespace hotkernel {
namespace fs = std::filesystem;
namespace {

struct triton_entry {
    fs::path dir;
    fs::path json_path;
    json meta;
    std::string name;
    fs::file_time_type mtime;
};

std::vector<fs::path> triton_cache_dirs() {
    std::vector<fs::path> dirs;
    auto add = [&](const fs::path& p) {
        std::error_code ec;
        if (!p.empty() && std::find(dirs.begin(), dirs.end(), p) == dirs.end()) dirs.push_back(p);
    };
    if (const char* v = std::getenv("TRITON_CACHE_DIR"); v && *v) add(v);
    if (const char* v = std::getenv("TRITON_HOME"); v && *v) add(fs::path(v) / ".triton" / "cache");
    if (const char* v = std::getenv("HOME"); v && *v) add(fs::path(v) / ".triton" / "cache");
    return dirs;
}

/// Every entry (a folder with <name>.json holding a "name") in the caches, newest first.
std::vector<triton_entry> scan_triton_caches(const std::vector<fs::path>& roots) {
    std::vector<triton_entry> out;
    for (const auto& root : roots) {
        std::error_code ec;
        if (!fs::is_directory(root, ec)) continue;
        for (const auto& d : fs::directory_iterator(root, ec)) {
            if (!d.is_directory(ec)) continue;
            if (d.path().filename().string().rfind("tmp.", 0) == 0) continue;  // writes in progress
            std::error_code ec2;
            for (const auto& f : fs::directory_iterator(d.path(), ec2)) {
                const std::string fname = f.path().filename().string();
                if (f.path().extension() != ".json" || fname.rfind("__grp__", 0) == 0) continue;
                if (f.file_size(ec2) > (4u << 20)) continue;
                json meta;
                try {
                    meta = json::parse(read_file(f.path()));
                } catch (const std::exception&) {
                    continue;
                }
                if (!meta.is_object() || !meta.contains("name") || !meta["name"].is_string()) continue;
                triton_entry e{d.path(), f.path(), meta, meta["name"].get<std::string>(), f.last_write_time(ec2)};
                const fs::path cubin = d.path() / (e.name + ".cubin");
                if (fs::exists(cubin, ec2)) e.mtime = std::max(e.mtime, fs::last_write_time(cubin, ec2));
                out.push_back(std::move(e));
            }
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const triton_entry& a, const triton_entry& b) { return a.mtime > b.mtime; });
    return out;
}

/// Demangles names with cu++filt (else c++filt); names it cannot demangle come back as they are.
std::vector<std::string> demangle(const std::vector<std::string>& names, tool_context& ctx) {
    std::vector<std::string> out = names;
    std::string input;
    bool any = false;
    for (const auto& n : names) {
        input += n + "\n";
        any = any || n.rfind("_Z", 0) == 0;
    }
    if (!any) return out;
    located_tool filt = locate_nvidia_tool("cu++filt", nullptr);
    if (!filt.found()) filt = {find_executable("c++filt"), "PATH"};
    if (!filt.found()) return out;
    process_spec spec;
    spec.argv = {filt.path.string()};
    spec.stdin_data = input;
    spec.timeout_s = 30;
    const auto res = ctx.runner->run(spec, ctx.cancel);
    if (!res.ok()) return out;
    const auto lines = split_lines(res.stdout_text);
    if (lines.size() < names.size()) return out;
    for (std::size_t i = 0; i < names.size(); ++i) out[i] = trim(lines[i]);
    return out;
}

/// Numeric value of an arch for ordering: sm_90a > sm_90 > sm_89.
int arch_rank(const std::string& arch) {
    int num = 0;
    for (char c : arch)
        if (std::isdigit(static_cast<unsigned char>(c))) num = num * 10 + (c - '0');
    return num * 2 + (arch.empty() || std::isdigit(static_cast<unsigned char>(arch.back())) ? 0 : 1);
}

json mix_rows(const std::map<std::string, std::size_t>& mix, std::size_t total, std::size_t top) {
    std::vector<std::pair<std::string, std::size_t>> v(mix.begin(), mix.end());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    json rows = json::array();
    for (std::size_t i = 0; i < v.size() && i < top; ++i)
        rows.push_back({{"opcode", v[i].first},
                        {"count", v[i].second},
                        {"pct", total ? std::round(1000.0 * static_cast<double>(v[i].second) / static_cast<double>(total)) / 10.0 : 0.0}});
    return rows;
}

struct cuobjdump_tools {
    located_tool cuobjdump;
    std::map<std::string, std::string> env;
};

cuobjdump_tools find_cuobjdump(tool_context& ctx) {
    cuobjdump_tools t;
    t.cuobjdump = locate_nvidia_tool("cuobjdump", &ctx);
    if (!t.cuobjdump.found()) {
        std::string where;
        for (const auto& d : nvidia_tool_search_description("cuobjdump")) where += (where.empty() ? "" : ", ") + d;
        throw tool_error(fmt::format(
            "cuobjdump was not found (searched {}). Install it into the interpreter hotkernel uses: "
            "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm (or triton, which bundles both), or install the CUDA "
            "toolkit; or use level='ptx' on a .ptx file",
            where));
    }
    // cuobjdump -sass runs nvdisasm: look beside cuobjdump first, then everywhere else.
    fs::path nvdisasm = t.cuobjdump.path.parent_path() / "nvdisasm";
    std::error_code ec;
    if (!fs::exists(nvdisasm, ec)) nvdisasm = locate_nvidia_tool("nvdisasm", &ctx).path;
    if (!nvdisasm.empty()) {
        const std::string dir = nvdisasm.parent_path().string();
        t.env["NVDISASM_PATH"] = dir;
        const char* path = std::getenv("PATH");
        t.env["PATH"] = dir + (path && *path ? std::string(":") + path : std::string());
    }
    return t;
}

process_result run_cuobjdump(const cuobjdump_tools& t, std::vector<std::string> args, tool_context& ctx) {
    process_spec spec;
    spec.argv = {t.cuobjdump.path.string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env_set = t.env;
    spec.timeout_s = 300;
    // A large .so (libtorch_cuda) disassembles to hundreds of MB; keep far more than the default.
    spec.max_capture_bytes = 512u << 20;
    auto res = ctx.runner->run(spec, ctx.cancel);
    if (res.cancelled) throw tool_error("disassemble was cancelled");
    if (res.spawn_failed) throw tool_error("could not start " + t.cuobjdump.path.string() + ": " + res.spawn_error);
    if (res.timed_out)
        throw tool_error("cuobjdump " + res.describe(spec.timeout_s) + " on " + args.back() +
                         "; for a large library, extract the one kernel's cubin first (cuobjdump -xelf)");
    if (res.stdout_truncated)
        throw tool_error("cuobjdump's output for " + args.back() + " is over 512 MB; extract the kernel's cubin first "
                         "(cuobjdump -lelf to list, -xelf NAME to extract) and disassemble that");
    return res;
}

std::string fatal_text(const process_result& r) {
    std::string out;
    for (const auto& l : split_lines(r.stderr_text + "\n" + r.stdout_text))
        if (l.find("fatal") != std::string::npos || l.find("rror") != std::string::npos) out += (out.empty() ? "" : "; ") + trim(l);
    return out;
}

bool is_ptx_file(const fs::path& p) {
    if (p.extension() == ".ptx") return true;
    std::string head;
    try {
        head = read_file(p).substr(0, 4096);
    } catch (const tool_error&) {
        return false;
    }
    return head.find(".version") != std::string::npos && head.find(".target") != std::string::npos &&
           head.find('\0') == std::string::npos;
}

json limit_text(json& out, const std::vector<std::string>& lines, long long max_lines, json& warnings) {
    std::string text;
    const std::size_t total = lines.size();
    const std::size_t shown = (max_lines > 0 && static_cast<std::size_t>(max_lines) < total) ? static_cast<std::size_t>(max_lines) : total;
    for (std::size_t i = 0; i < shown; ++i) text += lines[i] + "\n";
    out["total_lines"] = total;
    out["shown_lines"] = shown;
    out["truncated"] = shown < total;
    if (shown < total)
        warnings.push_back(findings::listing_truncated(shown, total));
    return text;
}

struct disassemble_args {
    std::string target;
    std::optional<std::string> kernel;
    std::string level;
    long long max_lines = 0;
    std::optional<std::string> arch;
};

json handle(const disassemble_args& args, tool_context& ctx) {
    const std::string& target = args.target;
    const std::string& level = args.level;
    const long long max_lines = args.max_lines;
    const std::string kernel = args.kernel.value_or("");
    json out;
    json warnings = json::array();
    fs::path file;
    json triton = nullptr;
    std::optional<triton_entry> entry;

    if (target == "triton-cache") {
        if (kernel.empty())
            throw usage_error("target 'triton-cache' needs kernel: a substring of the Triton kernel's name, e.g. " +
                              words::param("kernel", "softmax"));
        const auto roots = triton_cache_dirs();
        const auto entries = scan_triton_caches(roots);
        std::vector<const triton_entry*> matches;
        for (const auto& e : entries)
            if (contains_ci(e.name, kernel)) matches.push_back(&e);
        if (matches.empty()) {
            std::string where, names;
            for (const auto& r : roots) where += (where.empty() ? "" : ", ") + r.string();
            std::set<std::string> seen;
            for (const auto& e : entries)
                if (seen.insert(e.name).second && seen.size() <= 20) names += (names.empty() ? "" : ", ") + e.name;
            if (entries.empty())
                throw tool_error(fmt::format("no Triton cache entries under {}: run the kernel once first (Triton "
                                             "compiles on the first launch), or set TRITON_CACHE_DIR to the cache it used",
                                             where));
            throw tool_error(fmt::format("no Triton kernel whose name contains '{}' under {}; kernels there (newest "
                                         "first): {}",
                                         kernel, where, names));
        }
        entry = *matches.front();
        file = entry->dir / (entry->name + (level == "ptx" ? ".ptx" : ".cubin"));
        std::error_code ec;
        if (!fs::exists(file, ec))
            throw tool_error(fmt::format("the Triton cache entry {} has no {} (an AMD .hsaco or an IR-only entry?); "
                                         "files there are what Triton kept for '{}'",
                                         entry->dir.string(), file.filename().string(), entry->name));
        const json& m = entry->meta;
        triton = json::object();
        triton["name"] = entry->name;
        triton["entry_dir"] = entry->dir.string();
        for (const char* k : {"num_warps", "num_stages", "num_ctas", "shared", "triton_version", "hash", "n_regs", "n_spills"})
            if (m.contains(k)) triton[k == std::string("shared") ? "shared_bytes" : k] = m[k];
        if (m.contains("target") && m["target"].is_object() && m["target"].contains("arch")) triton["target_arch"] = m["target"]["arch"];
        triton["matching_entries"] = matches.size();
        if (matches.size() > 1)
            warnings.push_back(findings::several_cache_entries(matches.size(), kernel, entry->name, entry->dir.string()));
    } else {
        file = target;
        std::error_code ec;
        if (!fs::is_regular_file(file, ec))
            throw tool_error(fmt::format("target '{}' was not found; pass a .cubin/.ptx/.so/executable path or "
                                         "'triton-cache' with kernel=<name substring>",
                                         target));
    }
    out["target"] = target;
    out["file"] = fs::absolute(file).string();
    out["level"] = level;

    if (level == "ptx") {
        std::string text;
        if (is_ptx_file(file)) {
            text = read_file(file);
            out["source"] = "file";
        } else {
            const auto tools = find_cuobjdump(ctx);
            const auto res = run_cuobjdump(tools, {"-ptx", file.string()}, ctx);
            if (!res.ok()) throw tool_error("cuobjdump -ptx failed on " + file.string() + ": " + fatal_text(res));
            text = res.stdout_text;
            out["source"] = "cuobjdump -ptx";
            out["cuobjdump"] = tools.cuobjdump.path.string();
        }
        const ptx_summary s = parse_ptx(text);
        if (s.entries.empty() && s.version.empty())
            throw tool_error(fmt::format("no PTX in {}: a cubin, or a binary built with only code=sm_XX, holds SASS "
                                         "alone (use level='sass', or build with -gencode arch=compute_XX,code=compute_XX "
                                         "to embed PTX); for a Triton kernel use target='triton-cache', whose entries keep "
                                         "the .ptx",
                                         file.string()));
        out["ptx_version"] = s.version;
        out["arch"] = s.target;
        out["functions"] = s.entries;
        out["instruction_count"] = s.instruction_count;
        out["instruction_mix"] = mix_rows(s.mix, s.instruction_count, 15);
        json tc = json::array();
        for (const auto& [op, c] : s.tensor_core) tc.push_back({{"opcode", op}, {"count", c}});
        out["tensor_core_instructions"] = tc;
        out["widest_global_load_bits"] = s.widest_global_load_bits;
        out["widest_global_store_bits"] = s.widest_global_store_bits;
        out["local_memory_spills"] = {{"ldl", s.local_loads}, {"stl", s.local_stores}};  // ld.local / st.local
        if (!triton.is_null()) out["triton"] = triton;
        std::vector<std::string> lines = split_lines(text);
        out["text"] = limit_text(out, lines, max_lines, warnings);
        out["warnings"] = warnings;
        return out;
    }

    const auto tools = find_cuobjdump(ctx);
    out["cuobjdump"] = tools.cuobjdump.path.string();
    if (is_ptx_file(file))
        throw tool_error(fmt::format("{} is PTX text, which has no SASS until ptxas compiles it; use level='ptx', or "
                                     "compile it (ptxas -arch=sm_90 {} -o k.cubin) and disassemble the cubin",
                                     file.string(), file.string()));
    ctx.progress(0, 0, "cuobjdump -sass " + file.string());
    const auto res = run_cuobjdump(tools, {"-sass", file.string()}, ctx);
    if (!res.ok() || res.stderr_text.find("fatal") != std::string::npos) {
        std::string why = fatal_text(res);
        if (why.find("nvdisasm") != std::string::npos)
            why += "; install nvdisasm next to cuobjdump: pip install nvidia-cuda-nvdisasm (or the CUDA toolkit)";
        throw tool_error(fmt::format("cuobjdump -sass failed on {} ({}): {}", file.string(), res.describe(300),
                                     why.empty() ? tail_text(res.stderr_text, 800) : why));
    }
    sass_listing listing = parse_sass(res.stdout_text);
    for (const auto& w : parse_sass(res.stderr_text).tool_warnings) listing.tool_warnings.push_back(w);
    if (listing.functions.empty())
        throw tool_error(fmt::format("no SASS in {}: cuobjdump found no device functions{} (a host-only binary, or one "
                                     "holding only PTX: try level='ptx')",
                                     file.string(), listing.archs.empty() ? "" : " for " + listing.archs.front()));

    std::vector<std::string> names;
    for (const auto& f : listing.functions) names.push_back(f.name);
    const auto demangled = demangle(names, ctx);
    std::vector<std::size_t> chosen;
    for (std::size_t i = 0; i < listing.functions.size(); ++i)
        if (kernel.empty() || target == "triton-cache" || contains_ci(listing.functions[i].name, kernel) ||
            contains_ci(demangled[i], kernel))
            chosen.push_back(i);
    if (chosen.empty()) {
        std::string all;
        for (std::size_t i = 0; i < demangled.size() && i < 30; ++i) all += (all.empty() ? "" : ", ") + demangled[i];
        throw tool_error(fmt::format("no function in {} has '{}' in its name; functions there: {}", file.string(), kernel, all));
    }
    // A fat binary can hold the same kernel for several archs: show one.
    std::vector<std::string> archs_available;
    for (auto i : chosen)
        if (std::find(archs_available.begin(), archs_available.end(), listing.functions[i].arch) == archs_available.end())
            archs_available.push_back(listing.functions[i].arch);
    std::string arch = args.arch.value_or("");
    if (!arch.empty() && std::find(archs_available.begin(), archs_available.end(), arch) == archs_available.end()) {
        std::string avail;
        for (const auto& a : archs_available) avail += (avail.empty() ? "" : ", ") + a;
        throw tool_error(fmt::format("{} has no SASS for arch '{}'; it has: {}", file.string(), arch, avail));
    }
    if (arch.empty())
        arch = *std::max_element(archs_available.begin(), archs_available.end(),
                                 [](const std::string& a, const std::string& b) { return arch_rank(a) < arch_rank(b); });
    if (archs_available.size() > 1)
        warnings.push_back(findings::fat_binary_arch(archs_available.size(), arch));

    // Registers and shared memory per function, from the same cuobjdump.
    std::map<std::string, resource_usage> resources;
    const auto rres = run_cuobjdump(tools, {"-res-usage", file.string()}, ctx);
    if (rres.ok())
        for (const auto& r : parse_res_usage(rres.stdout_text)) resources.try_emplace(r.function, r);

    json functions = json::array();
    std::map<std::string, std::size_t> mix, tensor;
    std::size_t count = 0, ldl = 0, stl = 0;
    int load_bits = 0, store_bits = 0;
    std::optional<int> max_regs;
    std::vector<std::string> lines;
    for (auto i : chosen) {
        const auto& f = listing.functions[i];
        if (f.arch != arch) continue;
        json jf;
        jf["name"] = f.name;
        jf["demangled"] = demangled[i];
        jf["arch"] = f.arch;
        jf["instruction_count"] = f.instruction_count;
        std::optional<int> regs = f.registers;
        if (auto it = resources.find(f.name); it != resources.end()) {
            if (!regs) regs = it->second.registers;
            jf["shared_bytes"] = it->second.shared_bytes ? json(*it->second.shared_bytes) : json(nullptr);
            jf["local_bytes"] = it->second.local_bytes ? json(*it->second.local_bytes) : json(nullptr);
            jf["stack_bytes"] = it->second.stack_bytes ? json(*it->second.stack_bytes) : json(nullptr);
        }
        if (!regs && entry && entry->meta.contains("n_regs") && entry->meta["n_regs"].is_number_integer())
            regs = entry->meta["n_regs"].get<int>();
        jf["registers"] = regs ? json(*regs) : json(nullptr);
        if (regs) max_regs = std::max(max_regs.value_or(0), *regs);
        functions.push_back(jf);
        count += f.instruction_count;
        for (const auto& [k, v] : f.mix) mix[k] += v;
        for (const auto& [k, v] : f.tensor_core) tensor[k] += v;
        ldl += f.local_loads;
        stl += f.local_stores;
        load_bits = std::max(load_bits, f.widest_global_load_bits);
        store_bits = std::max(store_bits, f.widest_global_store_bits);
        for (std::size_t k = 0; k < f.lines.size(); ++k) {
            // Show the demangled name in the header line; the mangled one stays in functions[].
            lines.push_back(k == 0 && demangled[i] != f.name ? "Function : " + demangled[i] + "  (" + f.name + ")" : f.lines[k]);
        }
        lines.push_back("");
    }
    out["arch"] = arch;
    out["archs_available"] = archs_available;
    out["functions"] = functions;
    out["instruction_count"] = count;
    out["instruction_mix"] = mix_rows(mix, count, 15);
    json tc = json::array();
    for (const auto& [op, c] : tensor) tc.push_back({{"opcode", op}, {"count", c}});
    out["tensor_core_instructions"] = tc;
    out["uses_tensor_cores"] = !tensor.empty();
    out["widest_global_load_bits"] = load_bits;
    out["widest_global_store_bits"] = store_bits;
    out["global_load_128bit"] = load_bits >= 128;
    out["global_store_128bit"] = store_bits >= 128;
    out["local_memory_spills"] = {{"ldl", ldl}, {"stl", stl}};
    out["registers"] = max_regs ? json(*max_regs) : json(nullptr);
    if (!triton.is_null()) out["triton"] = triton;
    if (ldl + stl > 0)
        warnings.push_back(findings::local_memory_used(ldl, stl));
    if (load_bits > 0 && load_bits < 128)
        warnings.push_back(findings::narrow_global_loads(load_bits));
    for (const auto& w : listing.tool_warnings) {
        const json f = findings::disassembler_warning(w);
        if (std::find(warnings.begin(), warnings.end(), f) == warnings.end()) warnings.push_back(f);
    }
    out["text"] = limit_text(out, lines, max_lines, warnings);
    out["warnings"] = warnings;
    return out;
}

}  // namespace

tool_spec disassemble_tool() {
    tool_spec t;
    t.name = "disassemble";
    t.title = "Disassemble";
    t.summary = "SASS or PTX of a cubin, binary or Triton cache entry, with a summary";
    t.description =
        "Disassemble a kernel: returns SASS/PTX and a summary (tensor cores, load width, spills). Call it to "
        "see what the compiler made.";
    t.details =
        "Disassemble a kernel. target is a .cubin/.ptx/.so/.exe path, or 'triton-cache' to search "
        "~/.triton/cache (and TRITON_CACHE_DIR) for the most recent kernel whose name contains kernel. level: "
        "'sass' (via cuobjdump -sass) or 'ptx' (cuobjdump -ptx / the .ptx file). A real kernel is 500-3000 "
        "SASS lines; max_lines<=0 returns all of them. Beside the text: functions (demangled), instruction "
        "count and mix, tensor-core instructions (HMMA/HGMMA/...), widest global load/store (128-bit?), "
        "local-memory spills (LDL/STL), registers and shared memory, the arch shown and the archs a fat "
        "binary holds.";
    t.output_schema = {
        {"type", "object"},
        {"properties",
         {{"target", {{"type", "string"}}},
          {"file", {{"type", "string"}}},
          {"level", {{"type", "string"}}},
          {"arch", {{"type", "string"}}},
          {"archs_available", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"functions", {{"type", "array"}}},
          {"instruction_count", {{"type", "integer"}}},
          {"instruction_mix", {{"type", "array"}, {"items", {{"type", "object"}}}}},
          {"tensor_core_instructions", {{"type", "array"}, {"items", {{"type", "object"}}}}},
          {"widest_global_load_bits", {{"type", "integer"}}},
          {"widest_global_store_bits", {{"type", "integer"}}},
          {"local_memory_spills",
           {{"type", "object"},
            {"description", "local-memory loads and stores (SASS LDL/STL, PTX ld.local/st.local): register spills "
                            "or a local array"},
            {"required", {"ldl", "stl"}},
            {"properties", {{"ldl", {{"type", "integer"}}}, {"stl", {{"type", "integer"}}}}}}},
          {"text", {{"type", "string"}}},
          {"warnings", findings_schema(finding_kind::warning)}}},
        {"required", {"target", "file", "level", "instruction_count", "text", "warnings"}}};
    t.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    t.render = [](const json& result) {
        json summary = result;
        const std::string text = summary.value("text", "");
        summary.erase("text");
        return render_text(summary) + "\n" + text;
    };
    return make_tool<disassemble_args>(
        std::move(t),
        {param(&disassemble_args::target, {.name = "target",
                                           .summary = "A .cubin/.ptx/.so/binary, or 'triton-cache'",
                                           .details = "a .cubin/.ptx/.so/executable path, or 'triton-cache'.",
                                           .required = true,
                                           .positional = true}),
         param(&disassemble_args::kernel, {.name = "kernel",
                                           .summary = "Part of the kernel's name",
                                           .details = "substring of the kernel name (case-insensitive); required for "
                                                      "triton-cache, a filter otherwise."}),
         param(&disassemble_args::level,
               {.name = "level", .summary = "sass or ptx", .default_value = "sass", .choices = {"sass", "ptx"}}),
         param(&disassemble_args::max_lines,
               {.name = "max_lines", .summary = "Lines to return (<= 0: all)",
                                     .details = "lines of text to return; <= 0 returns all.", .default_value = 200}),
         param(&disassemble_args::arch, {.name = "arch",
                                         .summary = "Fat binaries: the sm_XX to show",
                                         .details = "fat binaries: which sm_XX section to show (without it: the "
                                                    "highest present)."})},
        handle);
}

}  // namespace hotkernel
