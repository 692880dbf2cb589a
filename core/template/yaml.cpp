// YAML -> Value (core/yaml's tree, with goyaml.v2 / yaml.v3 typing rules) and Value -> YAML as Helm's
// toYaml writes it (sigs.k8s.io/yaml: JSON round trip, then the goyaml.v2 emitter).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/template/format.hpp"
#include "core/template/value.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/utf8.hpp"
#include "core/yaml/yaml.hpp"

namespace emco::tmpl {

namespace {

// ---- goyaml.v2 / yaml.v3 plain scalar resolution ----

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_base60_float(std::string_view s) {
  // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i >= s.size() || !is_digit(s[i])) return false;
  ++i;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '_')) ++i;
  int groups = 0;
  while (i < s.size() && s[i] == ':') {
    ++i;
    size_t start = i;
    if (i < s.size() && s[i] >= '0' && s[i] <= '5' && i + 1 < s.size() && is_digit(s[i + 1])) i += 2;
    else if (i < s.size() && is_digit(s[i])) i += 1;
    if (i == start) return false;
    ++groups;
  }
  if (groups == 0) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && (is_digit(s[i]) || s[i] == '_')) ++i;
  }
  return i == s.size();
}

bool yaml_style_float(std::string_view s) {
  // ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t st = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == st) return false;
  } else {
    size_t st = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == st) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && is_digit(s[i])) ++i;
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t st = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == st) return false;
  }
  return i == s.size();
}

// strconv.ParseInt/ParseUint(s, 0, 64) on an underscore-free string
enum class IntParse { none, int64, uint64 };
IntParse parse_int_base0(const std::string& s, std::int64_t& i, std::uint64_t& u) {
  if (s.empty()) return IntParse::none;
  size_t p = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    p = 1;
  }
  int base = 10;
  if (s.size() > p + 1 && s[p] == '0') {
    char c = s[p + 1];
    if (c == 'x' || c == 'X') base = 16, p += 2;
    else if (c == 'b' || c == 'B') base = 2, p += 2;
    else if (c == 'o' || c == 'O') base = 8, p += 2;
    else base = 8, p += 1;
  }
  if (p >= s.size()) {
    if (base == 8 && s.size() >= 1 && s.back() == '0') {
      i = 0;
      return IntParse::int64;
    }
    return IntParse::none;
  }
  if (s[p] == '+' || s[p] == '-') return IntParse::none;
  for (size_t k = p; k < s.size(); ++k) {
    char c = s[k];
    int d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : 99;
    if (d >= base) return IntParse::none;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str() + p, &end, base);
  if (errno != 0 || *end) return IntParse::none;
  if (neg) {
    if (v > 9223372036854775808ULL) return IntParse::none;
    i = static_cast<std::int64_t>(0 - v);
    return IntParse::int64;
  }
  if (v <= 9223372036854775807ULL) {
    i = static_cast<std::int64_t>(v);
    return IntParse::int64;
  }
  u = v;
  return IntParse::uint64;
}

bool looks_like_timestamp(std::string_view s) {
  // goyaml.v2 parseTimestamp: YYYY-M-D with optional time part
  size_t i = 0;
  while (i < s.size() && is_digit(s[i])) ++i;
  if (i != 4 || i == s.size() || s[i] != '-') return false;
  auto digits = [&](size_t& p, size_t min, size_t max) {
    size_t st = p;
    while (p < s.size() && is_digit(s[p]) && p - st < max) ++p;
    return p - st >= min;
  };
  size_t p = 5;
  if (!digits(p, 1, 2) || p >= s.size() || s[p] != '-') return false;
  ++p;
  if (!digits(p, 1, 2)) return false;
  if (p == s.size()) return true;
  if (s[p] != 'T' && s[p] != 't' && s[p] != ' ') return false;
  ++p;
  if (!digits(p, 1, 2) || p >= s.size() || s[p] != ':') return false;
  ++p;
  if (!digits(p, 1, 2) || p >= s.size() || s[p] != ':') return false;
  ++p;
  if (!digits(p, 1, 2)) return false;
  if (p < s.size() && s[p] == '.') {
    ++p;
    if (!digits(p, 1, 9)) return false;
  }
  if (p == s.size()) return true;
  if (s[p] == 'Z') return p + 1 == s.size();
  if (s[p] == '+' || s[p] == '-') {
    ++p;
    if (!digits(p, 2, 2) || p >= s.size() || s[p] != ':') return false;
    ++p;
    return digits(p, 2, 2) && p == s.size();
  }
  return false;
}

enum class Tag { null, boolean, integer, uinteger, floating, timestamp, str };

struct Resolved {
  Tag tag = Tag::str;
  bool b = false;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double f = 0;
};

// goyaml.v2 resolve("", s) for a plain scalar
// Whether a plain scalar can only be a string: longer than every literal the resolvers compare
// (at most 5 characters) and not starting like a number. Most scalars of a values file are; the
// comparisons showed in profiles.
bool plainly_string(const std::string& s) {
  if (s.size() <= 5) return false;
  char c = s[0];
  return !(c == '+' || c == '-' || c == '.' || is_digit(c));
}

Resolved resolve_v2(const std::string& s) {
  Resolved r;
  if (plainly_string(s)) return r;
  // Only a word starting with one of these is anything but a string (most short keys and
  // values are not, and were compared with each word below).
  if (!s.empty()) {
    switch (s[0]) {
      case '~': case 'n': case 'N': case 'y': case 'Y': case 'o': case 'O': case 't': case 'T': case 'f': case 'F':
      case '.': case '+': case '-':
        break;
      default:
        if (!is_digit(s[0])) return r;
    }
  }
  // string_views, so that each comparison checks the length before the bytes (comparing the
  // std::string with each word as a C string took a strlen and a memcmp call per word, for
  // every short scalar of every values file)
  using namespace std::string_view_literals;
  static constexpr std::string_view nulls[] = {""sv, "~"sv, "null"sv, "Null"sv, "NULL"sv};
  static constexpr std::string_view trues[] = {"y"sv, "Y"sv, "yes"sv, "Yes"sv, "YES"sv, "on"sv, "On"sv, "ON"sv,
                                               "true"sv, "True"sv, "TRUE"sv};
  static constexpr std::string_view falses[] = {"n"sv, "N"sv, "no"sv, "No"sv, "NO"sv, "off"sv, "Off"sv, "OFF"sv,
                                                "false"sv, "False"sv, "FALSE"sv};
  const std::string_view word = s;
  for (auto n : nulls)
    if (word == n) return Resolved{Tag::null};
  for (auto t : trues)
    if (word == t) {
      r.tag = Tag::boolean;
      r.b = true;
      return r;
    }
  for (auto t : falses)
    if (word == t) {
      r.tag = Tag::boolean;
      return r;
    }
  if (word == ".nan"sv || word == ".NaN"sv || word == ".NAN"sv) return Resolved{Tag::floating, false, 0, 0, std::nan("")};
  if (word == ".inf"sv || word == ".Inf"sv || word == ".INF"sv || word == "+.inf"sv || word == "+.Inf"sv || word == "+.INF"sv)
    return Resolved{Tag::floating, false, 0, 0, INFINITY};
  if (word == "-.inf"sv || word == "-.Inf"sv || word == "-.INF"sv) return Resolved{Tag::floating, false, 0, 0, -INFINITY};
  char c = s[0];
  if (c == '.') {
    char* end = nullptr;
    double f = std::strtod(s.c_str(), &end);
    if (*end == '\0' && yaml_style_float(s)) return Resolved{Tag::floating, false, 0, 0, f};
    return r;
  }
  if (c == '+' || c == '-' || is_digit(c)) {
    if (looks_like_timestamp(s)) return Resolved{Tag::timestamp};
    std::string plain;
    for (char ch : s)
      if (ch != '_') plain.push_back(ch);
    std::int64_t i = 0;
    std::uint64_t u = 0;
    switch (parse_int_base0(plain, i, u)) {
      case IntParse::int64: return Resolved{Tag::integer, false, i, 0, 0};
      case IntParse::uint64: return Resolved{Tag::uinteger, false, 0, u, 0};
      default: break;
    }
    if (yaml_style_float(plain)) {
      char* end = nullptr;
      double f = std::strtod(plain.c_str(), &end);
      if (*end == '\0') return Resolved{Tag::floating, false, 0, 0, f};
    }
    if (plain.starts_with("0b") || plain.starts_with("-0b")) {
      bool neg = plain[0] == '-';
      std::string digits = plain.substr(neg ? 3 : 2);
      if (!digits.empty() && digits.find_first_not_of("01") == std::string::npos && digits.size() <= 63) {
        std::int64_t v = static_cast<std::int64_t>(std::strtoull(digits.c_str(), nullptr, 2));
        return Resolved{Tag::integer, false, neg ? -v : v, 0, 0};
      }
    }
  }
  return r;
}

// yaml.v3 resolve for a plain scalar (YAML 1.2 core schema)
Resolved resolve_v3(const std::string& s) {
  Resolved r;
  if (plainly_string(s)) return r;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Resolved{Tag::null};
  if (s == "true" || s == "True" || s == "TRUE") return Resolved{Tag::boolean, true};
  if (s == "false" || s == "False" || s == "FALSE") return Resolved{Tag::boolean, false};
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return Resolved{Tag::floating, false, 0, 0, std::nan("")};
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF")
    return Resolved{Tag::floating, false, 0, 0, INFINITY};
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") return Resolved{Tag::floating, false, 0, 0, -INFINITY};
  char c = s[0];
  if (c == '+' || c == '-' || c == '.' || is_digit(c)) {
    std::string plain;
    for (char ch : s)
      if (ch != '_') plain.push_back(ch);
    std::int64_t i = 0;
    std::uint64_t u = 0;
    if (c != '.') {
      IntParse p = parse_int_base0(plain, i, u);
      // yaml.v3 reads "0777"-style numbers as decimal-looking ints only via 0o; plain leading
      // zeros are parsed by ParseInt(base 0) as octal, which v3 also does.
      if (p == IntParse::int64) return Resolved{Tag::integer, false, i, 0, 0};
      if (p == IntParse::uint64) return Resolved{Tag::uinteger, false, 0, u, 0};
    }
    if (yaml_style_float(plain)) {
      char* end = nullptr;
      double f = std::strtod(plain.c_str(), &end);
      if (*end == '\0') return Resolved{Tag::floating, false, 0, 0, f};
    }
    if (looks_like_timestamp(s)) return Resolved{Tag::timestamp};
  }
  return r;
}

std::string float_key(double f) {
  // strconv.FormatFloat(f, 'g', -1, 32) as sigs.k8s.io/yaml does for float keys
  if (std::isnan(f)) return ".nan";
  if (std::isinf(f)) return f < 0 ? "-.inf" : ".inf";
  return format_float_g(f, 32);
}

// A resolved plain scalar as sigs.k8s.io/yaml hands it to a Go string (`as_key`: a map key).
std::string go_string_of(const Resolved& r, std::string_view text, bool as_key) {
  switch (r.tag) {
    case Tag::null: return as_key ? "null" : "";
    case Tag::boolean: return r.b ? "true" : "false";
    case Tag::integer: return std::to_string(r.i);
    case Tag::uinteger: return std::to_string(r.u);
    case Tag::floating: return as_key ? float_key(r.f) : format_float_g(r.f, 32);
    case Tag::timestamp:
    case Tag::str: break;
  }
  return std::string(text);
}

constexpr std::string_view k_tag_prefix = "tag:yaml.org,2002:";

// Go's shortTag: "tag:yaml.org,2002:int" -> "!!int".
std::string short_tag(std::string_view tag) {
  if (tag.starts_with(k_tag_prefix)) return "!!" + std::string(tag.substr(k_tag_prefix.size()));
  return std::string(tag);
}

std::string short_tag(Tag t) {
  switch (t) {
    case Tag::null: return "!!null";
    case Tag::boolean: return "!!bool";
    case Tag::integer:
    case Tag::uinteger: return "!!int";
    case Tag::floating: return "!!float";
    case Tag::timestamp: return "!!timestamp";
    case Tag::str: break;
  }
  return "!!str";
}

// The explicit tags goyaml.v2 (sigs.k8s.io's copy) resolves, so that the text must fit them.
bool resolvable_tag(std::string_view tag) {
  if (!tag.starts_with(k_tag_prefix)) return false;
  std::string_view t = tag.substr(k_tag_prefix.size());
  return t == "str" || t == "bool" || t == "int" || t == "float" || t == "timestamp" || t == "null";
}

// A string as it comes back from sigs.k8s.io/yaml, which goes through encoding/json: json.Marshal
// writes each byte that starts no valid UTF-8 sequence as U+FFFD.
std::string json_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    // ASCII runs are copied at once (decoding each character showed in toYaml's profile).
    size_t j = i;
    while (j < s.size() && static_cast<unsigned char>(s[j]) < 0x80) ++j;
    if (j > i) {
      out.append(s, i, j - i);
      i = j;
      continue;
    }
    char32_t r;
    size_t w = utf8::decode(s, i, r);
    if (w == 1 && r == utf8::k_replacement)
      utf8::append(out, r);
    else
      out.append(s, i, w);
    i += w;
  }
  return out;
}

// The rank of a Go dynamic type when fmt sorts the keys of a map[interface{}]interface{}: nil
// first, then by the address of the type descriptor, which is the binary's choice; this is the
// order helm 3.17.3 prints (string, uint64, int, float64, bool).
int go_type_rank(Tag t) {
  switch (t) {
    case Tag::null: return 0;
    case Tag::timestamp:  // goyaml.v2 hands timestamps to an interface{} as their text
    case Tag::str: return 1;
    case Tag::uinteger: return 2;
    case Tag::integer: return 3;
    case Tag::floating: return 4;
    case Tag::boolean: return 5;
  }
  return 1;
}

class Converter {
public:
  Converter(const yaml::Document& doc, YamlMode mode, const std::string& source)
      : m_doc(doc), m_mode(mode), m_source(source), m_budget(doc) {}

  // The document's value. In helm mode the conversion's and json.Marshal's errors, found while
  // converting, are raised only once goyaml.v2 would have decoded the whole document.
  Value document(const GoTarget* target) {
    Value v = convert(m_doc.root(), 0, false, target);
    if (m_nil_keys) fail_nil_key(v);
    if (m_non_finite) fail_non_finite(v);
    return v;
  }

private:
  const yaml::Document& m_doc;
  YamlMode m_mode;
  const std::string& m_source;
  yaml::AliasBudget m_budget;
  bool m_nil_keys = false;         // a nil key was kept under k_nil_key (helm mode)
  bool m_non_finite = false;       // an .inf or .nan was kept (helm mode)

  Value convert(yaml::NodeId id, int depth, bool via_alias, const GoTarget* target) {
    if (depth > 10000) fail_at(id, "document nested too deeply");
    if (m_doc.node(id).type == yaml::NodeType::alias) {
      id = m_doc.target(id);
      via_alias = true;
    }
    if (via_alias) m_budget.charge();
    const yaml::Node& n = m_doc.node(id);
    switch (n.type) {
      case yaml::NodeType::scalar: return scalar(id, target);
      case yaml::NodeType::sequence: {
        List l;
        l.reserve(m_doc.size(id));
        for (std::size_t i = 0; i < m_doc.size(id); ++i)
          l.push_back(convert(m_doc.item(id, i), depth + 1, via_alias, nullptr));
        return Value(std::move(l));
      }
      case yaml::NodeType::mapping: {
        Map m;
        for (std::size_t i = 0; i < m_doc.size(id); ++i) {
          yaml::NodeId k = m_doc.key(id, i);
          if (is_merge_key(k)) {
            merge_into(m, m_doc.value(id, i), depth, via_alias, target);
            continue;
          }
          std::string key = key_string(k, via_alias);
          const GoTarget* value_target = field_target(target, key);
          Value v = convert(m_doc.value(id, i), depth + 1, via_alias, value_target);
          if (key == k_nil_key) {
            m_nil_keys = true;
            v = Value("error converting YAML to JSON: unsupported map key of type: %!s(<nil>), key: <nil>, value: " +
                      go_syntax(m_doc.value(id, i), true));
          }
          m[std::move(key)] = std::move(v);
        }
        return Value(std::move(m));
      }
      case yaml::NodeType::alias: break;  // targets are never aliases
    }
    return Value();
  }

  [[noreturn]] void fail_at(yaml::NodeId id, const std::string& msg) {
    if (m_mode == YamlMode::helm) throw Error(ErrorKind::invalid, msg);  // Helm names no position
    const yaml::Node& n = m_doc.node(id);
    throw Error(ErrorKind::invalid,
                m_source + ":" + std::to_string(n.line) + ":" + std::to_string(n.column) + ": " + msg);
  }

  [[noreturn]] void fail_goyaml(const std::string& problem) {
    throw Error(ErrorKind::invalid, "error converting YAML to JSON: yaml: " + problem);
  }

  // sigs.k8s.io/yaml refuses a nil key, but only one goyaml.v2 kept: a later equal key or a
  // merge may replace it, or the map holding it may be replaced. So nil keys are kept in the
  // maps under k_nil_key (not UTF-8, so no YAML key reads so) with the error as their value,
  // and the first that survives, in key order, is the error (sigs.k8s.io/yaml walks maps in Go's
  // random order).
  static constexpr std::string_view k_nil_key = "\xff\xfenil";

  void fail_nil_key(const Value& v) {
    if (v.is_list())
      for (const auto& e : v.as_list()) fail_nil_key(e);
    if (!v.is_map()) return;
    if (const Value* error = v.find(k_nil_key)) throw Error(ErrorKind::invalid, error->as_string());
    for (const auto& [k, e] : v.as_map()) fail_nil_key(e);
  }

  // json.Marshal's refusal of the first +Inf, -Inf or NaN in key order.
  void fail_non_finite(const Value& v) {
    if (v.is_float() && !std::isfinite(v.as_float()))
      throw Error(ErrorKind::invalid, "error converting YAML to JSON: json: unsupported value: " + format_float_g(v.as_float()));
    if (v.is_list())
      for (const auto& e : v.as_list()) fail_non_finite(e);
    if (v.is_map())
      for (const auto& [k, e] : v.as_map()) fail_non_finite(e);
  }

  // sigs.k8s.io/yaml's target for the value of `key`.
  static const GoTarget* field_target(const GoTarget* target, std::string_view key) {
    if (!target) return nullptr;
    if (target->type == GoTarget::Type::map) return target->elem;
    if (target->type != GoTarget::Type::structure) return nullptr;
    for (const auto& [name, t] : target->fields)
      if (json_name_matches(key, name)) return t;
    return nullptr;
  }

  bool is_merge_key(yaml::NodeId k) const {
    const yaml::Node& n = m_doc.node(k);
    if (n.type != yaml::NodeType::scalar || m_doc.scalar(k) != "<<") return false;
    return m_doc.is_plain(k) || m_doc.tag(k) == "tag:yaml.org,2002:merge";
  }

  // goyaml.v2's merge: a mapping (or an alias of one), or a sequence of those, where earlier maps
  // win (so they are applied last). Each source is checked just before it is applied, as
  // goyaml.v2 does.
  template <class Apply>
  void for_each_merge_source(yaml::NodeId v, Apply apply) {
    auto want_map = [this] { fail_goyaml("map merge requires map or sequence of maps as the value"); };
    yaml::NodeId t = m_doc.target(v);
    if (m_doc.node(t).type == yaml::NodeType::mapping) {
      apply(v);
    } else if (m_doc.node(t).type == yaml::NodeType::sequence) {
      for (std::size_t i = m_doc.size(t); i-- > 0;) {
        yaml::NodeId item = m_doc.item(t, i);
        if (m_doc.node(m_doc.target(item)).type != yaml::NodeType::mapping) want_map();
        apply(item);
      }
    } else {
      want_map();
    }
  }

  // Merged keys overwrite what the mapping held so far (goyaml.v2 decodes them into the same map).
  void merge_into(Map& m, yaml::NodeId v, int depth, bool via_alias, const GoTarget* target) {
    for_each_merge_source(v, [&](yaml::NodeId item) {
      Value merged = convert(item, depth + 1, via_alias, target);
      for (const auto& [k, e] : merged.as_map()) m[k] = e;
    });
  }

  std::string key_string(yaml::NodeId k, bool via_alias) {
    yaml::NodeId t = m_doc.target(k);
    if (m_doc.node(t).type != yaml::NodeType::scalar) {
      if (m_mode == YamlMode::helm) fail_goyaml("invalid map key: " + go_syntax(k, false));
      fail_at(k, "invalid map key: a collection");
    }
    if (via_alias || t != k) m_budget.charge();
    if (m_mode == YamlMode::helm) {
      std::string text(m_doc.scalar(t));
      Resolved r = decode_v2(t, text);
      if (r.tag == Tag::null) return std::string(k_nil_key);  // see fail_nil_key
      if (is_binary(t)) text = json_utf8(text);  // only !!binary scalars can hold such bytes
      return go_string_of(r, text, true);
    }
    Value v = scalar(t, nullptr);
    switch (v.kind()) {
      case Kind::null: return "";
      case Kind::string: return v.as_string();
      case Kind::boolean: return v.as_bool() ? "true" : "false";
      case Kind::integer: return std::to_string(v.as_int());
      case Kind::floating: return format_float_g(v.as_float());
      default: return std::string(m_doc.scalar(t));
    }
  }

  bool is_binary(yaml::NodeId id) const {
    const std::string& tag = m_doc.tag(id);  // most scalars have none: no comparison then
    return !tag.empty() && tag == "tag:yaml.org,2002:binary";
  }

  // What goyaml.v2 decodes the scalar `id` to: quoted, block and "!"- or custom-tagged scalars
  // are strings, !!binary is base64-decoded, explicitly tagged text must resolve to its tag.
  // `text` holds the scalar and receives a decoded !!binary.
  Resolved decode_v2(yaml::NodeId id, std::string& text) {
    const std::string& tag = m_doc.tag(id);
    if (tag.empty()) return m_doc.node(id).style == yaml::Style::plain ? resolve_v2(text) : Resolved{};
    if (is_binary(id)) {
      auto bytes = base64_decode(text);
      if (!bytes) fail_goyaml("!!binary value contains invalid base64 data");
      text = std::move(*bytes);
      return Resolved{};
    }
    if (!resolvable_tag(tag) || tag == "tag:yaml.org,2002:str") return Resolved{};
    Resolved r = resolve_v2(text);
    // goyaml.v2 tries a timestamp only for untagged and !!timestamp scalars
    if (r.tag == Tag::timestamp && tag != "tag:yaml.org,2002:timestamp") r = Resolved{};
    std::string want = short_tag(tag);
    if (want == short_tag(r.tag)) return r;
    if (want == "!!float" && r.tag == Tag::integer) return Resolved{Tag::floating, false, 0, 0, static_cast<double>(r.i)};
    fail_goyaml("cannot decode " + short_tag(r.tag) + " `" + text + "` as a " + want);
  }

  // Go's %#v of the interface{} goyaml.v2 decodes `id` to, as Helm's errors print it; `top`:
  // the value itself is printed (nil as <nil>), not an element of a collection.
  std::string go_syntax(yaml::NodeId id, bool top) {
    id = m_doc.target(id);
    m_budget.charge();
    const yaml::Node& n = m_doc.node(id);
    if (n.type == yaml::NodeType::sequence) {
      std::string out = "[]interface {}{";
      for (std::size_t i = 0; i < m_doc.size(id); ++i) {
        if (i > 0) out += ", ";
        out += go_syntax(m_doc.item(id, i), false);
      }
      return out + "}";
    }
    if (n.type == yaml::NodeType::mapping) {
      struct Entry {
        Resolved key;
        std::string key_text, text;
      };
      std::vector<Entry> entries;
      collect_go_entries(id, entries);
      // fmt sorts the keys: by type (go_type_rank), then by value
      std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        int ra = go_type_rank(a.key.tag), rb = go_type_rank(b.key.tag);
        if (ra != rb) return ra < rb;
        switch (a.key.tag) {
          case Tag::integer: return a.key.i < b.key.i;
          case Tag::uinteger: return a.key.u < b.key.u;
          case Tag::floating: return (std::isnan(a.key.f) && !std::isnan(b.key.f)) || a.key.f < b.key.f;
          case Tag::boolean: return !a.key.b && b.key.b;
          case Tag::null: return false;
          default: return a.key_text < b.key_text;
        }
      });
      std::string out = "map[interface {}]interface {}{";
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) out += ", ";
        out += go_scalar_syntax(entries[i].key, entries[i].key_text, false) + ":" + entries[i].text;
      }
      return out + "}";
    }
    std::string text(m_doc.scalar(id));
    Resolved r = decode_v2(id, text);
    return go_scalar_syntax(r, text, top);
  }

  static std::string go_scalar_syntax(const Resolved& r, const std::string& text, bool top) {
    switch (r.tag) {
      case Tag::null: return top ? "<nil>" : "interface {}(nil)";
      case Tag::boolean: return r.b ? "true" : "false";
      case Tag::integer: return std::to_string(r.i);
      case Tag::uinteger: {
        char buf[24];
        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(r.u));
        return buf;
      }
      case Tag::floating: return format_float_g(r.f);
      case Tag::timestamp:
      case Tag::str: break;
    }
    return go_quote(text);
  }

  // The entries of the Go map goyaml.v2 decodes the mapping `id` to: merges applied, a later
  // equal key replacing an earlier one.
  template <class Entry>
  void collect_go_entries(yaml::NodeId id, std::vector<Entry>& entries) {
    id = m_doc.target(id);
    for (std::size_t i = 0; i < m_doc.size(id); ++i) {
      yaml::NodeId k = m_doc.key(id, i), v = m_doc.value(id, i);
      if (is_merge_key(k)) {
        for_each_merge_source(v, [&](yaml::NodeId item) { collect_go_entries(item, entries); });
        continue;
      }
      yaml::NodeId kt = m_doc.target(k);
      if (m_doc.node(kt).type != yaml::NodeType::scalar) fail_goyaml("invalid map key: " + go_syntax(k, false));
      Entry e;
      e.key_text = std::string(m_doc.scalar(kt));
      e.key = decode_v2(kt, e.key_text);
      e.text = go_syntax(v, false);
      auto same = std::find_if(entries.begin(), entries.end(), [&](const Entry& o) {
        if (go_type_rank(o.key.tag) != go_type_rank(e.key.tag)) return false;
        switch (e.key.tag) {
          case Tag::integer: return o.key.i == e.key.i;
          case Tag::uinteger: return o.key.u == e.key.u;
          case Tag::floating: return o.key.f == e.key.f;
          case Tag::boolean: return o.key.b == e.key.b;
          case Tag::null: return true;
          default: return o.key_text == e.key_text;
        }
      });
      if (same != entries.end()) *same = std::move(e);
      else entries.push_back(std::move(e));
    }
  }

  Value scalar(yaml::NodeId id, const GoTarget* target) {
    std::string s(m_doc.scalar(id));
    if (m_mode == YamlMode::helm) {
      Resolved r = decode_v2(id, s);
      if (is_binary(id)) s = json_utf8(s);
      if (target && target->type == GoTarget::Type::string && r.tag != Tag::null) return Value(go_string_of(r, s, false));
      switch (r.tag) {
        case Tag::null: return Value();
        case Tag::boolean: return Value(r.b);
        case Tag::integer: return Value(static_cast<double>(r.i));
        case Tag::uinteger: return Value(static_cast<double>(r.u));
        case Tag::floating:
          if (!std::isfinite(r.f)) m_non_finite = true;
          return Value(r.f);
        case Tag::timestamp:
        case Tag::str: break;
      }
      return Value(std::move(s));
    }
    const std::string& tag = m_doc.tag(id);
    bool plain = m_doc.node(id).style == yaml::Style::plain;
    // quoted and block scalars without a tag are strings; so are "!" and !!str ones
    if ((tag.empty() && !plain) || tag == "!" || tag == "tag:yaml.org,2002:str") return Value(std::move(s));
    if (tag == "tag:yaml.org,2002:binary") return Value(std::move(s));
    Resolved r = resolve_v3(s);
    if (!tag.empty() && tag != "tag:yaml.org,2002:int" && tag != "tag:yaml.org,2002:float" &&
        tag != "tag:yaml.org,2002:bool" && tag != "tag:yaml.org,2002:null")
      return Value(std::move(s));
    switch (r.tag) {
      case Tag::null: return Value();
      case Tag::boolean: return Value(r.b);
      case Tag::integer: return Value::integer(r.i, IntType::int_);
      case Tag::uinteger: return Value(static_cast<double>(r.u));
      case Tag::floating: return Value(r.f);
      case Tag::timestamp:
      case Tag::str: return Value(std::move(s));
    }
    return Value(std::move(s));
  }
};

std::vector<Value> load(std::string_view text, YamlMode mode, const std::string& source, std::size_t max_documents) {
  std::vector<Value> out;
  try {
    yaml::Options options;
    options.max_documents = max_documents;
    std::vector<yaml::Document> docs = yaml::parse(text, options);
    out.reserve(docs.size());
    for (const auto& d : docs) out.push_back(Converter(d, mode, source).document(nullptr));
  } catch (const yaml::ParseError& e) {
    throw Error(ErrorKind::invalid, source + ":" + std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " +
                                        e.problem());
  }
  return out;
}

}  // namespace

// yaml.Unmarshal (goyaml.v2 and yaml.v3 alike) reads the first document and ignores the rest.
Value parse_yaml(std::string_view text, YamlMode mode, const std::string& source) {
  auto docs = load(text, mode, source, 1);
  if (docs.empty()) return Value();
  return std::move(docs.front());
}

std::vector<Value> parse_yaml_documents(std::string_view text, YamlMode mode, const std::string& source) {
  return load(text, mode, source, 0);
}

Value yaml_to_json_value(const yaml::Document& doc, const GoTarget* target) {
  static const std::string no_source;
  return Converter(doc, YamlMode::helm, no_source).document(target);
}

bool json_name_matches(std::string_view key, std::string_view field) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  std::size_t f = 0;
  for (std::size_t i = 0; i < key.size(); ++f) {
    if (f >= field.size()) return false;
    char want = lower(field[f]);
    if (static_cast<unsigned char>(key[i]) < 0x80) {
      if (lower(key[i]) != want) return false;
      ++i;
      continue;
    }
    // the non-ASCII letters that fold to ASCII ones
    std::string_view rest = key.substr(i);
    if (want == 'k' && rest.starts_with("\xE2\x84\xAA")) i += 3;  // U+212A KELVIN SIGN
    else if (want == 's' && rest.starts_with("\xC5\xBF")) i += 2;  // U+017F LATIN SMALL LETTER LONG S
    else return false;
  }
  return f == field.size();
}

// ---- the goyaml.v2 emitter ----

namespace {

bool is_letter_rune(std::uint32_t r) {
  if (r < 0x80) return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z');
  return r >= 0xAA;  // approximation of unicode.IsLetter for non-ASCII
}
bool is_digit_rune(std::uint32_t r) { return r >= '0' && r <= '9'; }

// Go's []rune(s)
std::vector<std::uint32_t> runes_of(const std::string& s) {
  std::vector<std::uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    char32_t r;
    i += utf8::decode(s, i, r);
    out.push_back(r);
  }
  return out;
}

// Eight bytes at a time, their high bits gathered: toYaml asks it of every key and string it
// writes, and nearly all are ASCII.
bool is_ascii(const std::string& s) {
  const char* const p = s.data();
  const std::size_t n = s.size();
  std::uint64_t bits = 0;
  std::size_t i = 0;
  for (; n - i >= 8; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, p + i, 8);
    bits |= word;
  }
  for (; i < n; ++i) bits |= static_cast<unsigned char>(p[i]);
  return (bits & 0x8080808080808080ULL) == 0;
}

// goyaml.v2 keyList.Less over two rune sequences (anything indexable with size()).
template <class Runes>
bool runes_less(const Runes& ar, const Runes& br) {
  for (size_t i = 0; i < ar.size() && i < br.size(); ++i) {
    if (ar[i] == br[i]) continue;
    bool al = is_letter_rune(ar[i]), bl = is_letter_rune(br[i]);
    if (al && bl) return ar[i] < br[i];
    if (al || bl) return bl;
    std::int64_t an = 0, bn = 0;
    if (ar[i] == '0' || br[i] == '0') {
      for (size_t j = i; j-- > 0 && is_digit_rune(ar[j]);) {
        if (ar[j] != '0') {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    size_t ai = i, bi = i;
    // Go's int64 arithmetic wraps on overflow; do the same without undefined behaviour
    auto step = [](std::int64_t v, std::uint32_t digit) {
      return static_cast<std::int64_t>(static_cast<std::uint64_t>(v) * 10u + (digit - '0'));
    };
    for (; ai < ar.size() && is_digit_rune(ar[ai]); ++ai) an = step(an, ar[ai]);
    for (; bi < br.size() && is_digit_rune(br[bi]); ++bi) bn = step(bn, br[bi]);
    if (an != bn) return an < bn;
    if (ai != bi) return ai < bi;
    return ar[i] < br[i];
  }
  return ar.size() < br.size();
}

// A string's runes when it is ASCII: its bytes, without decoding into a vector (keys are
// compared n log n times while a map is sorted).
struct AsciiRunes {
  const std::string& s;
  std::uint32_t operator[](size_t i) const { return static_cast<unsigned char>(s[i]); }
  size_t size() const { return s.size(); }
};

// goyaml.v2 keyList.Less for string keys
bool key_less(const std::string& a, const std::string& b) {
  if (is_ascii(a) && is_ascii(b)) return runes_less(AsciiRunes{a}, AsciiRunes{b});
  return runes_less(runes_of(a), runes_of(b));
}

// goyaml's width(): the length a lead byte announces; a byte that starts no sequence is
// stepped over as one (goyaml says 0, which only its callers' other checks keep from looping).
int utf8_width(unsigned char c) { return static_cast<int>(std::max<std::size_t>(1, utf8::sequence_length(c))); }

bool is_printable_at(const std::string& b, size_t i) {
  unsigned char c = static_cast<unsigned char>(b[i]);
  auto at = [&](size_t k) -> unsigned char { return i + k < b.size() ? static_cast<unsigned char>(b[i + k]) : 0; };
  return c == 0x0A || (c >= 0x20 && c <= 0x7E) || (c == 0xC2 && at(1) >= 0xA0) || (c > 0xC2 && c < 0xED) ||
         (c == 0xED && at(1) < 0xA0) || c == 0xEE ||
         (c == 0xEF && !(at(1) == 0xBB && at(2) == 0xBF) && !(at(1) == 0xBF && (at(2) == 0xBE || at(2) == 0xBF)));
}
bool is_break_at(const std::string& b, size_t i) {
  unsigned char c = static_cast<unsigned char>(b[i]);
  auto at = [&](size_t k) -> unsigned char { return i + k < b.size() ? static_cast<unsigned char>(b[i + k]) : 0; };
  return c == '\r' || c == '\n' || (c == 0xC2 && at(1) == 0x85) || (c == 0xE2 && at(1) == 0x80 && at(2) == 0xA8) ||
         (c == 0xE2 && at(1) == 0x80 && at(2) == 0xA9);
}
bool is_space_at(const std::string& b, size_t i) { return i < b.size() && b[i] == ' '; }
bool is_blank_at(const std::string& b, size_t i) { return i < b.size() && (b[i] == ' ' || b[i] == '\t'); }

struct Analysis {
  bool multiline = false;
  bool block_plain_allowed = true;
  bool single_quoted_allowed = true;
  bool block_allowed = true;
};

// Whether `v` is a word of ASCII letters, digits and . _ - / that starts with a letter, digit,
// '_' or '/': no indicator, space, break or unprintable character anywhere, so analyze() allows
// every style. Names, images, labels and paths are such words (toYaml analysed them a
// character at a time, which showed in its profile).
bool is_plain_word(const std::string& v) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (v.empty() || !(alnum(v[0]) || v[0] == '_' || v[0] == '/')) return false;
  for (char c : v)
    if (!(alnum(c) || c == '.' || c == '_' || c == '-' || c == '/')) return false;
  return true;
}

Analysis analyze(const std::string& v) {
  Analysis a;
  if (is_plain_word(v)) return a;
  if (v.empty()) {
    a.block_plain_allowed = true;
    a.single_quoted_allowed = true;
    a.block_allowed = false;
    return a;
  }
  bool block_ind = false, flow_ind = false, line_breaks = false, special = false;
  bool leading_space = false, leading_break = false, trailing_space = false, trailing_break = false;
  bool break_space = false, space_break = false, prev_space = false, prev_break = false;
  if (v.size() >= 3 && (v.starts_with("---") || v.starts_with("..."))) block_ind = flow_ind = true;
  bool preceded_ws = true;
  for (size_t i = 0; i < v.size();) {
    // An ASCII character (nearly all) is classed inline, and what follows it only when an
    // indicator asks: calls per character were most of toYaml's time on long strings.
    const auto uc = static_cast<unsigned char>(v[i]);
    const bool ascii = uc < 0x80;
    size_t w = ascii ? 1 : static_cast<size_t>(utf8_width(uc));
    auto followed_ws = [&v, i, w] { return i + w >= v.size() || is_blank_at(v, i + w) || is_break_at(v, i + w); };
    const bool printable = ascii ? uc == '\n' || (uc >= 0x20 && uc <= 0x7E) : is_printable_at(v, i);
    const bool space = uc == ' ';
    const bool brk = ascii ? uc == '\n' || uc == '\r' : is_break_at(v, i);
    char c = v[i];
    if (i == 0) {
      switch (c) {
        case '#': case ',': case '[': case ']': case '{': case '}': case '&': case '*': case '!': case '|':
        case '>': case '\'': case '"': case '%': case '@': case '`':
          flow_ind = block_ind = true;
          break;
        case '?': case ':':
          flow_ind = true;
          if (followed_ws()) block_ind = true;
          break;
        case '-':
          if (followed_ws()) flow_ind = block_ind = true;
          break;
        default: break;
      }
    } else {
      switch (c) {
        case ',': case '?': case '[': case ']': case '{': case '}': flow_ind = true; break;
        case ':':
          flow_ind = true;
          if (followed_ws()) block_ind = true;
          break;
        case '#':
          if (preceded_ws) flow_ind = block_ind = true;
          break;
        default: break;
      }
    }
    if (!printable) special = true;
    if (space) {
      if (i == 0) leading_space = true;
      if (i + w == v.size()) trailing_space = true;
      if (prev_break) break_space = true;
      prev_space = true;
      prev_break = false;
    } else if (brk) {
      line_breaks = true;
      if (i == 0) leading_break = true;
      if (i + w == v.size()) trailing_break = true;
      if (prev_space) space_break = true;
      prev_space = false;
      prev_break = true;
    } else {
      prev_space = prev_break = false;
    }
    preceded_ws = space || uc == '\t' || brk || uc == 0;  // blank, break or NUL
    i += w;
  }
  a.multiline = line_breaks;
  if (leading_space || leading_break || trailing_space || trailing_break) a.block_plain_allowed = false;
  if (trailing_space) a.block_allowed = false;
  if (break_space) {
    a.block_plain_allowed = false;
    a.single_quoted_allowed = false;
  }
  if (space_break || special) {
    a.block_plain_allowed = false;
    a.single_quoted_allowed = false;
    a.block_allowed = false;
  }
  if (line_breaks) a.block_plain_allowed = false;
  if (block_ind) a.block_plain_allowed = false;
  (void)flow_ind;
  return a;
}

enum class Style { plain, single, dbl, literal };

class Emitter {
public:
  std::string out;

  void root(const Value& v0) {
    const Value v = resolve_object(v0);
    switch (v.kind()) {
      case Kind::map:
        if (v.as_map().empty()) {
          write("{}");
          nl();
        } else {
          mapping(v.as_map(), 0, false);
        }
        return;
      case Kind::list:
        if (v.as_list().empty()) {
          write("[]");
          nl();
        } else {
          sequence(v.as_list(), 0, false);
        }
        return;
      default:
        // goyaml.v2 indents a root scalar's continuation lines like a flow node: by 2
        scalar_value(v, 2, true);
        nl_if_needed();
        return;
    }
  }

private:
  size_t m_column = 0;
  static constexpr size_t k_best_width = 80;

  void put(char c) {
    out.push_back(c);
    if (c == '\n') m_column = 0;
    else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++m_column;
  }
  void write(std::string_view s) {
    for (char c : s) put(c);
  }
  void nl() { put('\n'); }
  void nl_if_needed() {
    if (out.empty() || out.back() != '\n') nl();
  }
  void indent_to(int indent) {
    for (int i = 0; i < indent; ++i) put(' ');
  }
  void write_indent(int indent) {
    nl();
    indent_to(indent);
  }

  // value written after "key:" (or at root/sequence item); `indent` is the block indent for
  // continuation lines of this node.
  void mapping(const Map& m, int indent, bool first_inline) {
    std::vector<const std::pair<const std::string, Value>*> entries;
    entries.reserve(m.size());
    for (const auto& e : m) entries.push_back(&e);
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto* a, const auto* b) { return key_less(a->first, b->first); });
    bool first = true;
    for (const auto* e : entries) {
      if (!(first && first_inline)) indent_to(indent);
      first = false;
      write_string(e->first, indent, true);
      put(':');
      value_after_key(e->second, indent);
    }
  }

  void sequence(const List& l, int indent, bool first_inline) {
    bool first = true;
    for (const auto& e : l) {
      if (!(first && first_inline)) indent_to(indent);
      first = false;
      put('-');
      const Value v = resolve_object(e);
      switch (v.kind()) {
        case Kind::map:
          if (v.as_map().empty()) {
            write(" {}");
            nl();
          } else {
            put(' ');
            mapping(v.as_map(), indent + 2, true);
          }
          break;
        case Kind::list:
          if (v.as_list().empty()) {
            write(" []");
            nl();
          } else {
            put(' ');
            sequence(v.as_list(), indent + 2, true);
          }
          break;
        default:
          put(' ');
          scalar_value(v, indent + 2, false);
          nl_if_needed();
      }
    }
  }

  void value_after_key(const Value& v0, int indent) {
    const Value v = resolve_object(v0);
    switch (v.kind()) {
      case Kind::map:
        if (v.as_map().empty()) {
          write(" {}");
          nl();
        } else {
          nl();
          mapping(v.as_map(), indent + 2, false);
        }
        return;
      case Kind::list:
        if (v.as_list().empty()) {
          write(" []");
          nl();
        } else {
          nl();
          sequence(v.as_list(), indent, false);
        }
        return;
      default:
        put(' ');
        scalar_value(v, indent + 2, false);
        nl_if_needed();
    }
  }

  static Value resolve_object(const Value& v) {
    if (!v.is_object()) return v;
    auto d = v.as_object()->data();
    if (!d) throw Error(ErrorKind::invalid, "cannot convert '" + v.as_object()->type_name() + "' to YAML");
    return *d;
  }

  void scalar_value(const Value& v0, int indent, bool root) {
    (void)root;
    const Value v = resolve_object(v0);
    switch (v.kind()) {
      case Kind::null: write("null"); return;
      case Kind::boolean: write(v.as_bool() ? "true" : "false"); return;
      case Kind::integer: write(std::to_string(v.as_int())); return;
      case Kind::floating: {
        double f = v.as_float();
        if (!std::isfinite(f)) throw Error(ErrorKind::invalid, "json: unsupported value: " + format_float_g(f));
        std::string j = format_json_float(f);
        if (j.find_first_of(".eE") == std::string::npos) {
          std::int64_t i;
          std::uint64_t u;
          if (parse_int_base0(j, i, u) != IntParse::none) {
            write(j);
            return;
          }
        }
        write(format_float_g(f));
        return;
      }
      case Kind::string: write_string(v.as_string(), indent, false); return;
      default: return;
    }
  }

  void write_string(const std::string& raw, int indent, bool simple_key) {
    // toYaml goes through sigs.k8s.io/yaml's JSON, which keeps an ASCII string as it is (a copy
    // of every string showed in toYaml's profile)
    std::string fixed;
    const std::string& s = is_ascii(raw) ? raw : (fixed = json_utf8(raw));
    Resolved r = resolve_v2(s);
    bool can_plain = r.tag == Tag::str && !is_base60_float(s);
    Style style;
    if (s.find('\n') != std::string::npos) style = Style::literal;
    else if (can_plain) style = Style::plain;
    else style = Style::dbl;
    Analysis a = analyze(s);
    if (simple_key && a.multiline) style = Style::dbl;
    if (style == Style::plain) {
      if (!a.block_plain_allowed) style = Style::single;
      if (s.empty() && simple_key) style = Style::single;
    }
    if (style == Style::single && !a.single_quoted_allowed) style = Style::dbl;
    if (style == Style::literal && (!a.block_allowed || simple_key)) style = Style::dbl;
    bool allow_breaks = !simple_key;
    switch (style) {
      case Style::plain: write_plain(s, indent, allow_breaks); break;
      case Style::single: write_single(s, indent, allow_breaks); break;
      case Style::dbl: write_double(s, indent, allow_breaks); break;
      case Style::literal: write_literal(s, indent); break;
    }
  }

  void write_plain(const std::string& s, int indent, bool allow_breaks) {
    bool spaces = false;
    for (size_t i = 0; i < s.size();) {
      // A run of ASCII characters other than space and line feed is written as put() would
      // write it one by one (one column each, no break): at once (put per character showed in
      // profiles of toYaml).
      size_t j = i;
      while (j < s.size() && static_cast<unsigned char>(s[j]) < 0x80 && s[j] != ' ' && s[j] != '\n') ++j;
      if (j > i) {
        out.append(s, i, j - i);
        m_column += j - i;
        i = j;
        spaces = false;
        continue;
      }
      if (is_space_at(s, i)) {
        if (allow_breaks && !spaces && m_column > k_best_width && !is_space_at(s, i + 1)) {
          write_indent(indent);
          i += 1;
        } else {
          put(s[i]);
          i += 1;
        }
        spaces = true;
      } else {
        size_t w = static_cast<size_t>(utf8_width(static_cast<unsigned char>(s[i])));
        for (size_t k = 0; k < w && i < s.size(); ++k) put(s[i++]);
        spaces = false;
      }
    }
  }

  void write_single(const std::string& s, int indent, bool allow_breaks) {
    put('\'');
    bool spaces = false;
    for (size_t i = 0; i < s.size();) {
      if (is_space_at(s, i)) {
        if (allow_breaks && !spaces && m_column > k_best_width && i > 0 && i < s.size() - 1 && !is_space_at(s, i + 1)) {
          write_indent(indent);
          i += 1;
        } else {
          put(s[i]);
          i += 1;
        }
        spaces = true;
      } else {
        if (s[i] == '\'') put('\'');
        size_t w = static_cast<size_t>(utf8_width(static_cast<unsigned char>(s[i])));
        for (size_t k = 0; k < w && i < s.size(); ++k) put(s[i++]);
        spaces = false;
      }
    }
    put('\'');
  }

  void write_double(const std::string& s, int indent, bool allow_breaks) {
    static const char* hex = "0123456789ABCDEF";
    put('"');
    bool spaces = false;
    for (size_t i = 0; i < s.size();) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      bool bom = c == 0xEF && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xBB &&
                 static_cast<unsigned char>(s[i + 2]) == 0xBF;
      if (!is_printable_at(s, i) || bom || is_break_at(s, i) || c == '"' || c == '\\') {
        char32_t v;
        i += utf8::decode(s, i, v);
        put('\\');
        switch (v) {
          case 0x00: put('0'); break;
          case 0x07: put('a'); break;
          case 0x08: put('b'); break;
          case 0x09: put('t'); break;
          case 0x0A: put('n'); break;
          case 0x0B: put('v'); break;
          case 0x0C: put('f'); break;
          case 0x0D: put('r'); break;
          case 0x1B: put('e'); break;
          case 0x22: put('"'); break;
          case 0x5C: put('\\'); break;
          case 0x85: put('N'); break;
          case 0xA0: put('_'); break;
          case 0x2028: put('L'); break;
          case 0x2029: put('P'); break;
          default: {
            int digits;
            if (v <= 0xFF) {
              put('x');
              digits = 2;
            } else if (v <= 0xFFFF) {
              put('u');
              digits = 4;
            } else {
              put('U');
              digits = 8;
            }
            for (int k = (digits - 1) * 4; k >= 0; k -= 4) put(hex[(v >> k) & 0x0F]);
          }
        }
        spaces = false;
      } else if (is_space_at(s, i)) {
        if (allow_breaks && !spaces && m_column > k_best_width && i > 0 && i < s.size() - 1) {
          write_indent(indent);
          if (is_space_at(s, i + 1)) put('\\');
          i += 1;
        } else {
          put(s[i]);
          i += 1;
        }
        spaces = true;
      } else {
        size_t w = static_cast<size_t>(utf8_width(c));
        for (size_t k = 0; k < w && i < s.size(); ++k) put(s[i++]);
        spaces = false;
      }
    }
    put('"');
  }

  void write_literal(const std::string& s, int indent) {
    put('|');
    if (is_space_at(s, 0) || is_break_at(s, 0)) put('2');
    // chomping
    size_t i = s.size() - 1;
    while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
    if (!is_break_at(s, i)) {
      put('-');
    } else if (i == 0) {
      put('+');
    } else {
      --i;
      while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
      if (is_break_at(s, i)) put('+');
    }
    nl();
    bool breaks = true;
    for (size_t k = 0; k < s.size();) {
      if (is_break_at(s, k)) {
        unsigned char c = static_cast<unsigned char>(s[k]);
        if (c == '\r' && k + 1 < s.size() && s[k + 1] == '\n') {
          nl();
          k += 2;
        } else if (c == '\r' || c == '\n') {
          nl();
          k += 1;
        } else {
          size_t w = static_cast<size_t>(utf8_width(c));
          for (size_t j = 0; j < w; ++j) put(s[k + j]);
          m_column = 0;
          k += w;
        }
        breaks = true;
      } else {
        if (breaks) indent_to(indent);
        // The rest of the line at once, as put() would write it byte by byte (a put per
        // character was most of toYaml's time on a chart's scripts and configuration files).
        const size_t from = k;
        for (; k < s.size(); ++k) {
          const auto c = static_cast<unsigned char>(s[k]);
          if (c == '\n' || c == '\r' || ((c == 0xC2 || c == 0xE2) && is_break_at(s, k))) break;
          m_column += (c & 0xC0) != 0x80;
        }
        out.append(s, from, k - from);
        breaks = false;
      }
    }
  }
};

}  // namespace

std::string to_yaml(const Value& v) {
  Emitter e;
  e.root(v);
  return std::move(e.out);
}

std::string yaml_plain_as_go_string(std::string_view text) {
  return go_string_of(resolve_v2(std::string(text)), text, false);
}

std::string yaml_plain_as_go_key(std::string_view text) {
  return go_string_of(resolve_v2(std::string(text)), text, true);
}

bool yaml_plain_is_string(std::string_view text) { return resolve_v2(std::string(text)).tag == Tag::str; }

}  // namespace emco::tmpl
