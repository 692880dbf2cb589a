#include <catch2/catch.hpp>

#include "core/plan/unified_diff.hpp"

using emco::plan::unified_diff;

TEST_CASE("unified diff hunks", "[plan][diff]") {
  CHECK(unified_diff("a\nb\n", "a\nb\n").empty());
  CHECK(unified_diff("a\nb\nc\n", "a\nB\nc\n") == "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  CHECK(unified_diff("", "x\n") == "@@ -0,0 +1 @@\n+x\n");
  CHECK(unified_diff("x\n", "") == "@@ -1 +0,0 @@\n-x\n");
  CHECK(unified_diff("a\n", "a") == "@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n");
  // Two changes far apart give two hunks with three lines of context.
  std::string a, b;
  for (int i = 0; i < 20; ++i) {
    a += std::to_string(i) + "\n";
    b += (i == 2 || i == 17 ? "x" : std::to_string(i)) + "\n";
  }
  CHECK(unified_diff(a, b) == "@@ -1,6 +1,6 @@\n 0\n 1\n-2\n+x\n 3\n 4\n 5\n"
                              "@@ -15,6 +15,6 @@\n 14\n 15\n 16\n-17\n+x\n 18\n 19\n");
}
