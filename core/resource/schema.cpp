#include "core/resource/schema.hpp"

#include <nlohmann/json.hpp>

#include "core/util/strings.hpp"

namespace emco::resource {

using nlohmann::json;

Schema str(size_t max_length) {
  Schema s;
  s.type = FieldType::string;
  s.max_length = max_length;
  return s;
}
Schema name_str() {
  Schema s = str();
  s.name_rule = true;
  return s;
}
Schema one_of(std::vector<std::string> values, bool case_insensitive) {
  Schema s = str();
  s.enum_values = std::move(values);
  s.enum_case_insensitive = case_insensitive;
  return s;
}
Schema boolean() {
  Schema s;
  s.type = FieldType::boolean;
  return s;
}
Schema integer(long long min, long long max) {
  Schema s;
  s.type = FieldType::integer;
  s.min = min;
  s.max = max;
  return s;
}
Schema number() {
  Schema s;
  s.type = FieldType::number;
  return s;
}
Schema any() { return Schema{}; }
Schema obj(std::vector<Field> fields, std::vector<std::string> ignored) {
  Schema s;
  s.type = FieldType::object;
  s.fields = std::move(fields);
  s.ignored = std::move(ignored);
  return s;
}
Schema array(Schema element) {
  Schema s;
  s.type = FieldType::array;
  s.element = std::make_shared<Schema>(std::move(element));
  return s;
}
Schema map_of(Schema value) {
  Schema s;
  s.type = FieldType::map;
  s.element = std::make_shared<Schema>(std::move(value));
  return s;
}
Field req(std::string name, Schema s) { return Field{std::move(name), std::move(s), true}; }
Field opt(std::string name, Schema s) { return Field{std::move(name), std::move(s), false}; }

bool is_valid_name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string name_rule_text() {
  return "names are 1-63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit";
}

namespace {

const char* type_word(FieldType t) {
  switch (t) {
    case FieldType::string: return "a string";
    case FieldType::boolean: return "a boolean";
    case FieldType::integer: return "an integer";
    case FieldType::number: return "a number";
    case FieldType::object: return "a mapping";
    case FieldType::array: return "a list";
    case FieldType::map: return "a mapping";
    case FieldType::any: return "a value";
  }
  return "a value";
}

std::string json_type_word(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "a list";
    case json::value_t::object: return "a mapping";
    default: return "a value";
  }
}

void check(json& v, const Schema& s, const std::string& path, std::vector<Violation>& out) {
  if (!out.empty()) return;
  auto wrong_type = [&] {
    std::string hint;
    if (s.type == FieldType::string && (v.is_number() || v.is_boolean()))
      hint = "quote the value in YAML, e.g. \"" + v.dump() + "\"";
    out.push_back({path, "'" + path + "' must be " + type_word(s.type) + ", not " + json_type_word(v), hint});
  };
  switch (s.type) {
    case FieldType::any: return;
    case FieldType::string: {
      if (!v.is_string()) return wrong_type();
      const auto& text = v.get_ref<const std::string&>();
      if (s.max_length && text.size() > s.max_length) {
        out.push_back({path, "'" + path + "' is longer than " + std::to_string(s.max_length) + " characters", ""});
        return;
      }
      if (s.name_rule && !is_valid_name(text)) {
        out.push_back({path, "'" + path + "' is not a valid name: '" + text + "'", name_rule_text()});
        return;
      }
      if (!s.enum_values.empty()) {
        for (const auto& e : s.enum_values) {
          if (e == text) return;
          if (s.enum_case_insensitive && to_lower(e) == to_lower(text)) {
            v = e;
            return;
          }
        }
        out.push_back({path, "'" + path + "' must be one of " + join(s.enum_values, ", ") + ", not '" + text + "'", ""});
      }
      return;
    }
    case FieldType::boolean:
      if (!v.is_boolean()) return wrong_type();
      return;
    case FieldType::integer: {
      if (!v.is_number_integer()) return wrong_type();
      auto n = v.get<long long>();
      if (s.min < s.max && (n < s.min || n > s.max)) {
        out.push_back({path,
                       "'" + path + "' must be between " + std::to_string(s.min) + " and " + std::to_string(s.max) +
                           ", not " + std::to_string(n),
                       ""});
      }
      return;
    }
    case FieldType::number:
      if (!v.is_number()) return wrong_type();
      return;
    case FieldType::array:
      if (v.is_null()) {
        v = json::array();
        return;
      }
      if (!v.is_array()) return wrong_type();
      for (size_t i = 0; i < v.size(); ++i) check(v[i], *s.element, path + "[" + std::to_string(i) + "]", out);
      return;
    case FieldType::map:
      if (v.is_null()) {
        v = json::object();
        return;
      }
      if (!v.is_object()) return wrong_type();
      for (auto it = v.begin(); it != v.end(); ++it) check(it.value(), *s.element, path + "." + it.key(), out);
      return;
    case FieldType::object: {
      if (v.is_null()) v = json::object();
      if (!v.is_object()) return wrong_type();
      json canonical = json::object();
      std::vector<std::string> known;
      for (const auto& f : s.fields) known.push_back(f.name);
      for (auto it = v.begin(); it != v.end(); ++it) {
        const Field* match = nullptr;
        for (const auto& f : s.fields) {
          if (f.name == it.key()) {
            match = &f;
            break;
          }
        }
        if (!match) {
          for (const auto& f : s.fields) {
            if (to_lower(f.name) == to_lower(it.key())) {
              match = &f;
              break;
            }
          }
        }
        std::string child = path.empty() ? it.key() : path + "." + it.key();
        if (!match) {
          bool ignored = false;
          for (const auto& ig : s.ignored) ignored = ignored || to_lower(ig) == to_lower(it.key());
          if (ignored) continue;
          std::string suggestion = closest_match(it.key(), known);
          std::string hint = suggestion.empty()
                                 ? (known.empty() ? "this mapping takes no fields" : "known fields: " + join(known, ", "))
                                 : "did you mean '" + suggestion + "'?";
          out.push_back({child, "unknown field '" + child + "'", hint});
          return;
        }
        if (canonical.contains(match->name)) {
          out.push_back({child, "field '" + child + "' is given twice (field names match case-insensitively)", ""});
          return;
        }
        json value = it.value();
        check(value, match->schema, path.empty() ? match->name : path + "." + match->name, out);
        if (!out.empty()) return;
        canonical[match->name] = std::move(value);
      }
      for (const auto& f : s.fields) {
        if (!f.required) continue;
        const auto found = canonical.find(f.name);
        bool missing = found == canonical.end() || found->is_null() || (found->is_string() && found->get_ref<const std::string&>().empty());
        if (missing) {
          std::string child = path.empty() ? f.name : path + "." + f.name;
          out.push_back({path, "missing required field '" + child + "'", ""});
          return;
        }
      }
      v = std::move(canonical);
      return;
    }
  }
}

}  // namespace

std::vector<Violation> validate_and_canonicalise(json& value, const Schema& schema, const std::string& path) {
  std::vector<Violation> out;
  check(value, schema, path, out);
  return out;
}

}  // namespace emco::resource
