// The pure parts of `new`: parsing its options into a protocol-3 TARGET and rendering the
// target scripts, plus telling a vendored contract's protocol and hash. No processes here.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.h"

namespace hotkernel {

/// "4096x8192" -> {4096, 8192}. Throws tool_error naming the value and the expected form.
std::vector<std::int64_t> parse_shape_text(std::string_view text, std::string_view what = "shape");

/// One extra input: "w:8192" -> {"w", {8192}}.
struct named_shape {
    std::string name;
    std::vector<std::int64_t> shape;
};
named_shape parse_extra_item(std::string_view text);

/// Workloads: the shapes a model runs, as values of named dims. `--dim M=1,16 --dim K=4096`
/// gives their product; `--workloads "M=1,K=4096; M=16,K=1024"` lists them.
struct dim_values {
    std::string name;
    std::vector<std::int64_t> values;
};
/// {"M=1,16,256", "K=4096"}, or the CLI's comma-split {"M=1", "16", "256", "K=4096"}: an item
/// without '=' adds a value to the dim before it. Throws tool_error naming the item.
std::vector<dim_values> parse_dims(const std::vector<std::string>& items);
/// One workload: each dim's value, in the dims' order.
using workload_dims = std::vector<std::pair<std::string, std::int64_t>>;
/// The product of the dims' values, the first dim varying slowest. At most max_workloads.
std::vector<workload_dims> expand_dims(const std::vector<dim_values>& dims);
/// "M=1,K=4096; M=16,K=1024" (';' between workloads). Every workload binds the same dims.
std::vector<workload_dims> parse_workload_list(std::string_view text);
inline constexpr std::size_t max_workloads = 64;
/// A shape in the dims' names and sizes ("MxK", "Mx4096"), checked against the dims; returns it
/// normalized ("MxK"). Throws tool_error naming an unknown dim.
std::string check_dims_shape(std::string_view text, const std::vector<std::string>& dim_names, std::string_view what);

/// "pkg.mod:fn" or "./file.py:fn" split at the last ':'. Throws tool_error for anything else.
struct callable_spec {
    std::string module;  ///< dotted module name or a file path
    std::string attr;    ///< function name (may be dotted: Class.method)
    [[nodiscard]] bool is_file() const;
};
callable_spec parse_callable_spec(std::string_view text, std::string_view what);

/// True for a Python identifier (ASCII): the names of inputs.
bool is_identifier(std::string_view s);

/// A JSON value as a Python literal (None/True/False, dicts and lists); `indent` > 0 puts each
/// top-level dict entry on its own line.
std::string python_literal(const json& v, int indent = 0);

/// The text of <name>_baseline.py or <name>_candidate.py for a TARGET (role: "baseline" or
/// "candidate"). Deterministic: `new` compares it with what is on disk to spot an edited candidate.
std::string render_target_script(const json& target, std::string_view role);

/// The protocol a contract's text declares (`PROTOCOL = N` at the start of a line), 0 if none.
int parse_contract_protocol(std::string_view text);

/// Whether a script's text is a target script (what `new` writes): a top-level `TARGET = {` and
/// the module hotkernel_contract named (imported, in any form). The one test for it: the trusted
/// launcher runs such scripts under the harness, profile runs them in profile mode.
bool is_target_script_text(std::string_view text);

/// A contract file (a vendored hotkernel_contract.py) against the binary's own copy; named apart
/// from measure/trusted_launcher.h's vendored_contract (the status and warning bench/verify report).
struct contract_file_info {
    std::filesystem::path path;
    bool exists = false;
    int protocol = 0;              ///< 0 when missing or not declared
    std::string sha256;            ///< empty when missing
    int embedded_protocol = 0;
    std::string embedded_sha256;
    bool matches_embedded = false; ///< byte-identical to the binary's copy
    [[nodiscard]] json to_json() const;
};
/// `path` is the contract file itself or a folder holding hotkernel_contract.py.
contract_file_info inspect_contract_file(const std::filesystem::path& path);

}  // namespace hotkernel
