// rfc3339_ms: the UTC stamp of every recorded state and action. Expected values from
// `date -u -d @SECONDS +%Y-%m-%dT%H:%M:%S` (GNU date), milliseconds appended.
#include <catch2/catch.hpp>

#include "core/util/clock.hpp"

using namespace emco;

TEST_CASE("rfc3339_ms writes UTC with milliseconds, before 1970 and past year 9999 too", "[clock]") {
  struct Case {
    int64_t unix_ms;
    const char* text;
  };
  const Case cases[] = {
      {0, "1970-01-01T00:00:00.000Z"},
      {1764336000123, "2025-11-28T13:20:00.123Z"},
      {1764336000007, "2025-11-28T13:20:00.007Z"},
      {951782400000, "2000-02-29T00:00:00.000Z"},  // a leap day of a century divisible by 400
      {-1, "1969-12-31T23:59:59.999Z"},            // floor, not truncation, before the epoch
      {253402300799999, "9999-12-31T23:59:59.999Z"},
      {253402300800000, "10000-01-01T00:00:00.000Z"},
  };
  for (const auto& c : cases) {
    INFO(c.unix_ms);
    CHECK(rfc3339_ms(c.unix_ms) == c.text);
  }
}
