// File helpers: atomic writes (temp file in the same folder, fsync, rename) so a crash or a
// full disk never leaves a half-written result, and plain reads with clear errors.
#pragma once
#include <filesystem>
#include <string>

namespace hotkernel {

/// Writes `content` to `path` atomically. Throws tool_error naming the path and the cause
/// (read-only folder, disk full, …); the old file, if any, is left intact.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);
/// Reads a whole file; throws tool_error naming the path when it cannot.
std::string read_file(const std::filesystem::path& path);
/// A fresh private temporary directory under $TMPDIR (or /tmp), created now.
std::filesystem::path make_temp_dir(const std::string& prefix);
/// $XDG_CACHE_HOME/hotkernel or ~/.cache/hotkernel, created on demand.
std::filesystem::path cache_dir();

}  // namespace hotkernel
