#include "core/util/sha256.hpp"

#include <nettle/sha2.h>

#include <cstdint>

namespace emco {

std::string sha256_hex(std::string_view data) {
  // Nettle's rather than OpenSSL's: libcrypto is loaded on first use (cmake/EmcoLazy.cmake) and
  // loading it (BIND_NOW: 4,200 symbol bindings) cost 3.1M instructions and 1.3 ms, a tenth of
  // `emco template` of a small chart whose only cryptography is one checksum annotation. Nettle
  // is linked statically (cmake/EmcoDeps.cmake) and, like OpenSSL, uses the processor's SHA
  // instructions where it has them: within 10% of OpenSSL's speed from 64 bytes to megabytes.
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
  std::uint8_t md[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof md, md);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(sizeof md * 2, '0');
  for (std::size_t i = 0; i < sizeof md; ++i) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  return out;
}

}  // namespace emco
