#pragma once
// SHA-256 as lowercase hex: the content addresses of the workspace (manifest
// contents and stored app plans).

#include <string>
#include <string_view>

namespace emco {

// Lowercase hex SHA-256 of `data` (64 characters).
std::string sha256_hex(std::string_view data);

}  // namespace emco
