#include "core/helm/schema.hpp"

#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include <cmath>
#include <sstream>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "core/util/utf8.hpp"

namespace emco::helm {
using nlohmann::json;

namespace {

struct Problem {
  std::string field;
  std::string description;
};

// JSON type name as gojsonschema reports it: whole numbers are "integer".
std::string json_type(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: {
      double d = v.get<double>();
      return std::isfinite(d) && d == std::floor(d) ? "integer" : "number";
    }
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "undefined";
  }
}

bool type_matches(const std::string& want, const json& v) {
  std::string got = json_type(v);
  if (want == got) return true;
  return want == "number" && got == "integer";
}

// Numbers print as Go's %v of a big.Rat-backed value would for the common cases.
std::string num_text(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  double d = v.get<double>();
  if (d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
  std::ostringstream ss;
  ss << d;
  return ss.str();
}

bool json_equal(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!json_equal(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!b.contains(it.key()) || !json_equal(it.value(), b.at(it.key()))) return false;
    return true;
  }
  return a == b;
}

class Validator {
public:
  explicit Validator(const json& root) : m_root(root) {}

  void validate(const json& schema, const json& v, const std::string& field, std::vector<Problem>& out,
                int depth = 0) {
    if (depth > 200) fail(ErrorKind::invalid, "values.schema.json: $ref recursion is too deep");
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) out.push_back({field, "False always fails validation"});
      return;
    }
    if (!schema.is_object()) return;
    if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
      validate(resolve(ref->get<std::string>()), v, field, out, depth + 1);
      return;
    }
    // Combinators
    if (auto it = schema.find("anyOf"); it != schema.end() && it->is_array()) {
      bool ok = false;
      for (const auto& sub : *it) ok = ok || passes(sub, v, field, depth);
      if (!ok) out.push_back({field, "Must validate at least one schema (anyOf)"});
    }
    if (auto it = schema.find("oneOf"); it != schema.end() && it->is_array()) {
      int n = 0;
      for (const auto& sub : *it) n += passes(sub, v, field, depth) ? 1 : 0;
      if (n != 1) out.push_back({field, "Must validate one and only one schema (oneOf)"});
    }
    if (auto it = schema.find("allOf"); it != schema.end() && it->is_array()) {
      bool ok = true;
      for (const auto& sub : *it) ok = passes(sub, v, field, depth) && ok;
      if (!ok) {
        out.push_back({field, "Must validate all the schemas (allOf)"});
        for (const auto& sub : *it) validate(sub, v, field, out, depth + 1);
      }
    }
    if (auto it = schema.find("not"); it != schema.end()) {
      if (passes(*it, v, field, depth)) out.push_back({field, "Must not validate the schema (not)"});
    }
    if (auto it = schema.find("if"); it != schema.end()) {
      if (passes(*it, v, field, depth)) {
        if (auto t = schema.find("then"); t != schema.end()) {
          if (!passes(*t, v, field, depth)) {
            out.push_back({field, "Must validate \"then\" as \"if\" was valid"});
            validate(*t, v, field, out, depth + 1);
          }
        }
      } else if (auto e = schema.find("else"); e != schema.end()) {
        if (!passes(*e, v, field, depth)) {
          out.push_back({field, "Must validate \"else\" as \"if\" was not valid"});
          validate(*e, v, field, out, depth + 1);
        }
      }
    }
    // type
    if (auto it = schema.find("type"); it != schema.end()) {
      std::vector<std::string> types;
      if (it->is_string()) types.push_back(it->get<std::string>());
      if (it->is_array())
        for (const auto& t : *it)
          if (t.is_string()) types.push_back(t.get<std::string>());
      bool ok = types.empty();
      for (const auto& t : types) ok = ok || type_matches(t, v);
      if (!ok) {
        std::string expected = types.size() == 1 ? types[0] : "[" + join(types, ",") + "]";
        out.push_back({field, "Invalid type. Expected: " + expected + ", given: " + json_type(v)});
        return;
      }
    }
    if (auto it = schema.find("enum"); it != schema.end() && it->is_array()) {
      bool ok = false;
      std::vector<std::string> allowed;
      for (const auto& e : *it) {
        ok = ok || json_equal(e, v);
        allowed.push_back(e.dump());
      }
      if (!ok) out.push_back({field, leaf(field) + " must be one of the following: " + join(allowed, ", ")});
    }
    if (auto it = schema.find("const"); it != schema.end()) {
      if (!json_equal(*it, v)) out.push_back({field, leaf(field) + " does not match: " + it->dump()});
    }
    if (v.is_number()) check_number(schema, v, field, out);
    if (v.is_string()) check_string(schema, v.get<std::string>(), field, out);
    if (v.is_array()) check_array(schema, v, field, out, depth);
    if (v.is_object()) check_object(schema, v, field, out, depth);
  }

private:
  static std::string leaf(const std::string& field) { return field; }

  static std::string child(const std::string& field, const std::string& key) {
    return field == "(root)" ? key : field + "." + key;
  }

  bool passes(const json& schema, const json& v, const std::string& field, int depth) {
    std::vector<Problem> probe;
    validate(schema, v, field, probe, depth + 1);
    return probe.empty();
  }

  const json& resolve(const std::string& ref) {
    if (ref == "#") return m_root;
    if (!starts_with(ref, "#/"))
      fail(ErrorKind::invalid, "values.schema.json: only local $ref is supported, not '" + ref + "'");
    try {
      return m_root.at(json::json_pointer(ref.substr(1)));
    } catch (const std::exception&) {
      fail(ErrorKind::invalid, "values.schema.json: $ref '" + ref + "' does not resolve");
    }
  }

  void check_number(const json& s, const json& v, const std::string& field, std::vector<Problem>& out) {
    double d = v.get<double>();
    auto num = [&](const char* key) -> const json* {
      auto it = s.find(key);
      return it != s.end() && it->is_number() ? &*it : nullptr;
    };
    auto flag = [&](const char* key) {
      auto it = s.find(key);
      return it != s.end() && it->is_boolean() && it->get<bool>();
    };
    if (const json* m = num("multipleOf")) {
      double q = d / m->get<double>();
      if (std::fabs(q - std::round(q)) > 1e-9) out.push_back({field, "Must be a multiple of " + num_text(*m)});
    }
    if (const json* m = num("minimum")) {
      if (flag("exclusiveMinimum") ? !(d > m->get<double>()) : !(d >= m->get<double>()))
        out.push_back({field, std::string(flag("exclusiveMinimum") ? "Must be greater than "
                                                                   : "Must be greater than or equal to ") +
                                  num_text(*m)});
    }
    if (const json* m = num("exclusiveMinimum"); m && !(d > m->get<double>()))
      out.push_back({field, "Must be greater than " + num_text(*m)});
    if (const json* m = num("maximum")) {
      if (flag("exclusiveMaximum") ? !(d < m->get<double>()) : !(d <= m->get<double>()))
        out.push_back({field, std::string(flag("exclusiveMaximum") ? "Must be less than "
                                                                   : "Must be less than or equal to ") +
                                  num_text(*m)});
    }
    if (const json* m = num("exclusiveMaximum"); m && !(d < m->get<double>()))
      out.push_back({field, "Must be less than " + num_text(*m)});
  }

  void check_string(const json& s, const std::string& v, const std::string& field, std::vector<Problem>& out) {
    size_t runes = utf8::count(v);
    if (auto it = s.find("minLength"); it != s.end() && it->is_number() && runes < it->get<size_t>())
      out.push_back({field, "String length must be greater than or equal to " + num_text(*it)});
    if (auto it = s.find("maxLength"); it != s.end() && it->is_number() && runes > it->get<size_t>())
      out.push_back({field, "String length must be less than or equal to " + num_text(*it)});
    if (auto it = s.find("pattern"); it != s.end() && it->is_string()) {
      RE2 re(it->get<std::string>(), RE2::Quiet);
      if (!re.ok()) fail(ErrorKind::invalid, "values.schema.json: invalid pattern '" + it->get<std::string>() + "'");
      if (!RE2::PartialMatch(v, re))
        out.push_back({field, "Does not match pattern '" + it->get<std::string>() + "'"});
    }
  }

  void check_array(const json& s, const json& v, const std::string& field, std::vector<Problem>& out, int depth) {
    if (auto it = s.find("minItems"); it != s.end() && it->is_number() && v.size() < it->get<size_t>())
      out.push_back({field, "Array must have at least " + num_text(*it) + " items"});
    if (auto it = s.find("maxItems"); it != s.end() && it->is_number() && v.size() > it->get<size_t>())
      out.push_back({field, "Array must have at most " + num_text(*it) + " items"});
    if (auto it = s.find("uniqueItems"); it != s.end() && it->is_boolean() && it->get<bool>()) {
      for (size_t i = 0; i < v.size(); ++i)
        for (size_t j = i + 1; j < v.size(); ++j)
          if (json_equal(v[i], v[j])) {
            out.push_back({field, "array items[" + std::to_string(i) + "," + std::to_string(j) + "] must be unique"});
            i = v.size();
            break;
          }
    }
    if (auto it = s.find("items"); it != s.end()) {
      if (it->is_array()) {
        for (size_t i = 0; i < v.size() && i < it->size(); ++i)
          validate((*it)[i], v[i], child(field, std::to_string(i)), out, depth + 1);
        if (auto add = s.find("additionalItems"); add != s.end() && v.size() > it->size()) {
          if (add->is_boolean() && !add->get<bool>())
            out.push_back({field, "No additional items allowed on array"});
          else if (add->is_object())
            for (size_t i = it->size(); i < v.size(); ++i)
              validate(*add, v[i], child(field, std::to_string(i)), out, depth + 1);
        }
      } else {
        for (size_t i = 0; i < v.size(); ++i) validate(*it, v[i], child(field, std::to_string(i)), out, depth + 1);
      }
    }
  }

  void check_object(const json& s, const json& v, const std::string& field, std::vector<Problem>& out, int depth) {
    if (auto it = s.find("required"); it != s.end() && it->is_array())
      for (const auto& r : *it)
        if (r.is_string() && !v.contains(r.get<std::string>()))
          out.push_back({field, r.get<std::string>() + " is required"});
    if (auto it = s.find("minProperties"); it != s.end() && it->is_number() && v.size() < it->get<size_t>())
      out.push_back({field, "Must have at least " + num_text(*it) + " properties"});
    if (auto it = s.find("maxProperties"); it != s.end() && it->is_number() && v.size() > it->get<size_t>())
      out.push_back({field, "Must have at most " + num_text(*it) + " properties"});
    const json* props = nullptr;
    if (auto it = s.find("properties"); it != s.end() && it->is_object()) props = &*it;
    const json* pattern_props = nullptr;
    if (auto it = s.find("patternProperties"); it != s.end() && it->is_object()) pattern_props = &*it;
    auto additional = s.find("additionalProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      bool matched = false;
      if (props && props->contains(it.key())) {
        matched = true;
        validate(props->at(it.key()), it.value(), child(field, it.key()), out, depth + 1);
      }
      if (pattern_props) {
        for (auto p = pattern_props->begin(); p != pattern_props->end(); ++p) {
          RE2 re(p.key(), RE2::Quiet);
          if (re.ok() && RE2::PartialMatch(it.key(), re)) {
            matched = true;
            validate(p.value(), it.value(), child(field, it.key()), out, depth + 1);
          }
        }
      }
      if (!matched && additional != s.end()) {
        if (additional->is_boolean() && !additional->get<bool>())
          out.push_back({field, "Additional property " + it.key() + " is not allowed"});
        else if (additional->is_object())
          validate(*additional, it.value(), child(field, it.key()), out, depth + 1);
      }
    }
    if (auto it = s.find("dependencies"); it != s.end() && it->is_object()) {
      for (auto d = it->begin(); d != it->end(); ++d) {
        if (!v.contains(d.key())) continue;
        if (d->is_array()) {
          for (const auto& need : *d)
            if (need.is_string() && !v.contains(need.get<std::string>()))
              out.push_back({field, "Has a dependency on " + need.get<std::string>()});
        } else {
          validate(*d, v, field, out, depth + 1);
        }
      }
    }
  }

  const json& m_root;
};

json values_to_json(const tmpl::Value& values) {
  json j = values.to_json();
  if (j.is_null()) j = json::object();
  return j;
}

void validate_recursive(const Chart& c, const tmpl::Value& values, std::string& out) {
  if (!c.schema.empty()) {
    std::string problems = validate_values_schema(values, c.schema);
    if (!problems.empty()) out += c.name() + ":\n" + problems;
  }
  for (const auto& sub : c.dependencies) {
    const tmpl::Value* sv = values.find(sub.name());
    validate_recursive(sub, sv && sv->is_map() ? *sv : tmpl::Value(tmpl::Map{}), out);
  }
}

}  // namespace

std::string validate_values_schema(const tmpl::Value& values, const std::string& schema_json) {
  json schema;
  try {
    schema = json::parse(schema_json);
  } catch (const json::exception& e) {
    fail(ErrorKind::invalid, std::string("invalid values.schema.json: ") + e.what());
  }
  json v = values_to_json(values);
  std::vector<Problem> problems;
  Validator(schema).validate(schema, v, "(root)", problems);
  std::string out;
  for (const auto& p : problems) out += "- " + p.field + ": " + p.description + "\n";
  return out;
}

std::string validate_chart_schemas(const Chart& chart, const tmpl::Value& values) {
  std::string out;
  validate_recursive(chart, values, out);
  return out;
}

}  // namespace emco::helm
