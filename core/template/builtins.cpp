// Go text/template's predefined functions, the conversion helpers Sprig relies on, and
// Helm's own template functions.
#include <cmath>
#include <cstdlib>

#include "core/template/format.hpp"
#include "core/template/funcs.hpp"
#include "core/util/error.hpp"

namespace emco::tmpl {

void func_fail(const std::string& message) { throw Error(ErrorKind::failed, message); }

std::string type_string(char sig) {
  switch (sig) {
    case 's': return "string";
    case 'i': return "int";
    case 'I': return "int64";
    case 'f': return "float64";
    case 'b': return "bool";
    case 'm': return "map[string]interface {}";
    case 'l': return "[]interface {}";
    default: return "interface {}";
  }
}

std::string to_str(const Value& v) {
  if (v.is_string()) return v.as_string();
  if (v.is_null()) return "<nil>";
  return format_value(v);
}

namespace {
std::string trim_zero_decimal(const std::string& s) {
  // spf13/cast's trimZeroDecimal: "12.0" -> "12", "12.50" unchanged
  bool found = false;
  for (size_t i = s.size(); i-- > 0;) {
    char c = s[i];
    if (c == '.') {
      return found ? s : s.substr(0, i);
    }
    if (c != '0') return s;
    found = false;
  }
  return s;
}
bool parse_go_int(const std::string& in, std::int64_t& out) {
  // strconv.ParseInt(s, 0, 64)
  std::string s;
  for (char c : in)
    if (c != '_') s.push_back(c);
  if (s.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    i = 1;
  }
  int base = 10;
  if (s.size() > i + 1 && s[i] == '0') {
    char p = s[i + 1];
    if (p == 'x' || p == 'X') base = 16, i += 2;
    else if (p == 'b' || p == 'B') base = 2, i += 2;
    else if (p == 'o' || p == 'O') base = 8, i += 2;
    else base = 8, i += 1;
  }
  if (i >= s.size()) return base == 8 && s.size() > 0 && s.back() == '0' ? (out = 0, true) : false;
  errno = 0;
  char* end = nullptr;
  unsigned long long u = std::strtoull(s.c_str() + i, &end, base);
  if (*end != '\0' || errno != 0 || s[i] == '-' || s[i] == '+') return false;
  if (neg) {
    if (u > 9223372036854775808ULL) return false;
    out = static_cast<std::int64_t>(0 - u);
  } else {
    if (u > 9223372036854775807ULL) return false;
    out = static_cast<std::int64_t>(u);
  }
  return true;
}
}  // namespace

std::int64_t to_int64(const Value& v) {
  switch (v.kind()) {
    case Kind::integer: return v.as_int();
    case Kind::floating: {
      double f = v.as_float();
      if (std::isnan(f)) return 0;
      if (f >= 9.2233720368547758e18) return INT64_MIN;
      if (f <= -9.2233720368547758e18) return INT64_MIN;
      return static_cast<std::int64_t>(f);
    }
    case Kind::boolean: return v.as_bool() ? 1 : 0;
    case Kind::string: {
      std::int64_t out = 0;
      if (parse_go_int(trim_zero_decimal(v.as_string()), out)) return out;
      return 0;
    }
    default: return 0;
  }
}

double to_float64(const Value& v) {
  switch (v.kind()) {
    case Kind::integer: return static_cast<double>(v.as_int());
    case Kind::floating: return v.as_float();
    case Kind::boolean: return v.as_bool() ? 1 : 0;
    case Kind::string: {
      const std::string& s = v.as_string();
      if (s.empty()) return 0;
      char* end = nullptr;
      double f = std::strtod(s.c_str(), &end);
      if (*end != '\0') return 0;
      return f;
    }
    default: return 0;
  }
}

bool to_bool(const Value& v) {
  switch (v.kind()) {
    case Kind::boolean: return v.as_bool();
    case Kind::integer: return v.as_int() != 0;
    case Kind::floating: return v.as_float() != 0;
    case Kind::string: {
      const std::string& s = v.as_string();
      return s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True";
    }
    default: return false;
  }
}

const List* as_list_like(const Value& v, Value& holder) {
  if (v.is_list()) return &v.as_list();
  if (v.is_object()) {
    auto d = v.as_object()->data();
    if (d && d->is_list()) {
      holder = *d;
      return &holder.as_list();
    }
  }
  return nullptr;
}

namespace {

enum class BasicKind { invalid, boolean, integer, floating, string, other };

BasicKind basic_kind(const Value& v) {
  switch (v.kind()) {
    case Kind::null: return BasicKind::invalid;
    case Kind::boolean: return BasicKind::boolean;
    case Kind::integer: return BasicKind::integer;
    case Kind::floating: return BasicKind::floating;
    case Kind::string: return BasicKind::string;
    default: return BasicKind::other;
  }
}

Value unwrap_object(const Value& v) {
  if (v.is_object()) {
    auto d = v.as_object()->data();
    if (d) return *d;
  }
  return v;
}

bool go_eq(const Value& a0, const std::vector<Value>& rest) {
  Value a = unwrap_object(a0);
  if (rest.empty()) func_fail("missing argument for comparison");
  BasicKind k1 = basic_kind(a);
  for (const Value& b0 : rest) {
    Value b = unwrap_object(b0);
    BasicKind k2 = basic_kind(b);
    bool truth = false;
    if (k1 != k2) {
      if (!a.is_null() && !b.is_null()) func_fail("incompatible types for comparison");
    } else {
      switch (k1) {
        case BasicKind::boolean: truth = a.as_bool() == b.as_bool(); break;
        case BasicKind::integer: truth = a.as_int() == b.as_int(); break;
        case BasicKind::floating: truth = a.as_float() == b.as_float(); break;
        case BasicKind::string: truth = a.as_string() == b.as_string(); break;
        case BasicKind::invalid: truth = true; break;
        default:
          func_fail("non-comparable type " + format_value(b) + ": " + b.go_type());
      }
    }
    if (truth) return true;
  }
  return false;
}

bool go_lt(const Value& a0, const Value& b0) {
  Value a = unwrap_object(a0), b = unwrap_object(b0);
  BasicKind k1 = basic_kind(a), k2 = basic_kind(b);
  if (k1 == BasicKind::invalid || k1 == BasicKind::other || k2 == BasicKind::invalid || k2 == BasicKind::other)
    func_fail("invalid type for comparison");
  if (k1 != k2) func_fail("incompatible types for comparison");
  switch (k1) {
    case BasicKind::boolean: func_fail("invalid type for comparison");
    case BasicKind::integer: return a.as_int() < b.as_int();
    case BasicKind::floating: return a.as_float() < b.as_float();
    case BasicKind::string: return a.as_string() < b.as_string();
    default: return false;
  }
}

std::int64_t index_arg(const Value& index, size_t cap, const char* what) {
  if (index.is_int()) {
    std::int64_t x = index.as_int();
    if (x < 0 || static_cast<size_t>(x) > cap) func_fail("index out of range: " + std::to_string(x));
    return x;
  }
  if (index.is_null()) func_fail(std::string("cannot index slice/array with nil"));
  func_fail(std::string("cannot index slice/array with type ") + index.go_type());
  (void)what;
}

std::string collect_string(const std::vector<Value>& args) {
  if (args.size() == 1 && args[0].is_string()) return args[0].as_string();
  return go_sprint(args);
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\0': out += "\xEF\xBF\xBD"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string js_escape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '"': out += "\\\""; break;
      case '<': out += "\\u003C"; break;
      case '>': out += "\\u003E"; break;
      case '&': out += "\\u0026"; break;
      case '=': out += "\\u003D"; break;
      default:
        if (c < ' ') {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 15]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out;
}

std::string query_escape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out.push_back(static_cast<char>(c));
    else if (c == ' ') out.push_back('+');
    else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

}  // namespace

void register_go_builtins(FuncMap& m) {
  // and/or are evaluated lazily by the engine; these bodies are never called.
  m["and"] = {[](Context&, std::vector<Value>& a) { return a.empty() ? Value() : a.back(); }, "aa*"};
  m["or"] = {[](Context&, std::vector<Value>& a) { return a.empty() ? Value() : a.back(); }, "aa*"};
  m["not"] = {[](Context&, std::vector<Value>& a) { return Value(!a[0].truthy()); }, "a"};
  m["len"] = {[](Context&, std::vector<Value>& a) -> Value {
                Value v = unwrap_object(a[0]);
                switch (v.kind()) {
                  case Kind::string: return Value(v.as_string().size());
                  case Kind::list: return Value(v.as_list().size());
                  case Kind::map: return Value(v.as_map().size());
                  case Kind::null: func_fail("len of nil pointer");
                  default: func_fail("len of type " + v.go_type());
                }
              },
              "a"};
  m["index"] = {[](Context&, std::vector<Value>& a) -> Value {
                  Value item = unwrap_object(a[0]);
                  if (item.is_null()) func_fail("index of untyped nil");
                  for (size_t i = 1; i < a.size(); ++i) {
                    const Value& index = a[i];
                    switch (item.kind()) {
                      case Kind::null: func_fail("index of nil pointer");
                      case Kind::list: {
                        const List& l = item.as_list();
                        std::int64_t x = index_arg(index, l.size(), "slice");
                        if (static_cast<size_t>(x) >= l.size())
                          func_fail("reflect: slice index out of range");
                        Value next = l[static_cast<size_t>(x)];
                        item = unwrap_object(next);
                        break;
                      }
                      case Kind::string: {
                        const std::string& s = item.as_string();
                        std::int64_t x = index_arg(index, s.size(), "string");
                        if (static_cast<size_t>(x) >= s.size()) func_fail("reflect: string index out of range");
                        item = Value::integer(static_cast<unsigned char>(s[static_cast<size_t>(x)]), IntType::int_);
                        break;
                      }
                      case Kind::map: {
                        if (!index.is_string()) {
                          if (index.is_null()) func_fail("value is nil; should be of type string");
                          func_fail("value has type " + index.go_type() + "; should be string");
                        }
                        const Value* f = item.find(index.as_string());
                        item = f ? unwrap_object(*f) : Value();
                        break;
                      }
                      default: func_fail("can't index item of type " + item.go_type());
                    }
                  }
                  return item;
                },
                "aa*"};
  m["slice"] = {[](Context&, std::vector<Value>& a) -> Value {
                  Value item = unwrap_object(a[0]);
                  if (item.is_null()) func_fail("slice of untyped nil");
                  if (a.size() > 4) func_fail("too many slice indexes: " + std::to_string(a.size() - 1));
                  size_t cap = 0;
                  if (item.is_string()) {
                    if (a.size() == 4) func_fail("cannot 3-index slice a string");
                    cap = item.as_string().size();
                  } else if (item.is_list()) {
                    cap = item.as_list().size();
                  } else {
                    func_fail("can't slice item of type " + item.go_type());
                  }
                  std::int64_t idx[3] = {0, static_cast<std::int64_t>(cap), static_cast<std::int64_t>(cap)};
                  for (size_t i = 1; i < a.size(); ++i) idx[i - 1] = index_arg(a[i], cap, "slice");
                  if (idx[0] > idx[1]) func_fail("invalid slice index: " + std::to_string(idx[0]) + " > " + std::to_string(idx[1]));
                  if (a.size() == 4 && idx[1] > idx[2])
                    func_fail("invalid slice index: " + std::to_string(idx[1]) + " > " + std::to_string(idx[2]));
                  if (item.is_string())
                    return Value(item.as_string().substr(static_cast<size_t>(idx[0]), static_cast<size_t>(idx[1] - idx[0])));
                  const List& l = item.as_list();
                  return Value(List(l.begin() + idx[0], l.begin() + idx[1]));
                },
                "aa*"};
  m["print"] = {[](Context&, std::vector<Value>& a) { return Value(go_sprint(a)); }, "a*"};
  m["println"] = {[](Context&, std::vector<Value>& a) { return Value(go_sprintln(a)); }, "a*"};
  m["printf"] = {[](Context&, std::vector<Value>& a) {
                   std::vector<Value> rest(a.begin() + 1, a.end());
                   return Value(go_sprintf(a[0].as_string(), rest));
                 },
                 "sa*"};
  m["html"] = {[](Context&, std::vector<Value>& a) { return Value(html_escape(collect_string(a))); }, "a*"};
  m["js"] = {[](Context&, std::vector<Value>& a) { return Value(js_escape(collect_string(a))); }, "a*"};
  m["urlquery"] = {[](Context&, std::vector<Value>& a) { return Value(query_escape(collect_string(a))); }, "a*"};
  m["call"] = {[](Context&, std::vector<Value>& a) -> Value {
                 if (a[0].is_null()) func_fail("call of nil");
                 func_fail("non-function " + format_value(a[0]) + " of type " + a[0].go_type());
               },
               "aa*"};
  m["eq"] = {[](Context&, std::vector<Value>& a) {
               std::vector<Value> rest(a.begin() + 1, a.end());
               return Value(go_eq(a[0], rest));
             },
             "aa*"};
  m["ne"] = {[](Context&, std::vector<Value>& a) { return Value(!go_eq(a[0], {a[1]})); }, "aa"};
  m["lt"] = {[](Context&, std::vector<Value>& a) { return Value(go_lt(a[0], a[1])); }, "aa"};
  m["le"] = {[](Context&, std::vector<Value>& a) { return Value(go_lt(a[0], a[1]) || go_eq(a[0], {a[1]})); }, "aa"};
  m["gt"] = {[](Context&, std::vector<Value>& a) { return Value(!(go_lt(a[0], a[1]) || go_eq(a[0], {a[1]}))); }, "aa"};
  m["ge"] = {[](Context&, std::vector<Value>& a) { return Value(!go_lt(a[0], a[1])); }, "aa"};
}

// ---- Helm ----

namespace {
Value yaml_error_map(const std::string& msg) {
  Map m;
  m["Error"] = Value(msg);
  return Value(std::move(m));
}

std::string toml_key(const std::string& k) {
  bool bare = !k.empty();
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) bare = false;
  return bare ? k : go_quote(k);
}

void toml_value(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::string: out += go_quote(v.as_string()); break;
    case Kind::integer: out += std::to_string(v.as_int()); break;
    case Kind::floating: {
      double f = v.as_float();
      std::string s = format_float_g(f);
      if (f == std::floor(f) && std::fabs(f) < 1e16) s = format_json_float(f) + ".0";
      out += s;
      break;
    }
    case Kind::boolean: out += v.as_bool() ? "true" : "false"; break;
    case Kind::list: {
      out += "[";
      bool first = true;
      for (const auto& e : v.as_list()) {
        if (!first) out += ", ";
        first = false;
        toml_value(out, e);
      }
      out += "]";
      break;
    }
    default: break;
  }
}

void toml_table(std::string& out, const Map& m, const std::string& prefix, const std::string& indent) {
  // BurntSushi/toml: plain keys first, then sub-tables
  for (const auto& [k, v] : m) {
    if (v.is_map() || v.is_null()) continue;
    if (v.is_list() && !v.as_list().empty() && v.as_list()[0].is_map()) continue;
    out += indent + toml_key(k) + " = ";
    toml_value(out, v);
    out += "\n";
  }
  for (const auto& [k, v] : m) {
    std::string name = prefix.empty() ? toml_key(k) : prefix + "." + toml_key(k);
    if (v.is_map()) {
      out += "\n" + indent + "[" + name + "]\n";
      toml_table(out, v.as_map(), name, indent + "  ");
    } else if (v.is_list() && !v.as_list().empty() && v.as_list()[0].is_map()) {
      for (const auto& e : v.as_list()) {
        out += "\n" + indent + "[[" + name + "]]\n";
        if (e.is_map()) toml_table(out, e.as_map(), name, indent + "  ");
      }
    }
  }
}
}  // namespace

void register_helm(FuncMap& m) {
  // Helm removes these two from Sprig's map: templates must not read the renderer's environment.
  m.erase("env");
  m.erase("expandenv");
  m["include"] = {[](Context& c, std::vector<Value>& a) { return Value(c.include(a[0].as_string(), a[1])); }, "sa"};
  m["tpl"] = {[](Context& c, std::vector<Value>& a) { return Value(c.tpl(a[0].as_string(), a[1])); }, "sa"};
  m["required"] = {[](Context&, std::vector<Value>& a) -> Value {
                     if (a[1].is_null() || (a[1].is_string() && a[1].as_string().empty())) func_fail(a[0].as_string());
                     return a[1];
                   },
                   "sa"};
  m["fail"] = {[](Context&, std::vector<Value>& a) -> Value { func_fail(a[0].as_string()); }, "s"};
  m["toYaml"] = {[](Context&, std::vector<Value>& a) -> Value {
                   try {
                     std::string s = to_yaml(a[0]);
                     if (!s.empty() && s.back() == '\n') s.pop_back();
                     return Value(std::move(s));
                   } catch (const Error&) {
                     return Value("");
                   }
                 },
                 "a"};
  m["mustToYaml"] = {[](Context&, std::vector<Value>& a) -> Value {
                       std::string s = to_yaml(a[0]);
                       if (!s.empty() && s.back() == '\n') s.pop_back();
                       return Value(std::move(s));
                     },
                     "a"};
  // The engine's parse of a text, shared between calls with that text (a chart's helpers parse
  // one rendered config many times): the map or list handed out is a copy, which templates may
  // change.
  m["fromYaml"] = {[](Context& c, std::vector<Value>& a) -> Value {
                     try {
                       const Value v = c.parsed_yaml(a[0].as_string(), "fromYaml");
                       if (v.is_null()) return Value(Map{});
                       if (!v.is_map())
                         return yaml_error_map("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal " +
                                               std::string(v.is_list() ? "array" : v.is_string() ? "string" : "number") +
                                               " into Go value of type map[string]interface {}");
                       return v.deep_copy();
                     } catch (const Error& e) {
                       return yaml_error_map(e.message());
                     }
                   },
                   "s"};
  m["fromYamlArray"] = {[](Context& c, std::vector<Value>& a) -> Value {
                          try {
                            const Value v = c.parsed_yaml(a[0].as_string(), "fromYamlArray");
                            if (v.is_null()) return Value(List{});
                            if (!v.is_list())
                              return Value(List{Value("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal "
                                                      "object into Go value of type []interface {}")});
                            return v.deep_copy();
                          } catch (const Error& e) {
                            return Value(List{Value(e.message())});
                          }
                        },
                        "s"};
  auto to_json = [](Context&, std::vector<Value>& a) -> Value {
    try {
      return Value(to_json_text(a[0]));
    } catch (const Error&) {
      return Value("");
    }
  };
  m["toJson"] = {to_json, "a"};
  m["mustToJson"] = {[](Context&, std::vector<Value>& a) -> Value { return Value(to_json_text(a[0])); }, "a"};
  m["fromJson"] = {[](Context&, std::vector<Value>& a) -> Value {
                     try {
                       Value v = parse_yaml(a[0].as_string(), YamlMode::helm, "fromJson");
                       if (v.is_map()) return v;
                       return yaml_error_map("json: cannot unmarshal into Go value of type map[string]interface {}");
                     } catch (const Error& e) {
                       return yaml_error_map(e.message());
                     }
                   },
                   "s"};
  m["fromJsonArray"] = {[](Context&, std::vector<Value>& a) -> Value {
                          try {
                            Value v = parse_yaml(a[0].as_string(), YamlMode::helm, "fromJsonArray");
                            if (v.is_list()) return v;
                            return Value(List{Value("json: cannot unmarshal into Go value of type []interface {}")});
                          } catch (const Error& e) {
                            return Value(List{Value(e.message())});
                          }
                        },
                        "s"};
  m["toToml"] = {[](Context&, std::vector<Value>& a) -> Value {
                   if (!a[0].is_map()) return Value("toml: top-level values must be Go maps or structs");
                   std::string out;
                   toml_table(out, a[0].as_map(), "", "");
                   return Value(out);
                 },
                 "a"};
  m["lookup"] = {[](Context&, std::vector<Value>&) -> Value { return Value(Map{}); }, "ssss"};
}

}  // namespace emco::tmpl
