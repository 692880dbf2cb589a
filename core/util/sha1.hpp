#pragma once
// SHA-1 as raw bytes, for content keys where git's hash is the natural one
// (the GitOps delivery's digests of changes). Not for security.

#include <array>
#include <cstdint>
#include <string_view>

namespace emco {

using Sha1Digest = std::array<std::uint8_t, 20>;

// SHA-1 of `data`: Nettle's, linked into emco as for sha256_hex — no library
// loaded, no allocation (OpenSSL's EVP_DigestInit_ex allocates a context per
// call, and a fleet's commit makes millions of digests).
Sha1Digest sha1(std::string_view data);

}  // namespace emco
