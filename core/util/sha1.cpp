#include "core/util/sha1.hpp"

#include <nettle/sha1.h>

namespace emco {

Sha1Digest sha1(std::string_view data) {
  static_assert(SHA1_DIGEST_SIZE == std::tuple_size_v<Sha1Digest>);
  sha1_ctx ctx;
  sha1_init(&ctx);
  sha1_update(&ctx, data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
  Sha1Digest out;
  sha1_digest(&ctx, out.size(), out.data());
  return out;
}

}  // namespace emco
