#include "core/util/sha256.hpp"

#include <openssl/sha.h>

namespace emco {

std::string sha256_hex(std::string_view data) {
  // SHA256_Init/Update/Final rather than EVP_Digest: OpenSSL 3's EVP path loads and sets up its
  // default provider on a process's first digest (5M instructions, a third of `emco template`
  // of a small chart that hashes one checksum annotation). Same digest, same library; these
  // functions are deprecated since 3.0 (not removed): EVP_Digest is the way if they go.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data.data(), data.size());
  SHA256_Final(md, &ctx);
#pragma GCC diagnostic pop
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(sizeof md * 2, '0');
  for (std::size_t i = 0; i < sizeof md; ++i) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  return out;
}

}  // namespace emco
