// sha256_hex against FIPS 180-2's examples and coreutils' sha256sum.
#include <catch2/catch.hpp>

#include "core/util/sha256.hpp"

using namespace emco;

TEST_CASE("sha256_hex: FIPS 180-2 vectors, binary input, lowercase hex", "[sha256]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Two blocks.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // A NUL is data, not an end (printf 'a\0b' | sha256sum).
  CHECK(sha256_hex(std::string_view("a\0b", 3)) == "59b271ae1bbcb1d31d41929817f4b16fb439eb4f31520b5ad1d5ce98920a7138");
}
