#include "core/util/openssl_init.hpp"

#include <openssl/crypto.h>

namespace emco {

void initialise_openssl() {
  // Options 0 would return before doing anything (nor register the cleanup).
  static const bool ready = OPENSSL_init_crypto(OPENSSL_INIT_ADD_ALL_DIGESTS, nullptr) == 1;
  (void)ready;
}

}  // namespace emco
