// The user's interpreter (--python, else $HOTKERNEL_PYTHON, else python3 on PATH) and the
// Python sources embedded in the binary at build time (contract and runners).
#pragma once
#include <filesystem>
#include <map>
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
/// Writes every embedded file into a cache folder keyed by their hash and returns it, so runners
/// can be started as `python <dir>/<runner>.py` and import the contract from there. Every call
/// checks the folder against the binary: a file whose bytes differ is rewritten, anything else
/// (__pycache__, *.pyc, *.pth, other files) removed, and take_python_dir_findings() says what.
std::filesystem::path embedded_python_dir();
/// What the checks of embedded_python_dir() found since the last call ("name (other bytes)",
/// "__pycache__"), each once; empty when the folder held only what hotkernel wrote.
std::vector<std::string> take_python_dir_findings();
/// sha256 of every embedded file's text, by file name: the harness checks the bytes it loads against these.
std::map<std::string, std::string> embedded_python_hashes();

/// The protocol number the embedded contract declares (PROTOCOL = N).
int contract_protocol();
/// SHA-256 of the embedded contract's text.
std::string contract_hash();
}  // namespace hotkernel
