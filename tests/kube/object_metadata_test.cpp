// read_object_metadata (a SAX pass) against what parsing the body into a JSON
// value and reading the three fields gives, on crafted bodies and on many
// generated ones around the cases that differ: duplicate keys, fields of other
// types, "metadata" that is not an object, nesting, invalid JSON.

#include <catch2/catch.hpp>

#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "plugins/targets/kube/object_metadata.hpp"

using emco::kube::ObjectMetadata;
using emco::kube::read_object_metadata;
using json = nlohmann::json;

namespace {

// The reference: the whole value, then its fields (what the client did before).
ObjectMetadata from_parsed_value(const std::string& body) {
  ObjectMetadata out;
  json live = json::parse(body, nullptr, false);
  if (live.is_object() && live.contains("metadata") && live["metadata"].is_object()) {
    const json& m = live["metadata"];
    if (auto v = m.find("resourceVersion"); v != m.end() && v->is_string()) out.resource_version = v->get<std::string>();
    if (auto v = m.find("uid"); v != m.end() && v->is_string()) out.uid = v->get<std::string>();
    if (auto g = m.find("generation"); g != m.end() && g->is_number_integer()) out.generation = g->get<long long>();
  }
  return out;
}

// Returns whether the reference found any of the fields (the generator must reach them).
bool same(const std::string& body) {
  INFO(body);
  const ObjectMetadata want = from_parsed_value(body);
  const ObjectMetadata got = read_object_metadata(body);
  CHECK(got.resource_version == want.resource_version);
  CHECK(got.uid == want.uid);
  CHECK(got.generation == want.generation);
  return !want.resource_version.empty() || !want.uid.empty() || want.generation != 0;
}

// A random JSON text whose keys are mostly the ones that matter.
class Generator {
public:
  explicit Generator(unsigned seed) : m_rng(seed) {}
  std::string document() {
    std::string out;
    if (pick(8) == 0) value(out, 0);
    else object(out, 0);
    if (pick(20) == 0) out += pick(2) ? "}" : " x";  // trailing garbage
    if (pick(30) == 0 && !out.empty()) out.pop_back();  // truncated
    return out;
  }

private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(m_rng); }
  void value(std::string& out, int depth) {
    switch (depth > 3 ? pick(6) : pick(9)) {
      case 0: out += "null"; break;
      case 1: out += pick(2) ? "true" : "false"; break;
      case 2: out += std::to_string(static_cast<long long>(pick(2000)) - 1000); break;
      case 3: out += pick(2) ? "18446744073709551615" : "2.5"; break;
      case 4:
      case 5: out += "\"" + std::string(k_words[pick(std::size(k_words))]) + "\""; break;
      case 6:
      case 7: object(out, depth); break;
      default: array(out, depth); break;
    }
  }
  void object(std::string& out, int depth) {
    out += "{";
    const size_t n = pick(5);
    for (size_t i = 0; i < n; ++i) {
      if (i) out += ",";
      const std::string key = k_keys[pick(std::size(k_keys))];
      out += "\"" + key + "\":";
      // Mostly the shapes that carry the fields: an object under the top-level
      // "metadata", strings and integers in it.
      if (depth == 0 && key == "metadata" && pick(4) != 0) object(out, depth + 1);
      else if (depth == 1 && pick(2) == 0) scalar_field(out);
      else value(out, depth + 1);
    }
    out += "}";
  }
  void scalar_field(std::string& out) {
    if (pick(2)) out += "\"" + std::string(k_words[pick(std::size(k_words))]) + "\"";
    else out += std::to_string(static_cast<long long>(pick(100)) - 10);
  }
  void array(std::string& out, int depth) {
    out += "[";
    const size_t n = pick(4);
    for (size_t i = 0; i < n; ++i) {
      if (i) out += ",";
      value(out, depth + 1);
    }
    out += "]";
  }
  static constexpr const char* k_keys[] = {"metadata", "metadata", "resourceVersion", "uid", "generation", "spec", "name"};
  static constexpr const char* k_words[] = {"7", "abc", "metadata", "uid", "", "x\\u00e9y"};
  std::mt19937 m_rng;
};

}  // namespace

TEST_CASE("a write's answer: resourceVersion, uid and generation read as from the parsed object") {
  const std::string object = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n",)"
                             R"("uid":"5c1b","resourceVersion":"4711","generation":3,"managedFields":[{"manager":"emco",)"
                             R"("operation":"Apply","fieldsV1":{"f:data":{"f:k":{}}}}]},"data":{"k":"v"}})";
  const ObjectMetadata m = read_object_metadata(object);
  CHECK(m.resource_version == "4711");
  CHECK(m.uid == "5c1b");
  CHECK(m.generation == 3);
  same(object);

  for (const char* body : {
           "", "null", "[]", "5", "\"s\"", "{}", "{\"metadata\":null}", "{\"metadata\":[]}", "{\"metadata\":\"x\"}",
           R"({"metadata":{"uid":"a"},"metadata":{"resourceVersion":"2"}})",
           R"({"metadata":{"uid":"a"},"metadata":5})",
           R"({"metadata":{"uid":"a","uid":7}})",
           R"({"metadata":{"uid":"a","uid":{"x":"y"}}})",
           R"({"metadata":{"generation":4,"generation":"5"}})",
           R"({"metadata":{"generation":4.0}})",
           R"({"metadata":{"generation":18446744073709551615}})",
           R"({"metadata":{"generation":-2}})",
           R"({"spec":{"metadata":{"uid":"nested"}}})",
           R"({"metadata":{"labels":{"uid":"deeper"},"uid":"top"}})",
           R"([{"metadata":{"uid":"in an array"}}])",
           R"({"metadata":{"uid":"a"}} trailing)",
           R"({"metadata":{"uid":"a"})",
           R"({"metadata":{"uid":"\u00e9\ud83d\ude00"}})",
       })
    same(body);
}

TEST_CASE("a write's answer: generated bodies read as from the parsed object") {
  Generator g(20261128);
  int found = 0;
  for (int i = 0; i < 20000; ++i) found += same(g.document());
  CAPTURE(found);
  CHECK(found > 500);
}
