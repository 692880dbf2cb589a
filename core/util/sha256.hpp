#pragma once
// SHA-256 as lowercase hex: the content addresses of the workspace (manifest
// contents and stored app plans) and templates' sha256sum.

#include <string>
#include <string_view>

namespace emco {

// Lowercase hex SHA-256 of `data` (64 characters). Loads no library (Nettle's
// SHA-256, linked into emco), so it costs a command only the hashing.
std::string sha256_hex(std::string_view data);

}  // namespace emco
