#include <catch2/catch.hpp>

#include "core/util/printable.hpp"

using emco::printable;
using emco::scrub;

TEST_CASE("printable: control characters and bad UTF-8 become U+FFFD, CR goes, long text is cut", "[util][printable]") {
  CHECK(printable("plain text\twith a tab", 100) == "plain text\twith a tab");
  CHECK(printable("esc\x1b[2Jcleared", 100) == "esc\xEF\xBF\xBD[2Jcleared");
  CHECK(printable("line\r\nnext\rover", 100) == "line\nnextover");
  CHECK(printable("del\x7f c1\xC2\x9B", 100) == "del\xEF\xBF\xBD c1\xEF\xBF\xBD");
  CHECK(printable("bad \xff\xfe utf8", 100) == "bad \xEF\xBF\xBD\xEF\xBF\xBD utf8");
  CHECK(printable("h\xC3\xA9llo w\xC3\xB6rld", 100) == "h\xC3\xA9llo w\xC3\xB6rld");
  CHECK(printable("abcdef", 4) == "abcd...");
  CHECK(printable("ab\xC3\xA9", 3) == "ab...");  // never half a character
  CHECK(printable("", 0).empty());
}

TEST_CASE("scrub: every occurrence of every secret", "[util][printable]") {
  CHECK(scrub("a phrase and a phrase", {"phrase"}) == "a *** and a ***");
  CHECK(scrub("token=abc user=me", {"", "abc", "me"}) == "token=*** user=***");
  CHECK(scrub("aaaa", {"aa"}) == "******");
}
