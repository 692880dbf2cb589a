// Semver ranges (Masterminds semantics) and values.schema.json validation.
#include <catch2/catch.hpp>

#include "core/helm/schema.hpp"
#include "core/util/error.hpp"
#include "core/util/semver.hpp"

using namespace emco::helm;
using emco::semver::satisfies;
using emco::tmpl::List;
using emco::tmpl::Map;
using emco::tmpl::Value;

TEST_CASE("semver parsing and ranges as Helm uses them", "[helm][semver]") {
  auto parse_semver = [](const char* text) { return emco::semver::parse_version(text).has_value(); };
  auto semver_satisfies = [](const char* c, const char* v) { return satisfies(c, v); };
  CHECK(parse_semver("1.2.3"));
  CHECK(parse_semver("v1.2"));
  CHECK(parse_semver("1.2.3-rc.1+build"));
  CHECK_FALSE(parse_semver("1.2.3.4"));
  CHECK_FALSE(parse_semver("latest"));
  CHECK(semver_satisfies("2.x.x", "2.31.10"));
  CHECK_FALSE(semver_satisfies("2.x.x", "3.0.0"));
  CHECK(semver_satisfies("2.8.*", "2.8.9"));
  CHECK_FALSE(semver_satisfies("2.8.*", "2.9.0"));
  CHECK(semver_satisfies("0.1.0", "0.1.0"));
  CHECK(semver_satisfies(">=1.16.0-0", "v1.32.0"));
  CHECK(semver_satisfies(">= 1.19.0-0 < 2.0.0", "v1.32.0"));
  CHECK_FALSE(semver_satisfies("<1.20", "v1.32.0"));
  CHECK(semver_satisfies("^1.2.3", "1.9.0"));
  CHECK_FALSE(semver_satisfies("^0.2.3", "0.3.0"));
  CHECK(semver_satisfies("~1.2.3", "1.2.9"));
  CHECK_FALSE(semver_satisfies("~1.2.3", "1.3.0"));
  CHECK(semver_satisfies("<1.0 || >=1.30", "1.32.0"));
  CHECK(semver_satisfies("1.1 - 1.40", "1.32.0"));
  CHECK_FALSE(semver_satisfies(">=1.0.0", "1.5.0-beta"));  // prereleases need a prerelease constraint
  CHECK(semver_satisfies(">=1.0.0-0", "1.5.0-beta"));
  CHECK(semver_satisfies("", "1.0.0"));  // empty = any version
  CHECK(semver_satisfies("*", "3.1.4"));
  CHECK_FALSE(semver_satisfies("", "1.0.0-rc1"));
  CHECK_FALSE(semver_satisfies("junk", "1.0.0"));
}

TEST_CASE("values.schema.json validation reads like gojsonschema", "[helm][schema]") {
  const std::string schema = R"({
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["image"],
    "additionalProperties": false,
    "definitions": {"port": {"type": "integer", "minimum": 1, "maximum": 65535}},
    "properties": {
      "image": {"type": "object", "properties": {"tag": {"type": "string", "pattern": "^v[0-9]+$"}},
                "required": ["tag"]},
      "port": {"$ref": "#/definitions/port"},
      "mode": {"enum": ["a", "b"]},
      "list": {"type": "array", "items": {"type": "string"}, "minItems": 1},
      "either": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
      "replicas": {"type": "integer"}
    }
  })";
  CHECK(validate_values_schema(Value(Map{{"image", Value(Map{{"tag", "v1"}})}, {"port", 80.0},
                                         {"replicas", 3.0}, {"either", true}}),
                               schema)
            .empty());
  CHECK(validate_values_schema(Value(Map{}), schema) == "- (root): image is required\n");
  std::string problems = validate_values_schema(
      Value(Map{{"image", Value(Map{{"tag", 5.0}})}, {"port", 0.0}, {"mode", "c"}, {"extra", 1},
                {"list", Value(List{})}, {"either", 1.5}, {"replicas", 1.5}}),
      schema);
  CHECK_THAT(problems, Catch::Contains("- (root): Additional property extra is not allowed\n"));
  CHECK_THAT(problems, Catch::Contains("- image.tag: Invalid type. Expected: string, given: integer\n"));
  CHECK_THAT(problems, Catch::Contains("- port: Must be greater than or equal to 1\n"));
  CHECK_THAT(problems, Catch::Contains("- mode: mode must be one of the following: \"a\", \"b\"\n"));
  CHECK_THAT(problems, Catch::Contains("- list: Array must have at least 1 items\n"));
  CHECK_THAT(problems, Catch::Contains("- either: Must validate at least one schema (anyOf)\n"));
  CHECK_THAT(problems, Catch::Contains("- replicas: Invalid type. Expected: integer, given: number\n"));
  CHECK_THAT(validate_values_schema(Value(Map{{"image", Value(Map{{"tag", "x1"}})}}), schema),
             Catch::Contains("- image.tag: Does not match pattern '^v[0-9]+$'"));
  CHECK_THROWS_AS(validate_values_schema(Value(Map{}), "{not json"), emco::Error);
}
