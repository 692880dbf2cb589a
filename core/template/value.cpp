#include "core/template/value.hpp"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/template/format.hpp"
#include "core/util/error.hpp"

namespace emco::tmpl {

Value::Value(std::string s) : m_kind(Kind::string), m_ptr(std::make_shared<std::string>(std::move(s))) {}
Value Value::shared_string(std::shared_ptr<const std::string> s) {
  Value v;
  v.m_kind = Kind::string;
  v.m_ptr = std::const_pointer_cast<std::string>(std::move(s));
  return v;
}
Value::Value(List l) : m_kind(Kind::list), m_ptr(std::make_shared<List>(std::move(l))) {}
Value::Value(Map m) : m_kind(Kind::map), m_ptr(std::make_shared<Map>(std::move(m))) {}
Value::Value(std::shared_ptr<const Object> o) {
  if (o) {
    m_kind = Kind::object;
    m_ptr = std::make_shared<std::shared_ptr<const Object>>(std::move(o));
  }
}

namespace {
[[noreturn]] void wrong(const char* what) { throw std::logic_error(std::string("tmpl::Value is not ") + what); }
}  // namespace

bool Value::as_bool() const {
  if (m_kind != Kind::boolean) wrong("a bool");
  return m_bool;
}
std::int64_t Value::as_int() const {
  if (m_kind != Kind::integer) wrong("an integer");
  return m_int;
}
double Value::as_float() const {
  if (m_kind == Kind::integer) return static_cast<double>(m_int);
  if (m_kind != Kind::floating) wrong("a number");
  return m_float;
}
const std::string& Value::as_string() const {
  if (m_kind != Kind::string) wrong("a string");
  return *static_cast<const std::string*>(m_ptr.get());
}
const List& Value::as_list() const {
  if (m_kind != Kind::list) wrong("a list");
  return *static_cast<const List*>(m_ptr.get());
}
const Map& Value::as_map() const {
  if (m_kind != Kind::map) wrong("a map");
  return *static_cast<const Map*>(m_ptr.get());
}
Map& Value::mutable_map() const {
  if (m_kind != Kind::map) wrong("a map");
  return *static_cast<Map*>(m_ptr.get());
}
const std::shared_ptr<const Object>& Value::as_object() const {
  if (m_kind != Kind::object) wrong("an object");
  return *static_cast<const std::shared_ptr<const Object>*>(m_ptr.get());
}

const Value* Value::find(std::string_view key) const {
  if (m_kind != Kind::map) return nullptr;
  const Map& m = as_map();
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

bool Value::truthy() const {
  switch (m_kind) {
    case Kind::null: return false;
    case Kind::boolean: return m_bool;
    case Kind::integer: return m_int != 0;
    case Kind::floating: return m_float != 0;
    case Kind::string: return !as_string().empty();
    case Kind::list: return !as_list().empty();
    case Kind::map: return !as_map().empty();
    case Kind::object: {
      auto d = as_object()->data();
      return d ? d->truthy() : true;
    }
  }
  return false;
}

std::string Value::go_type() const {
  switch (m_kind) {
    case Kind::null: return "<nil>";
    case Kind::boolean: return "bool";
    case Kind::integer: return m_int_type == IntType::int_ ? "int" : "int64";
    case Kind::floating: return "float64";
    case Kind::string: return "string";
    case Kind::list: return "[]interface {}";
    case Kind::map: return "map[string]interface {}";
    case Kind::object: return as_object()->type_name();
  }
  return "";
}

std::string Value::go_kind() const {
  switch (m_kind) {
    case Kind::null: return "invalid";
    case Kind::boolean: return "bool";
    case Kind::integer: return m_int_type == IntType::int_ ? "int" : "int64";
    case Kind::floating: return "float64";
    case Kind::string: return "string";
    case Kind::list: return "slice";
    case Kind::map: return "map";
    case Kind::object: {
      auto d = as_object()->data();
      if (d) return d->go_kind();
      return as_object()->type_name().starts_with("*") ? "ptr" : "struct";
    }
  }
  return "";
}

Value Value::deep_copy() const {
  switch (m_kind) {
    case Kind::list: {
      List out;
      out.reserve(as_list().size());
      for (const auto& v : as_list()) out.push_back(v.deep_copy());
      return Value(std::move(out));
    }
    case Kind::map: {
      Map out;
      // In key order: each key goes at the end, without a search.
      for (const auto& [k, v] : as_map()) out.emplace_hint(out.end(), k, v.deep_copy());
      return Value(std::move(out));
    }
    default: return *this;
  }
}

bool deep_equal(const Value& a, const Value& b) {
  if (a.m_kind != b.m_kind) return false;
  switch (a.m_kind) {
    case Kind::null: return true;
    case Kind::boolean: return a.m_bool == b.m_bool;
    case Kind::integer: return a.m_int == b.m_int && a.m_int_type == b.m_int_type;
    case Kind::floating: return a.m_float == b.m_float;
    case Kind::string: return a.as_string() == b.as_string();
    case Kind::list: {
      const auto& x = a.as_list();
      const auto& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!deep_equal(x[i], y[i])) return false;
      return true;
    }
    case Kind::map: {
      const auto& x = a.as_map();
      const auto& y = b.as_map();
      if (x.size() != y.size()) return false;
      for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j)
        if (i->first != j->first || !deep_equal(i->second, j->second)) return false;
      return true;
    }
    case Kind::object: return a.as_object() == b.as_object();
  }
  return false;
}

Value Value::from_json(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return Value();
    case nlohmann::json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::integer(j.get<std::int64_t>(), IntType::int64);
    case nlohmann::json::value_t::number_unsigned:
      return Value::integer(static_cast<std::int64_t>(j.get<std::uint64_t>()), IntType::int64);
    case nlohmann::json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      List l;
      l.reserve(j.size());
      for (const auto& e : j) l.push_back(from_json(e));
      return Value(std::move(l));
    }
    case nlohmann::json::value_t::object: {
      Map m;
      for (auto it = j.begin(); it != j.end(); ++it) m.emplace(it.key(), from_json(it.value()));
      return Value(std::move(m));
    }
    default: return Value();
  }
}

nlohmann::json Value::to_json() const {
  switch (m_kind) {
    case Kind::null: return nullptr;
    case Kind::boolean: return m_bool;
    case Kind::integer: return m_int;
    case Kind::floating: return m_float;
    case Kind::string: return as_string();
    case Kind::list: {
      auto out = nlohmann::json::array();
      for (const auto& v : as_list()) out.push_back(v.to_json());
      return out;
    }
    case Kind::map: {
      auto out = nlohmann::json::object();
      for (const auto& [k, v] : as_map()) out[k] = v.to_json();
      return out;
    }
    case Kind::object: {
      auto d = as_object()->data();
      if (!d) fail(ErrorKind::invalid, "cannot convert '" + as_object()->type_name() + "' to JSON");
      return d->to_json();
    }
  }
  return nullptr;
}

Object::~Object() = default;
std::optional<Value> Object::field(std::string_view) const { return std::nullopt; }
bool Object::has_method(std::string_view) const { return false; }
Value Object::call_method(std::string_view name, const std::vector<Value>&) const {
  fail(ErrorKind::invalid, "'" + type_name() + "' has no method '" + std::string(name) + "'");
}
std::optional<Value> Object::data() const { return std::nullopt; }
std::optional<std::string> Object::go_string() const { return std::nullopt; }

// ---- JSON text as encoding/json writes it ----

namespace {
void json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  static const char* hex = "0123456789abcdef";
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '<': case '>': case '&':
        out += "\\u00";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 15]);
        } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
          out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
          i += 2;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

void json_value(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::null: out += "null"; break;
    case Kind::boolean: out += v.as_bool() ? "true" : "false"; break;
    case Kind::integer: out += std::to_string(v.as_int()); break;
    case Kind::floating: {
      double f = v.as_float();
      if (std::isnan(f) || std::isinf(f)) fail(ErrorKind::invalid, "json: unsupported value: " + format_float_g(f));
      out += format_json_float(f);
      break;
    }
    case Kind::string: json_string(out, v.as_string()); break;
    case Kind::list: {
      out.push_back('[');
      bool first = true;
      for (const auto& e : v.as_list()) {
        if (!first) out.push_back(',');
        first = false;
        json_value(out, e);
      }
      out.push_back(']');
      break;
    }
    case Kind::map: {
      out.push_back('{');
      bool first = true;
      for (const auto& [k, e] : v.as_map()) {
        if (!first) out.push_back(',');
        first = false;
        json_string(out, k);
        out.push_back(':');
        json_value(out, e);
      }
      out.push_back('}');
      break;
    }
    case Kind::object: {
      auto d = v.as_object()->data();
      if (!d) {
        out += "{}";
      } else {
        json_value(out, *d);
      }
      break;
    }
  }
}
}  // namespace

std::string to_json_text(const Value& v) {
  std::string out;
  json_value(out, v);
  return out;
}

}  // namespace emco::tmpl
