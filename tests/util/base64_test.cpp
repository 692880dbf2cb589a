// The one base64 codec: Go's encoding/base64 (errors at Go's offsets) and the lenient mode
// for text people and other tools write.
#include <catch2/catch.hpp>

#include "core/util/base64.hpp"

using namespace emco;

namespace {

// The offset Go's StdEncoding.DecodeString reports, or -1 when `text` decodes.
long error_at(std::string_view text, Base64Format format = {}) {
  size_t at = 0;
  return base64_decode(text, format, &at) ? -1 : static_cast<long>(at);
}

}  // namespace

TEST_CASE("base64: encoding in the standard and URL alphabets, padded and raw", "[base64]") {
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("\xfb\xff") == "+/8=");
  CHECK(base64_encode("\xfb\xff", {.url = true}) == "-_8=");
  CHECK(base64_encode("\xfb\xff", {.url = true, .padded = false}) == "-_8");
  for (const std::string& s : {std::string(), std::string("a"), std::string("ab"), std::string("abc"), std::string("\0\xff\x10", 3)})
    for (Base64Format f : {Base64Format{}, Base64Format{.url = true, .padded = false}}) CHECK(base64_decode(base64_encode(s, f), f) == s);
}

TEST_CASE("base64: strict decoding skips line breaks and fails where Go does", "[base64]") {
  CHECK(base64_decode("aGVs\r\nbG8=") == "hello");
  CHECK(error_at("aGVsbG8") == 4);    // padding missing: the start of the last quantum
  CHECK(error_at("aGVsbG8=!") == 8);  // data after the padding
  CHECK(error_at("a") == 0);          // one character carries no byte
  CHECK(error_at("aG=s") == 2);       // "=" where "==" belongs
  CHECK(error_at("====") == 0);
  CHECK(error_at("aGVs*G8=") == 4);   // outside the alphabet
  CHECK(error_at("aG VsbG8=") == 2);  // a space is not a line break
  CHECK(error_at("-_8=") == 0);       // URL characters in the standard alphabet
  CHECK(base64_decode("-_8", {.url = true, .padded = false}) == "\xfb\xff");
  CHECK(error_at("-_8=", {.url = true, .padded = false}) == 3);  // no padding in a raw format
}

TEST_CASE("base64: lenient decoding takes either alphabet, white space and missing padding", "[base64]") {
  const Base64Format lenient{.lenient = true};
  CHECK(base64_decode(" QU JD\n\tRA== ", lenient) == "ABCD");
  CHECK(base64_decode("QUJDRA", lenient) == "ABCD");
  CHECK(base64_decode("-_8", lenient) == "\xfb\xff");
  CHECK(base64_decode("+/8=", lenient) == "\xfb\xff");
  CHECK_FALSE(base64_decode("QUJD=A", lenient));  // data after padding
  CHECK_FALSE(base64_decode("QUJDR", lenient));   // a lone trailing character
  CHECK_FALSE(base64_decode("QU*D", lenient));
}
