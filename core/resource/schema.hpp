#pragma once
// Spec schemas: the shape of a resource's `spec`, used to validate and to
// canonicalise documents.
//
// Matching follows upstream EMCO (Go encoding/json): object field names match
// case-insensitively and are rewritten to the schema's spelling; map keys
// (kv pairs, quotas, overrideValues[].values) are kept verbatim. Unlike
// upstream, unknown fields are errors (with a "did you mean" hint) except the
// few that upstream's own examples send and the server ignores, which a schema
// lists as `ignored`.

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace emco::resource {

enum class FieldType { string, boolean, integer, number, object, array, map, any };

struct Field;

// A schema node. Built with the helpers below; immutable after construction.
struct Schema {
  FieldType type = FieldType::any;
  std::vector<Field> fields;             // object: known fields
  std::vector<std::string> ignored;      // object: accepted and dropped (upstream compatibility)
  std::shared_ptr<Schema> element;       // array element / map value
  std::vector<std::string> enum_values;  // string: allowed values (case-sensitive)
  bool enum_case_insensitive = false;
  size_t max_length = 0;                 // string: 0 = unlimited
  bool name_rule = false;                // string: must be a valid EMCO name
  long long min = 0, max = 0;            // integer: range when min < max
};

struct Field {
  std::string name;
  Schema schema;
  bool required = false;
};

// Builders, e.g. obj({req("app", str()), opt("wait", integer())}).
Schema str(size_t max_length = 0);
Schema name_str();
Schema one_of(std::vector<std::string> values, bool case_insensitive = false);
Schema boolean();
Schema integer(long long min = 0, long long max = 0);
Schema number();
Schema any();
Schema obj(std::vector<Field> fields, std::vector<std::string> ignored = {});
Schema array(Schema element);
Schema map_of(Schema value);
Field req(std::string name, Schema s);
Field opt(std::string name, Schema s);

// One validation failure: `path` is a JSON-pointer-like dotted path from the
// document root ("spec.intent.allOf[0].cluster"), used to find the YAML line.
struct Violation {
  std::string path;
  std::string message;
  std::string hint;
};

// Validates `value` against `schema` and rewrites field names to the
// schema's spelling. Returns the first violation, or nothing on success.
// `path` is the dotted path of `value` in the document.
std::vector<Violation> validate_and_canonicalise(nlohmann::json& value, const Schema& schema, const std::string& path);

// EMCO's name rule: ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$, at most 63
// characters (Kubernetes label-value validation, as upstream's code applies).
bool is_valid_name(const std::string& name);
std::string name_rule_text();

}  // namespace emco::resource
