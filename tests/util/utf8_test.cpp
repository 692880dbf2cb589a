// The one UTF-8 helper reads bytes as Go's unicode/utf8 does.
#include <catch2/catch.hpp>

#include "core/util/utf8.hpp"

using namespace emco;

TEST_CASE("utf8: decode gives Go's rune and width, U+FFFD of width 1 for a bad byte", "[utf8]") {
  char32_t r;
  CHECK(utf8::decode("a", 0, r) == 1);
  CHECK(r == U'a');
  CHECK(utf8::decode("\xc3\xa9", 0, r) == 2);
  CHECK(r == 0xE9);
  CHECK(utf8::decode("\xe2\x82\xac", 0, r) == 3);
  CHECK(r == 0x20AC);
  CHECK(utf8::decode("\xf0\x9f\x98\x80", 0, r) == 4);
  CHECK(r == 0x1F600);
  for (const char* bad : {"\x80", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "\xe2\x82"}) {
    INFO(bad);
    CHECK(utf8::decode(bad, 0, r) == 1);
    CHECK(r == utf8::k_replacement);
  }
  CHECK(utf8::decode("\xef\xbf\xbd", 0, r) == 3);  // a real U+FFFD
}

TEST_CASE("utf8: count, append and validity", "[utf8]") {
  CHECK(utf8::count("") == 0);
  CHECK(utf8::count("h\xc3\xa9llo") == 5);
  CHECK(utf8::count("\xe2\x82") == 2);  // each bad byte is a rune, as in Go
  std::string out;
  utf8::append(out, U'a');
  utf8::append(out, 0xE9);
  utf8::append(out, 0x1F600);
  utf8::append(out, 0xD800);    // a surrogate
  utf8::append(out, 0x110000);  // past the last code point
  CHECK(out == "a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd");
  CHECK(utf8::sequence_length('a') == 1);
  CHECK(utf8::sequence_length(0xE2) == 3);
  CHECK(utf8::sequence_length(0x80) == 0);
  CHECK(utf8::invalid_offset("ok \xef\xbf\xbd then \xff") == 12);
  CHECK(utf8::valid("\xef\xbf\xbd"));
}
