// SASS / resource-usage / PTX readers (see sass.h).
#include "parsers/sass.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <regex>
#include <set>

#include "util/strings.h"

namespace hotkernel {
namespace {

/// Digits matched by a regex as an int, capped at `cap`: a corrupt listing's huge number must not
/// throw (std::stoi throws out_of_range) or overflow a product.
int capped_int(const std::string& digits, int cap = 1 << 20) {
    unsigned long long v = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || ptr == digits.data()) return ec == std::errc::result_out_of_range ? cap : 0;
    return v > static_cast<unsigned long long>(cap) ? cap : static_cast<int>(v);
}

std::string base_of(std::string_view opcode) {
    auto dot = opcode.find('.');
    return std::string(opcode.substr(0, dot));
}

std::string arch_from_headerflags(const std::string& line) {
    static const std::regex re(R"(EF_CUDA_SM(\d+))");
    std::smatch m;
    if (!std::regex_search(line, m, re)) return {};
    std::string arch = "sm_" + m[1].str();
    // EF_CUDA_ACCELERATORS marks the architecture-specific "a" variant (sm_90a).
    if (line.find("EF_CUDA_ACCELERATORS") != std::string::npos) arch += "a";
    return arch;
}

struct function_builder {
    sass_function fn;
    std::size_t trailing_nops = 0;
    std::size_t raw_count = 0;

    void add_instruction(const std::string& offset, const std::string& text) {
        // text: "[@P0 ]OPCODE operands" without the trailing ';'
        std::string rest = trim(text);
        std::string shown = "/*" + offset + "*/  " + rest + " ;";
        fn.lines.push_back(shown);
        if (!rest.empty() && rest[0] == '@') {
            auto sp = rest.find(' ');
            rest = sp == std::string::npos ? std::string() : trim(rest.substr(sp + 1));
        }
        auto sp = rest.find_first_of(" \t");
        const std::string opcode = rest.substr(0, sp);
        if (opcode.empty()) return;
        const std::string base = base_of(opcode);
        ++raw_count;
        fn.mix[base] += 1;
        if (base == "NOP") {
            ++trailing_nops;
            return;
        }
        trailing_nops = 0;
        if (is_tensor_core_opcode(base)) fn.tensor_core[opcode] += 1;
        if (base == "LDG" || base == "LDGSTS")
            fn.widest_global_load_bits = std::max(fn.widest_global_load_bits, memory_access_bits(opcode));
        if (base == "STG") fn.widest_global_store_bits = std::max(fn.widest_global_store_bits, memory_access_bits(opcode));
        if (base == "LDL") ++fn.local_loads;
        if (base == "STL") ++fn.local_stores;
    }

    sass_function finish() {
        // NOPs after the last real instruction only pad the function to an alignment.
        fn.instruction_count = raw_count - trailing_nops;
        if (trailing_nops > 0) {
            auto it = fn.mix.find("NOP");
            it->second -= trailing_nops;
            if (it->second == 0) fn.mix.erase(it);
        }
        return std::move(fn);
    }
};

}  // namespace

bool is_tensor_core_opcode(std::string_view base) {
    // Every tensor-core MMA opcode ends in "MMA": HMMA IMMA BMMA DMMA (mma.sync), HGMMA IGMMA
    // BGMMA QGMMA (Hopper wgmma), UTCHMMA UTCIMMA UTCQMMA UTCOMMA (Blackwell tcgen05), OMMA QMMA.
    return base.size() >= 4 && base.substr(base.size() - 3) == "MMA";
}

int memory_access_bits(std::string_view opcode) {
    int bits = 32;
    std::size_t pos = opcode.find('.');
    while (pos != std::string_view::npos) {
        std::size_t next = opcode.find('.', pos + 1);
        std::string_view mod = opcode.substr(pos + 1, next == std::string_view::npos ? std::string_view::npos : next - pos - 1);
        if (mod == "8" || mod == "U8" || mod == "S8") bits = 8;
        else if (mod == "16" || mod == "U16" || mod == "S16") bits = 16;
        else if (mod == "32") bits = 32;
        else if (mod == "64") bits = 64;
        else if (mod == "128") bits = 128;
        else if (mod == "256") bits = 256;
        pos = next;
    }
    return bits;
}

sass_listing parse_sass(std::string_view text) {
    sass_listing out;
    static const std::regex code_for_re(R"(^\s*code for (sm_\w+))");
    static const std::regex arch_eq_re(R"(^\s*arch\s*=\s*(sm_\w+))");
    static const std::regex function_re(R"(^\s*Function\s*:\s*(.+?)\s*$)");
    static const std::regex end_re(R"(^\s*\.{5,}\s*$)");
    static const std::regex section_re(R"(^\s*\.section\s+\.text\.([^,\s]+))");
    static const std::regex other_section_re(R"(^\s*(\.section\s|//-+ (?!\.text)))");
    static const std::regex insn_re(R"(^\s*/\*([0-9a-fA-F]{4,})\*/\s*(.*)$)");
    static const std::regex label_re(R"(^\s*(\.L\w+|\$\w+):\s*$)");
    static const std::regex regs_re(R"(SHI_REGISTERS=(\d+))");

    std::string current_arch, headerflags_arch;
    std::optional<function_builder> cur;
    std::set<std::pair<std::string, std::string>> seen;
    auto add_arch = [&](const std::string& a) {
        if (!a.empty() && std::find(out.archs.begin(), out.archs.end(), a) == out.archs.end()) out.archs.push_back(a);
    };
    auto close = [&] {
        if (!cur) return;
        sass_function fn = cur->finish();
        cur.reset();
        if (fn.arch.empty()) fn.arch = headerflags_arch;
        add_arch(fn.arch);
        if (seen.insert({fn.arch, fn.name}).second) out.functions.push_back(std::move(fn));
    };
    out.format = "cuobjdump";
    for (const std::string& raw : split_lines(text)) {
        std::smatch m;
        if (raw.find("nvdisasm warning") != std::string::npos || raw.find("cuobjdump warning") != std::string::npos) {
            out.tool_warnings.push_back(trim(raw));
            continue;
        }
        const bool maybe_insn = raw.find("/*") != std::string::npos && raw.find("*/") != std::string::npos;
        if (maybe_insn && cur && raw.find("/* 0x") != std::string::npos && raw.find("/* 0x") < raw.find("*/") &&
            trim(raw).rfind("/* 0x", 0) == 0)
            continue;  // the second encoding half of an instruction: nothing to read
        if (raw.find("code for") != std::string::npos && std::regex_search(raw, m, code_for_re)) {
            close();
            current_arch = m[1];
            add_arch(current_arch);
            continue;
        }
        if (raw.find("arch") != std::string::npos && std::regex_search(raw, m, arch_eq_re)) {
            close();
            current_arch = m[1];
            continue;
        }
        if (raw.find(".headerflags") != std::string::npos) {
            headerflags_arch = arch_from_headerflags(raw);
            if (cur && cur->fn.arch.empty()) cur->fn.arch = headerflags_arch;
            continue;
        }
        if (raw.find("Function") != std::string::npos && std::regex_search(raw, m, function_re)) {
            close();
            cur.emplace();
            cur->fn.name = m[1];
            cur->fn.arch = current_arch;
            cur->fn.lines.push_back("Function : " + cur->fn.name);
            continue;
        }
        if (raw.find(".section") != std::string::npos && std::regex_search(raw, m, section_re)) {
            close();
            out.format = "nvdisasm";
            cur.emplace();
            cur->fn.name = m[1];
            cur->fn.arch = current_arch;
            cur->fn.lines.push_back("Function : " + cur->fn.name);
            continue;
        }
        if (!cur) continue;
        if (!maybe_insn && (std::regex_search(raw, m, end_re) || std::regex_search(raw, m, other_section_re))) {
            close();
            continue;
        }
        if (raw.find("SHI_REGISTERS") != std::string::npos && std::regex_search(raw, m, regs_re)) {
            cur->fn.registers = capped_int(m[1]);
            continue;
        }
        if (!maybe_insn && std::regex_search(raw, m, label_re)) {
            cur->fn.lines.push_back(m[1].str() + ":");
            continue;
        }
        if (std::regex_match(raw, m, insn_re)) {
            std::string body = m[2];
            // Drop the encoding comment, then keep the text up to the ';'.
            if (auto c = body.find("/*"); c != std::string::npos) body = body.substr(0, c);
            body = trim(body);
            if (body.empty() || body[0] == '.') continue;  // nvinfo data (.byte/.word), not code
            if (!body.empty() && body.back() == ';') body.pop_back();
            cur->add_instruction(m[1], body);
        }
    }
    close();
    return out;
}

std::vector<resource_usage> parse_res_usage(std::string_view text) {
    std::vector<resource_usage> out;
    static const std::regex fn_re(R"(^\s*Function\s+(.+?):\s*$)");
    static const std::regex kv_re(R"(([A-Z]+(?:\[\d+\])?):(\d+))");
    for (const std::string& line : split_lines(text)) {
        std::smatch m;
        if (std::regex_match(line, m, fn_re)) {
            out.push_back({m[1], {}, {}, {}, {}, {}});
            continue;
        }
        if (out.empty() || line.find("REG:") == std::string::npos) continue;
        auto& r = out.back();
        for (std::sregex_iterator it(line.begin(), line.end(), kv_re), end; it != end; ++it) {
            const std::string key = (*it)[1];
            const int v = capped_int((*it)[2], std::numeric_limits<int>::max());
            if (key == "REG") r.registers = v;
            else if (key == "STACK") r.stack_bytes = v;
            else if (key == "SHARED") r.shared_bytes = v;
            else if (key == "LOCAL") r.local_bytes = v;
            else if (key == "CONSTANT[0]") r.constant0_bytes = v;
        }
    }
    return out;
}

namespace {

/// Bits of one PTX element type (.f32 -> 32, .b128 -> 128, .f16x2 -> 32), 0 if not a type.
int ptx_type_bits(std::string_view mod) {
    static const std::regex re(R"(^(?:[fbsu]|bf|e4m3|e5m2)(\d+)(?:x(\d+))?$)");
    std::string s(mod);
    std::smatch m;
    if (!std::regex_match(s, m, re)) return 0;
    // Capped so a corrupt line cannot overflow the product (real widths are at most 128 x 8).
    int bits = capped_int(m[1], 1024);
    if (m[2].matched) bits *= capped_int(m[2], 64);
    return bits;
}

int ptx_access_bits(const std::vector<std::string>& mods) {
    int vec = 1, bits = 0;
    for (const auto& mod : mods) {
        if (mod.size() >= 2 && mod[0] == 'v' && std::isdigit(static_cast<unsigned char>(mod[1]))) vec = capped_int(mod.substr(1), 64);
        else if (int b = ptx_type_bits(mod)) bits = b;
    }
    return vec * bits;
}

}  // namespace

ptx_summary parse_ptx(std::string_view text) {
    ptx_summary out;
    static const std::regex version_re(R"(^\s*\.version\s+(\S+))");
    static const std::regex target_re(R"(^\s*\.target\s+([^\s,]+))");
    static const std::regex entry_re(R"(\.entry\s+([A-Za-z_$][\w$]*))");
    for (const std::string& raw : split_lines(text)) {
        std::string line = raw;
        if (auto c = line.find("//"); c != std::string::npos) line = line.substr(0, c);
        line = trim(line);
        if (line.empty()) continue;
        std::smatch m;
        if (std::regex_search(line, m, version_re)) { out.version = m[1]; continue; }
        if (std::regex_search(line, m, target_re)) { out.target = m[1]; continue; }
        if (std::regex_search(line, m, entry_re)) { out.entries.push_back(m[1]); continue; }
        if (line[0] == '.' || line[0] == '{' || line[0] == '}' || line[0] == ')' || line[0] == '(' || line.back() != ';')
            continue;
        if (line[0] == '@') {
            auto sp = line.find_first_of(" \t");
            if (sp == std::string::npos) continue;
            line = trim(line.substr(sp + 1));
        }
        const std::string opcode = line.substr(0, line.find_first_of(" \t;"));
        if (opcode.empty() || !std::isalpha(static_cast<unsigned char>(opcode[0]))) continue;
        auto parts = split(opcode, '.');
        const std::string root = parts.front();
        std::vector<std::string> mods(parts.begin() + 1, parts.end());
        ++out.instruction_count;
        out.mix[root] += 1;
        const bool has_mma = std::any_of(mods.begin(), mods.end(), [](const std::string& s) { return s.rfind("mma", 0) == 0; });
        if (root == "mma" || root == "wgmma" || (root == "wmma" && has_mma) || (root == "tcgen05" && has_mma))
            out.tensor_core[opcode] += 1;
        auto has = [&](std::string_view s) { return std::find(mods.begin(), mods.end(), s) != mods.end(); };
        if (root == "ld" && has("global")) out.widest_global_load_bits = std::max(out.widest_global_load_bits, ptx_access_bits(mods));
        if (root == "st" && has("global")) out.widest_global_store_bits = std::max(out.widest_global_store_bits, ptx_access_bits(mods));
        if (root == "ld" && has("local")) ++out.local_loads;
        if (root == "st" && has("local")) ++out.local_stores;
    }
    return out;
}

}  // namespace hotkernel
