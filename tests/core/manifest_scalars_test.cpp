// Plain scalars of batch files resolve as Go's YAML decoder (what emcoctl
// uses) resolves them: a number only when Go's strconv parses it without an
// error, else a string.

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/manifest/manifest.hpp"

using namespace emco;

namespace {

nlohmann::json spec_value(const std::string& scalar) {
  const std::string text =
      "version: emco/v2\nresourceContext:\n  anchor: projects\nmetadata:\n  name: p1\nspec:\n  v: " + scalar + "\n";
  auto file = manifest::parse_text(text, "scalars.yaml", ".", {});
  REQUIRE(file.documents.size() == 1);
  return (*file.documents[0].body)["spec"]["v"];
}

}  // namespace

TEST_CASE("batch scalars: numbers past the range stay strings, as Go's decoder keeps them", "[manifest]") {
  // strconv.ParseFloat("9e999") is +Inf with ErrRange: yaml gives the string.
  CHECK(spec_value("9e999") == nlohmann::json("9e999"));
  CHECK(spec_value("-1.5e400") == nlohmann::json("-1.5e400"));
  // Below the range ParseFloat rounds without an error: a float.
  auto tiny = spec_value("1e-999");
  REQUIRE(tiny.is_number_float());
  CHECK(tiny.get<double>() == 0.0);
  // Integers past int64 were strings already; ordinary numbers stay numbers.
  CHECK(spec_value("99999999999999999999") == nlohmann::json("99999999999999999999"));
  CHECK(spec_value("1.5e3") == nlohmann::json(1500.0));
  CHECK(spec_value("42") == nlohmann::json(42));
}
