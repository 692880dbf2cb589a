// Sprig's date functions with a pinned clock.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "core/util/clock.hpp"
#include "helpers.hpp"

using namespace emco::tmpl;
using namespace emco::tmpl::test;

namespace {
class FixedClock : public emco::Clock {
public:
  std::string now_rfc3339() override { return "2024-03-05T14:07:09.250Z"; }
  int64_t now_unix_ms() override { return 1709647629250; }  // 2024-03-05T14:07:09.250Z
};

std::string render_at(const std::string& text) {
  setenv("TZ", "UTC", 1);
  static FixedClock clock;
  Options o;
  o.clock = &clock;
  return render(text, Value(), o);
}
}  // namespace

TEST_CASE("time: now, date layouts and epochs", "[template][time]") {
  CHECK(render_at("{{ now | date \"2006-01-02 15:04:05\" }}") == "2024-03-05 14:07:09");
  CHECK(render_at("{{ now | date \"Jan 2, 2006 at 3:04pm (MST) Monday .000\" }}") == "Mar 5, 2024 at 2:07pm (UTC) Tuesday .250");
  CHECK(render_at("{{ now | htmlDate }} {{ now | unixEpoch }} {{ dateInZone \"2006-01-02T15:04:05Z07:00\" now \"UTC\" }}") ==
        "2024-03-05 1709647629 2024-03-05T14:07:09Z");
  CHECK(render_at("{{ date \"2006-01-02\" 0 }}") == "1970-01-01");
  CHECK(render_at("{{ now }}") == "2024-03-05 14:07:09.25 +0000 UTC");
  CHECK(render_at("{{ (now).Year }} {{ (now).Unix }}") == "2024 1709647629");
}

TEST_CASE("time: durations, modification and parsing", "[template][time]") {
  CHECK(render_at("{{ duration \"95\" }} {{ duration \"3600\" }} {{ duration \"0\" }}") == "1m35s 1h0m0s 0s");
  CHECK(render_at("{{ durationRound \"2h10m\" }} {{ durationRound \"400h\" }} {{ durationRound \"3s\" }}") == "2h 16d 3s");
  CHECK(render_at("{{ now | dateModify \"-1.5h\" | date \"15:04\" }} {{ now | dateModify \"bogus\" | date \"15:04\" }}") ==
        "12:37 14:07");
  CHECK(render_at("{{ toDate \"2006-01-02\" \"2017-12-31\" | date \"02/01/2006\" }}") == "31/12/2017");
  CHECK(render_at("{{ ago (toDate \"2006-01-02T15:04:05Z07:00\" \"2024-03-05T13:07:09Z\") }}") == "1h0m0s");
  CHECK(error_of("{{ mustToDate \"2006-01-02\" \"nope\" }}").find("error calling mustToDate: parsing time \"nope\"") !=
        std::string::npos);
}
