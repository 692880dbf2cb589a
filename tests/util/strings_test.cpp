#include <catch2/catch.hpp>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "core/util/utf8.hpp"

using namespace emco;

TEST_CASE("split keeps empty fields") {
  CHECK(split("a//b", '/') == std::vector<std::string>{"a", "", "b"});
  CHECK(split("", '/') == std::vector<std::string>{""});
}

TEST_CASE("concat joins its parts in order and sized once") {
  const std::string base = "clusters/p+c";
  const std::string joined = concat({base, "/context/", std::string_view("123"), "", "/app/a"});
  CHECK(joined == "clusters/p+c/context/123/app/a");
  CHECK(joined.capacity() >= joined.size());
  CHECK(concat({}).empty());
}

TEST_CASE("utf8 validation rejects malformed sequences") {
  CHECK(utf8::valid("plain ascii"));
  CHECK(utf8::valid("caf\xc3\xa9"));
  CHECK_FALSE(utf8::valid("\xff"));
  CHECK_FALSE(utf8::valid("\xc3"));          // truncated
  CHECK_FALSE(utf8::valid("\xc0\xaf"));      // overlong '/'
  CHECK_FALSE(utf8::valid("\xed\xa0\x80"));  // surrogate
}

TEST_CASE("closest_match suggests near names only") {
  std::vector<std::string> c{"placement", "project", "cluster"};
  CHECK(closest_match("placment", c) == "placement");
  CHECK(closest_match("zzzzzz", c).empty());
}

TEST_CASE("every error kind maps to a documented exit code") {
  CHECK(static_cast<int>(exit_code(ErrorKind::invalid)) == 3);
  CHECK(static_cast<int>(exit_code(ErrorKind::not_found)) == 4);
  CHECK(static_cast<int>(exit_code(ErrorKind::conflict)) == 5);
  CHECK(static_cast<int>(exit_code(ErrorKind::pending)) == 8);
  Error e(ErrorKind::invalid, "unknown field 'placment'", "did you mean 'placement'?");
  CHECK(e.with_context("dig.yaml:12").message() == "dig.yaml:12: unknown field 'placment'");
}
