// Content hashes (OpenSSL SHA-256), e.g. to tell a vendored contract from the binary's own.
#pragma once
#include <string>
#include <string_view>

namespace hotkernel {
/// Lower-case hex SHA-256 of the bytes.
std::string sha256_hex(std::string_view data);
/// A short random id (hex), for result file names and per-run nonces.
std::string random_hex(std::size_t bytes);
}  // namespace hotkernel
