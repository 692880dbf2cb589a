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

TEST_CASE("values.schema.json is read as nlohmann::json reads it", "[helm][schema]") {
  // duplicate keys: the last wins; members are kept in key order (patternProperties' problems)
  CHECK(validate_values_schema(Value(Map{{"a", Value(1)}, {"b", "q"}, {"zed", Value(1)}}),
                               R"({"properties": {"a": {"enum": [1]}, "a": {"const": 2}},
                                   "patternProperties": {"^z": {"type": "string"}, "^b": {"type": "integer"}}})") ==
        "- a: a does not match: 2\n- b: Invalid type. Expected: integer, given: string\n"
        "- zed: Invalid type. Expected: string, given: integer\n");
  // escapes, surrogate pairs and numbers print as nlohmann dumps them
  const std::string enums = R"({"enum": ["\u00e9", "\ud83d\ude00", "a\"b", "x\/y", 1.50, -0, 1e-400,
                                          12345678901234567890, 123456789012345678901234,
                                          {"b": 1, "a": [true, null]}]})";
  CHECK(validate_values_schema(Value("é"), enums).empty());
  CHECK(validate_values_schema(Value(Map{{"k", Value(1.5)}}), R"({"properties": {"k": )" + enums + "}}").empty());
  CHECK(validate_values_schema(Value(Map{{"k", "z"}}), R"({"properties": {"k": )" + enums + "}}") ==
        "- k: k must be one of the following: \"é\", \"😀\", \"a\\\"b\", \"x/y\", 1.5, 0, 0.0, "
        "12345678901234567890, 1.2345678901234569e+23, {\"a\":[true,null],\"b\":1}\n");
  // JSON pointers: ~1 is '/', ~0 is '~', array indices without leading zeros
  const std::string refs = R"({"definitions": {"a/b": {"type": "string"}, "c~d": {"minimum": 3},
                                                "arr": [{"type": "null"}, {"maxLength": 1}]},
                               "properties": {"x": {"$ref": "#/definitions/a~1b"},
                                              "y": {"$ref": "#/definitions/c~0d"},
                                              "z": {"$ref": "#/definitions/arr/1"}}})";
  CHECK(validate_values_schema(Value(Map{{"x", Value(1)}, {"y", Value(1)}, {"z", "ab"}}), refs) ==
        "- x: Invalid type. Expected: string, given: integer\n- y: Must be greater than or equal to 3\n"
        "- z: String length must be less than or equal to 1\n");
  CHECK_THROWS_WITH(validate_values_schema(Value(Map{{"w", Value(1)}}),
                                           R"({"a": [{}, {}], "properties": {"w": {"$ref": "#/a/01"}}})"),
                    Catch::Contains("$ref '#/a/01' does not resolve"));
  CHECK(validate_values_schema(Value(Map{}), "\xEF\xBB\xBF{\"required\": [\"a\"]} \n").find("a is required") !=
        std::string::npos);
  // what nlohmann rejects, with its message
  for (const char* bad : {"{\"a\": 1e400}", "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"a\tb\"]", "[\"\xff\"]",
                          "[\"\xed\xa0\x80\"]", "[1,]", "{\"a\" 1}", "[01]", "[1.]", "[-]", "[.5]", "{} {}", "",
                          "[tru]", "[\"\\x\"]", "{'a': 1}"}) {
    INFO(bad);
    CHECK_THROWS_WITH(validate_values_schema(Value(Map{}), bad),
                      Catch::StartsWith("invalid values.schema.json: [json.exception."));
  }
}

TEST_CASE("values.schema.json strings, objects and keywords at every size", "[helm][schema]") {
  // A tab (refused), an escape (decoded), a non-ASCII letter and DEL (kept) at every offset of a
  // string, long enough to be read eight bytes at a time.
  for (std::size_t at = 0; at <= 20; ++at) {
    INFO(at);
    const std::string pad(at, 'x'), tail(20 - at, 'y');
    CHECK_THROWS_WITH(validate_values_schema(Value(Map{}), "{\"enum\": [\"" + pad + "\t" + tail + "\"]}"),
                      Catch::StartsWith("invalid values.schema.json: [json.exception."));
    CHECK(validate_values_schema(Value(pad + "\n" + tail), "{\"enum\": [\"" + pad + "\\n" + tail + "\"]}").empty());
    CHECK(validate_values_schema(Value(pad + "é" + tail), "{\"const\": \"" + pad + "é" + tail + "\"}").empty());
    CHECK(validate_values_schema(Value(pad + "\x7f" + tail), "{\"const\": \"" + pad + "\x7f" + tail + "\"}").empty());
    CHECK(validate_values_schema(Value(pad + "x" + tail), "{\"const\": \"" + pad + "\x7f" + tail + "\"}") ==
          "- (root): (root) does not match: \"" + pad + "\x7f" + tail + "\"\n");
  }
  // Objects of 1 to 40 members in reverse order, the first key given twice: sorted, the later
  // of the two kept, whatever the size.
  for (int n = 1; n <= 40; ++n) {
    INFO(n);
    std::string props = "{\"k00\": {\"type\": \"string\"}";
    for (int i = n - 1; i >= 0; --i) props += ", \"k" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "\": {}";
    props += ", \"k00\": {\"type\": \"integer\"}}";
    const std::string schema = R"({"properties": )" + props + "}";
    CHECK(validate_values_schema(Value(Map{{"k00", Value(1)}}), schema).empty());
    CHECK(validate_values_schema(Value(Map{{"k00", "s"}}), schema) ==
          "- k00: Invalid type. Expected: integer, given: string\n");
  }
  // Keywords are recognised by their exact names only.
  CHECK(validate_values_schema(Value(1), R"({"Type": "string", "types": "string", "typ": "string"})").empty());
  CHECK(validate_values_schema(Value(1), R"({"Type": "string", "type": "string"})") ==
        "- (root): Invalid type. Expected: string, given: integer\n");
  CHECK(validate_values_schema(Value(Map{{"a", Value(1)}}), R"({"additionalProperties": false})") ==
        "- (root): Additional property a is not allowed\n");
  CHECK(validate_values_schema(Value(Map{{"a", Value(1)}}), R"({"additionalproperties": false})").empty());
}
