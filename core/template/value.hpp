#pragma once
// The template engine's value model: Go values as text/template and Sprig see them.
//
// A Value is one of: null (Go nil) | bool | integer (int64 storage; Go type int or int64) |
// float (float64) | string | list ([]interface {}) | map (map[string]interface {}, keys sorted,
// which is Go's iteration order in templates) | object (a Go value with fields and methods, e.g.
// Helm's .Files or .Capabilities, implemented by the embedder).
//
// Copying a Value is cheap: payloads are shared. Lists and strings are immutable once built.
// Maps have Go's *reference* semantics: every copy of a map Value points at the same map, and
// Sprig's `set`/`unset`/`merge` mutate it in place (visible through every copy), as in Go.
// Use deep_copy() when an independent map is required.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace emco::yaml {
class Document;
}

namespace emco::tmpl {

class Value;
class Object;

// A map's key order: bytes as unsigned values, as Go sorts map keys (std::string's own order).
// The first bytes are compared inline, where most keys differ: a memcmp call per step of a
// lookup was a tenth of executing templates.
struct KeyLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept {
    if (!a.empty() && !b.empty() && a[0] != b[0])
      return static_cast<unsigned char>(a[0]) < static_cast<unsigned char>(b[0]);
    return a < b;
  }
};

using List = std::vector<Value>;
using Map = std::map<std::string, Value, KeyLess>;

enum class Kind : std::uint8_t { null, boolean, integer, floating, string, list, map, object };

// Which Go integer type an integer Value has (printf %T, typeOf, kindIs, typeIs).
enum class IntType : std::uint8_t { int_, int64 };

class Value {
public:
  Value() = default;  // null
  Value(std::nullptr_t) {}
  Value(bool b) : m_kind(Kind::boolean), m_bool(b) {}
  // Any integer: Go type int (use Value::integer for int64).
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
  Value(T i) : m_kind(Kind::integer), m_int(static_cast<std::int64_t>(i)) {}
  Value(double f) : m_kind(Kind::floating), m_float(f) {}
  Value(std::string s);
  Value(const char* s) : Value(std::string(s)) {}
  Value(std::string_view s) : Value(std::string(s)) {}
  Value(List l);
  Value(Map m);
  Value(std::shared_ptr<const Object> o);  // nullptr gives null

  static Value integer(std::int64_t i, IntType t) {
    Value v(i);
    v.m_int_type = t;
    return v;
  }
  // A string Value of a string another owner keeps (`s` may point into a larger block whose
  // owner it shares, e.g. a parse's store of literals): no allocation of its own.
  static Value shared_string(std::shared_ptr<const std::string> s);

  // JSON numbers: integers -> int64, others -> float64.
  static Value from_json(const nlohmann::json& j);
  // Objects are converted through Object::data(); an object without data throws emco::Error.
  nlohmann::json to_json() const;

  Kind kind() const { return m_kind; }
  bool is_null() const { return m_kind == Kind::null; }
  bool is_bool() const { return m_kind == Kind::boolean; }
  bool is_int() const { return m_kind == Kind::integer; }
  bool is_float() const { return m_kind == Kind::floating; }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return m_kind == Kind::string; }
  bool is_list() const { return m_kind == Kind::list; }
  bool is_map() const { return m_kind == Kind::map; }
  bool is_object() const { return m_kind == Kind::object; }
  IntType int_type() const { return m_int_type; }

  // Accessors; calling the wrong one is a programming error (std::logic_error).
  bool as_bool() const;
  std::int64_t as_int() const;
  double as_float() const;            // integer or float
  const std::string& as_string() const;
  const List& as_list() const;
  const Map& as_map() const;
  Map& mutable_map() const;           // the shared map itself (Go reference semantics)
  const std::shared_ptr<const Object>& as_object() const;

  // Map lookup; nullptr when this is not a map or the key is absent.
  const Value* find(std::string_view key) const;

  // Go's notion of truth for if/with/and/or/not: false, 0, nil, "" and empty list/map are false.
  bool truthy() const;
  // Go type name as %T prints it: "string", "int", "int64", "float64", "bool",
  // "[]interface {}", "map[string]interface {}", "<nil>", or Object::type_name().
  std::string go_type() const;
  // reflect.Kind name as Sprig's kindOf prints it: "string", "int", "int64", "float64", "bool",
  // "slice", "map", "invalid", or "ptr"/"struct" for objects without data.
  std::string go_kind() const;

  // An independent copy of maps and lists, recursively (Sprig's deepCopy).
  Value deep_copy() const;

  // Go's reflect.DeepEqual on these values (int and int64 differ; 1 and 1.0 differ).
  friend bool deep_equal(const Value& a, const Value& b);

private:
  Kind m_kind = Kind::null;
  IntType m_int_type = IntType::int_;
  union {
    bool m_bool;
    std::int64_t m_int = 0;
    double m_float;
  };
  std::shared_ptr<void> m_ptr;  // std::string | List | Map | shared_ptr<const Object> (by kind)
};

bool deep_equal(const Value& a, const Value& b);

// A Go value with fields and methods that is not plain data (Helm's .Files,
// .Capabilities.APIVersions, ...). Implemented by the embedder.
class Object {
public:
  virtual ~Object();
  virtual std::string type_name() const = 0;                         // for %T and error messages
  virtual std::optional<Value> field(std::string_view name) const;   // .Name; nullopt = no such field
  virtual bool has_method(std::string_view name) const;              // default: false
  // Called for `.Name arg...`; throw emco::Error for failures (reported as "error calling NAME: ...").
  virtual Value call_method(std::string_view name, const std::vector<Value>& args) const;
  // The plain data this object stands for, if any (e.g. a list for a VersionSet, a map for
  // Files): used by range, len, index, printing, toYaml/toJson. Default: nullopt.
  virtual std::optional<Value> data() const;
  // Go's fmt.Stringer: what printing the object shows (a time.Time prints its date); default nullopt.
  virtual std::optional<std::string> go_string() const;
};

// ---- YAML -----------------------------------------------------------------------------------

enum class YamlMode {
  helm,     // sigs.k8s.io/yaml (goyaml.v2 YAML 1.1 then JSON): every number float64, yes/no/on/off
            // bools, non-string keys become strings. Chart values, fromYaml.
  go_yaml,  // gopkg.in/yaml.v3-like: ints Go int, floats float64, YAML 1.2 bools (true/false).
};

// Parses one YAML document (an empty document gives null). Errors: emco::Error(invalid)
// "SOURCE:LINE:COL: message". Multiple documents: only the first is returned.
Value parse_yaml(std::string_view text, YamlMode mode, const std::string& source_name_for_errors);
// What a Go string field holds after sigs.k8s.io/yaml (Helm's Chart.yaml loader) decodes the
// plain (unquoted, untagged) scalar `text`: YAML 1.1 resolution, then "true"/"false" for
// booleans, decimal integers, strconv.FormatFloat(f, 'g', -1, 32) for floats ("+Inf"), "" for
// null, other text unchanged. So `appVersion: 1.10` reads as "1.1", as helm shows it.
std::string yaml_plain_as_go_string(std::string_view text);
// The same for a key of a map[string]string: null reads "null", infinities ".inf"/"-.inf".
std::string yaml_plain_as_go_key(std::string_view text);
// Whether YAML 1.1 (goyaml.v2) resolves the plain scalar `text` to a string: not null, a
// boolean, a number or a timestamp.
bool yaml_plain_is_string(std::string_view text);
// Every document of a multi-document stream.
std::vector<Value> parse_yaml_documents(std::string_view text, YamlMode mode,
                                        const std::string& source_name_for_errors);

// What sigs.k8s.io/yaml knows of the Go type it unmarshals into (its "JSON target"), as far as
// it changes the JSON it makes: scalars bound for a string become Go strings (1 -> "1", 1.5 ->
// "1.5", true -> "true", .inf -> "+Inf"; null stays null), struct fields are found by JSON name
// as encoding/json finds them (json_name_matches), a map's values all have its element type.
struct GoTarget {
  enum class Type : std::uint8_t { any, string, structure, map };
  Type type = Type::any;
  std::vector<std::pair<std::string, const GoTarget*>> fields;  // structure: JSON field names
  const GoTarget* elem = nullptr;                                // map: the element type
};

// sigs.k8s.io/yaml's Unmarshal (what Helm reads manifests, values and fromYaml with) up to the
// JSON it hands to encoding/json, over one parsed document: goyaml.v2 decoding (YAML 1.1, merges,
// explicit tags), the conversion to JSON-able values guided by `target`, json.Marshal. The result
// has YamlMode::helm typing. Errors: emco::Error(invalid) with Helm's own text, in the order Helm
// meets them (goyaml.v2's first in document order, then the conversion's, then json.Marshal's in
// sorted key order), e.g. "error converting YAML to JSON: yaml: invalid map key: []interface
// {}{\"a\"}", "... unsupported map key of type: %!s(<nil>), key: <nil>, value: \"x\"", "...
// json: unsupported value: +Inf"; yaml::ParseError for excessive aliasing. %#v of a map with keys
// of several types orders the types as helm 3.17.3's binary does (nil, string, uint64, int,
// float64, bool): Go orders them by the address of their type descriptors.
Value yaml_to_json_value(const yaml::Document& doc, const GoTarget* target = nullptr);

// Whether the object key `key` names the field `field` (ASCII letters) for encoding/json and
// sigs.k8s.io/yaml: the exact name or a case-insensitive match, where the Kelvin sign folds to k
// and the long s to s (U+0130 and U+0131 do not fold to i: helm 3.17.3 does not match them).
bool json_name_matches(std::string_view key, std::string_view field);

// Byte-identical to Helm's toYaml (sigs.k8s.io/yaml -> goyaml.v2 emitter), including the trailing
// newline ("{}\n" for an empty map, "null\n" for null). Objects are written through data().
std::string to_yaml(const Value& v);

// encoding/json as Go's json.Marshal writes it (Sprig's toJson): compact, keys sorted, HTML
// characters <, >, & escaped as \u003c etc.
std::string to_json_text(const Value& v);

}  // namespace emco::tmpl
