// Parsing `new`'s options, rendering protocol-3 target scripts, and inspecting vendored contracts.
#include "scaffold/target_spec.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <regex>

#include <fmt/format.h>

#include "python/interpreter.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/strings.h"

namespace hotkernel {
namespace fs = std::filesystem;

std::vector<std::int64_t> parse_shape_text(std::string_view text, std::string_view what) {
    const std::string t = to_lower(trim(text));
    std::vector<std::int64_t> dims;
    bool bad = t.empty();
    for (const auto& part : split(t, 'x')) {
        const std::string p = trim(part);
        std::int64_t v = 0;
        auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
        if (p.empty() || ec != std::errc() || ptr != p.data() + p.size() || v < 1) {
            bad = true;
            break;
        }
        dims.push_back(v);
    }
    if (bad || dims.empty())
        throw tool_error(fmt::format("{} '{}' is not a shape: write positive sizes joined by 'x', like '4096x8192' "
                                     "(or '8192' for one dimension)",
                                     what, std::string(text)));
    return dims;
}

bool is_identifier(std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

named_shape parse_extra_item(std::string_view text) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos)
        throw tool_error(fmt::format("extra input '{}' must be 'name:shape', like 'w:8192' or 'w:8192x8192'",
                                     std::string(text)));
    named_shape ns;
    ns.name = trim(text.substr(0, colon));
    if (!is_identifier(ns.name))
        throw tool_error(fmt::format("extra input '{}': the name '{}' must be a Python identifier, like 'w'",
                                     std::string(text), ns.name));
    ns.shape = parse_shape_text(text.substr(colon + 1), fmt::format("extra input '{}': shape", ns.name));
    return ns;
}

namespace {

bool is_dim_name(std::string_view s) { return is_identifier(s) && s.find('x') == std::string_view::npos; }

std::int64_t parse_dim_value(std::string_view text, std::string_view item) {
    const std::string t = trim(text);
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || v < 1)
        throw tool_error(fmt::format("dim value '{}' in '{}' is not a positive integer; write dims like 'M=1,16,256'", t,
                                     std::string(item)));
    return v;
}

std::string checked_dim_name(std::string_view text, std::string_view item) {
    const std::string n = trim(text);
    if (!is_dim_name(n))
        throw tool_error(fmt::format("dim name '{}' in '{}' must be an identifier without a lowercase 'x' (the shape's "
                                     "separator), like 'M' or 'K'",
                                     n, std::string(item)));
    return n;
}

}  // namespace

std::vector<dim_values> parse_dims(const std::vector<std::string>& items) {
    std::vector<dim_values> dims;
    for (const auto& item : items)
        for (const auto& part : split(item, ',')) {
            const auto eq = part.find('=');
            if (eq == std::string::npos) {
                if (dims.empty())
                    throw tool_error(fmt::format("dim '{}' has no name; write 'M=1,16,256' (a name, '=', its values)",
                                                 part));
                dims.back().values.push_back(parse_dim_value(part, item));
                continue;
            }
            const std::string name = checked_dim_name(part.substr(0, eq), item);
            for (const auto& d : dims)
                if (d.name == name) throw tool_error(fmt::format("dim '{}' is given twice; give each dim once", name));
            dims.push_back({name, {parse_dim_value(part.substr(eq + 1), item)}});
        }
    return dims;
}

std::vector<workload_dims> expand_dims(const std::vector<dim_values>& dims) {
    std::vector<workload_dims> out{{}};
    for (const auto& d : dims) {
        std::vector<workload_dims> next;
        for (const auto& w : out)
            for (std::int64_t v : d.values) {
                workload_dims x = w;
                x.emplace_back(d.name, v);
                next.push_back(std::move(x));
            }
        out = std::move(next);
        if (out.size() > max_workloads)
            throw tool_error(fmt::format("the dims make more than {} workloads; give fewer values", max_workloads));
    }
    return dims.empty() ? std::vector<workload_dims>{} : out;
}

std::vector<workload_dims> parse_workload_list(std::string_view text) {
    std::vector<workload_dims> out;
    for (const auto& one : split(std::string(text), ';')) {
        if (trim(one).empty()) continue;
        workload_dims w;
        for (const auto& part : split(one, ',')) {
            const auto eq = part.find('=');
            if (eq == std::string::npos)
                throw tool_error(fmt::format("workload '{}': '{}' is not 'name=value'; write workloads like "
                                             "'M=1,K=4096; M=16,K=1024'",
                                             trim(one), trim(part)));
            const std::string name = checked_dim_name(part.substr(0, eq), one);
            for (const auto& [n, v] : w)
                if (n == name) throw tool_error(fmt::format("workload '{}' gives dim '{}' twice", trim(one), name));
            w.emplace_back(name, parse_dim_value(part.substr(eq + 1), one));
        }
        if (!out.empty()) {
            std::vector<std::string> a, b;
            for (const auto& [n, v] : out.front()) a.push_back(n);
            for (const auto& [n, v] : w) b.push_back(n);
            if (a != b)
                throw tool_error(fmt::format("workload '{}' binds {}, the first binds {}: every workload gives the same "
                                             "dims, in the same order",
                                             trim(one), join(b), join(a)));
        }
        out.push_back(std::move(w));
        if (out.size() > max_workloads) throw tool_error(fmt::format("more than {} workloads", max_workloads));
    }
    if (out.empty()) throw tool_error("workloads lists none; write them like 'M=1,K=4096; M=16,K=1024'");
    return out;
}

std::string check_dims_shape(std::string_view text, const std::vector<std::string>& dim_names, std::string_view what) {
    std::vector<std::string> parts;
    for (const auto& part : split(std::string(text), 'x')) {
        const std::string p = trim(part);
        bool number = !p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        if (number) {
            parse_dim_value(p, text);
        } else if (std::find(dim_names.begin(), dim_names.end(), p) == dim_names.end()) {
            throw tool_error(fmt::format("{} '{}': '{}' is neither a size nor a dim (dims: {}); write it like 'MxK'", what,
                                         std::string(text), p, join(dim_names)));
        }
        parts.push_back(p);
    }
    if (parts.empty()) throw tool_error(fmt::format("{} is empty; write it like 'MxK'", what));
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : "x") + p;
    return out;
}

bool callable_spec::is_file() const { return module.ends_with(".py") || module.find('/') != std::string::npos; }

callable_spec parse_callable_spec(std::string_view text, std::string_view what) {
    const std::string t = trim(text);
    const auto colon = t.rfind(':');
    callable_spec s;
    if (colon != std::string::npos) {
        s.module = trim(t.substr(0, colon));
        s.attr = trim(t.substr(colon + 1));
    }
    bool ok = !s.module.empty() && !s.attr.empty();
    if (ok)
        for (const auto& part : split(s.attr, '.')) ok = ok && is_identifier(part);
    if (ok && !s.is_file())
        for (const auto& part : split(s.module, '.')) ok = ok && is_identifier(part);
    if (!ok)
        throw tool_error(fmt::format("{} '{}' is not 'module:function' or './file.py:function'; for example "
                                     "'torch.nn.functional:gelu' or './mykernels.py:fused'",
                                     what, t));
    return s;
}

namespace {

void append_literal(std::string& out, const json& v, int indent, int depth) {
    switch (v.type()) {
        case json::value_t::null: out += "None"; break;
        case json::value_t::boolean: out += v.get<bool>() ? "True" : "False"; break;
        case json::value_t::string: out += dump_line(v); break;  // a JSON string is a valid Python literal
        case json::value_t::number_float: {
            const double d = v.get<double>();
            out += (d == static_cast<double>(static_cast<long long>(d)) && std::abs(d) < 1e15)
                       ? fmt::format("{}", static_cast<long long>(d))
                       : fmt::format("{}", d);
            break;
        }
        case json::value_t::array: {
            out += '[';
            bool first = true;
            for (const auto& e : v) {
                if (!first) out += ", ";
                first = false;
                append_literal(out, e, 0, depth + 1);
            }
            out += ']';
            break;
        }
        case json::value_t::object: {
            out += '{';
            const bool multiline = indent > 0 && depth == 0 && !v.empty();
            bool first = true;
            for (const auto& [k, e] : v.items()) {
                if (!first) out += multiline ? "," : ", ";
                if (multiline) out += "\n" + std::string(indent, ' ');
                first = false;
                out += dump_line(json(k)) + ": ";
                append_literal(out, e, 0, depth + 1);
            }
            if (multiline) out += ",\n";
            out += '}';
            break;
        }
        default: out += dump_line(v); break;  // integers
    }
}

std::string join_names(const json& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n.get<std::string>();
    return out;
}

}  // namespace

std::string python_literal(const json& v, int indent) {
    std::string out;
    append_literal(out, v, indent, 0);
    return out;
}

std::string render_target_script(const json& target, std::string_view role) {
    const std::string name = target.at("name").get<std::string>();
    const std::string from = target.at("from").get<std::string>();
    json call_names = json::array({"x"});
    if (target.contains("inputs") && target["inputs"].is_array() && !target["inputs"].empty()) {
        call_names = target["inputs"];
    } else if (target.contains("extra") && target["extra"].is_object()) {
        for (const auto& [k, _] : target["extra"].items()) call_names.push_back(k);
    }
    const std::string args = join_names(call_names);
    const callable_spec spec = parse_callable_spec(from, "from");

    // A plain `from module import fn` reads best; file specs and dotted attributes go through the contract.
    std::string import_line;
    if (!spec.is_file() && spec.attr.find('.') == std::string::npos)
        import_line = fmt::format("from {} import {} as _baseline", spec.module, spec.attr);
    else
        import_line = "_baseline = hk.load_callable(TARGET[\"from\"], __file__)";

    std::string out;
    if (role == "baseline") {
        out += fmt::format("# {} baseline, written by `hotkernel new` (protocol 3): the point the candidate is measured "
                           "against.\n",
                           name);
        out += fmt::format("# Run: python {}_baseline.py  -> one JSON line (ms, ok, ...). Leave this file as it is;\n", name);
        out += fmt::format("# edit {}_candidate.py. To change the target, re-run `hotkernel new` with --force.\n", name);
    } else {
        out += fmt::format("# {} candidate, written by `hotkernel new` (protocol 3): THE file to edit. It starts as the "
                           "baseline.\n",
                           name);
        out += fmt::format("# Keep kernel({}) and return what the baseline returns (same shape and dtype).\n", args);
        out += fmt::format("# Check and time it: hotkernel verify {0}_baseline.py {0}_candidate.py\n", name);
    }
    out += "import hotkernel_contract as hk\n\n";
    out += "TARGET = " + python_literal(target, 4) + "\n\n";
    out += import_line + "\n\n\n";
    out += fmt::format("def kernel({}):\n", args);
    if (role == "baseline")
        out += fmt::format("    \"\"\"The baseline: {} as given.\"\"\"\n", from);
    else
        out += "    \"\"\"Make this faster (a Triton kernel, a fused op, torch.compile...). Starts as the baseline.\"\"\"\n";
    out += fmt::format("    return _baseline({})\n\n\n", args);
    out += "if __name__ == \"__main__\":\n";
    out += fmt::format("    hk.main(TARGET, kernel, role=\"{}\")\n", role);
    return out;
}

int parse_contract_protocol(std::string_view text) {
    static const std::regex re(R"((?:^|\n)PROTOCOL\s*=\s*(\d+))");
    std::match_results<std::string_view::const_iterator> m;
    if (std::regex_search(text.begin(), text.end(), m, re)) {
        try {
            return std::stoi(m[1].str());
        } catch (const std::exception&) {
            return 0;
        }
    }
    return 0;
}

bool is_target_script_text(std::string_view text) {
    static const std::regex target(R"((?:^|\n)TARGET\s*=\s*\{)");
    static const std::regex contract(R"((?:^|[^\w])hotkernel_contract(?!\w))");
    return std::regex_search(text.begin(), text.end(), target) && std::regex_search(text.begin(), text.end(), contract);
}

json contract_file_info::to_json() const {
    return json{{"path", path.string()},
                {"exists", exists},
                {"protocol", protocol},
                {"sha256", sha256.empty() ? json(nullptr) : json(sha256)},
                {"embedded_protocol", embedded_protocol},
                {"embedded_sha256", embedded_sha256},
                {"matches_embedded", matches_embedded}};
}

contract_file_info inspect_contract_file(const fs::path& path) {
    contract_file_info v;
    std::error_code ec;
    v.path = fs::is_directory(path, ec) ? path / "hotkernel_contract.py" : path;
    v.embedded_protocol = contract_protocol();
    v.embedded_sha256 = contract_hash();
    if (!fs::is_regular_file(v.path, ec)) return v;
    const std::string text = read_file(v.path);
    v.exists = true;
    v.protocol = parse_contract_protocol(text);
    v.sha256 = sha256_hex(text);
    v.matches_embedded = v.sha256 == v.embedded_sha256;
    return v;
}

}  // namespace hotkernel
