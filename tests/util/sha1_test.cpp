// sha1 against FIPS 180-1's examples and coreutils' sha1sum.
#include <catch2/catch.hpp>

#include <string>

#include "core/util/sha1.hpp"

using namespace emco;

namespace {
std::string hex(const Sha1Digest& d) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (auto byte : d) {
    out += digits[byte >> 4];
    out += digits[byte & 15];
  }
  return out;
}
}  // namespace

TEST_CASE("sha1: FIPS 180-1 vectors and binary input", "[sha1]") {
  CHECK(hex(sha1("")) == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(hex(sha1("abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(hex(sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  CHECK(hex(sha1(std::string(1000000, 'a'))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  // A NUL is data, not an end (printf 'a\0b' | sha1sum).
  CHECK(hex(sha1(std::string_view("a\0b", 3))) == "4a3dec2d1f8245280855c42db0ee4239f917fdb8");
}
