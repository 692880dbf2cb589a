#include <catch2/catch.hpp>

#include <random>

#include <nlohmann/json.hpp>

#include "core/util/json_text.hpp"

using nlohmann::json;

namespace {

std::string indented(const std::string& text, int indent, int level = 0) {
  std::string out;
  emco::append_indented_json(out, text, indent, level);
  return out;
}

// A random JSON value with nesting, empty containers and awkward strings.
json random_value(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth > 3 ? 4 : 7);
  const char* strings[] = {"", "plain", "with \"quotes\"", "back\\slash", "brace { and [ , : }", "tab\there", "ünï€ode",
                           "\\\"", "line\nbreak"};
  switch (pick(rng)) {
    case 0: return nullptr;
    case 1: return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    case 2: return std::uniform_int_distribution<int>(-100000, 100000)(rng);
    case 3: return std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
    case 4: return strings[std::uniform_int_distribution<size_t>(0, std::size(strings) - 1)(rng)];
    case 5: case 6: {
      json o = json::object();
      int n = std::uniform_int_distribution<int>(0, 4)(rng);
      for (int i = 0; i < n; ++i)
        o[strings[std::uniform_int_distribution<size_t>(0, std::size(strings) - 1)(rng)] + std::to_string(i)] =
            random_value(rng, depth + 1);
      return o;
    }
    default: {
      json a = json::array();
      int n = std::uniform_int_distribution<int>(0, 4)(rng);
      for (int i = 0; i < n; ++i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
  }
}

}  // namespace

TEST_CASE("indented JSON text equals nlohmann's dump(indent) of the same value", "[json_text]") {
  std::mt19937 rng(20261122);
  for (int trial = 0; trial < 2000; ++trial) {
    json v = random_value(rng, 0);
    for (int indent : {2, 4}) {
      INFO(v.dump());
      REQUIRE(indented(v.dump(), indent) == v.dump(indent));
    }
  }
}

TEST_CASE("indented JSON text: fixed shapes", "[json_text]") {
  CHECK(indented("{}", 2) == "{}");
  CHECK(indented("[]", 2) == "[]");
  CHECK(indented("{\"a\":[]}", 2) == "{\n  \"a\": []\n}");
  CHECK(indented("[1,{\"b\":null}]", 2) == "[\n  1,\n  {\n    \"b\": null\n  }\n]");
  // Whitespace outside strings is dropped, inside strings kept.
  CHECK(indented("{ \"a b\" : [ 1 , 2 ] }", 2) == "{\n  \"a b\": [\n    1,\n    2\n  ]\n}");
  // A value nested at level 1 (an element of an outer array).
  CHECK(indented("{\"k\":1}", 2, 1) == "{\n    \"k\": 1\n  }");
}
