// The user's interpreter (--python, else $HOTKERNEL_PYTHON, else python3 on PATH) and the
// Python sources embedded in the binary at build time (contract and runners).
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hotkernel {
struct tool_context;

/// The interpreter named by --python / HOTKERNEL_PYTHON / python3, checked to exist.
/// Throws tool_error saying how to point hotkernel at one.
std::string resolve_python(const tool_context& ctx);

/// The text of an embedded Python file by its name under python/ (e.g. "hotkernel_contract.py").
/// Throws std::out_of_range for an unknown name (a build bug).
std::string_view embedded_python(std::string_view name);
/// Names of all embedded files.
std::vector<std::string> embedded_python_names();
/// Writes every embedded file into a cache folder keyed by their hash (once) and returns it,
/// so runners can be started as `python <dir>/<runner>.py` and import the contract from there.
std::filesystem::path embedded_python_dir();

/// The protocol number the embedded contract declares (PROTOCOL = N).
int contract_protocol();
/// SHA-256 of the embedded contract's text.
std::string contract_hash();
}  // namespace hotkernel
