#include "core/helm/schema.hpp"

#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <span>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "core/util/utf8.hpp"

namespace emco::helm {
using nlohmann::json;

namespace {

// The schema keywords the validator reads. An object node records which of them it has
// (Node::keywords), so that the validator's dozen lookups per schema object, most of which find
// nothing, cost a bit test each.
enum class Keyword : std::uint8_t {
  ref, any_of, one_of, all_of, not_, if_, then_, else_, type, enum_, const_, multiple_of, minimum,
  exclusive_minimum, maximum, exclusive_maximum, min_length, max_length, pattern, min_items, max_items,
  unique_items, items, additional_items, required, min_properties, max_properties, properties,
  pattern_properties, additional_properties, dependencies, count
};
constexpr std::string_view k_keyword_names[] = {
    "$ref", "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "type", "enum", "const", "multipleOf", "minimum",
    "exclusiveMinimum", "maximum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems",
    "uniqueItems", "items", "additionalItems", "required", "minProperties", "maxProperties", "properties",
    "patternProperties", "additionalProperties", "dependencies"};
static_assert(std::size(k_keyword_names) == static_cast<std::size_t>(Keyword::count) && std::size(k_keyword_names) <= 32);

// Per length, the bits of the keywords that long ("additionalProperties", the longest, has 20).
constexpr auto k_keywords_by_length = [] {
  std::array<std::uint32_t, 21> bits{};
  for (std::size_t i = 0; i < std::size(k_keyword_names); ++i) bits[k_keyword_names[i].size()] |= std::uint32_t{1} << i;
  return bits;
}();

// The bit of the keyword `key` names, 0 for any other key.
std::uint32_t keyword_bit(std::string_view key) {
  if (key.size() >= k_keywords_by_length.size()) return 0;
  for (std::uint32_t left = k_keywords_by_length[key.size()]; left != 0; left &= left - 1) {
    const int i = std::countr_zero(left);
    if (k_keyword_names[i] == key) return std::uint32_t{1} << i;
  }
  return 0;
}

// Whether [p, end) holds only ASCII from 0x20 on and no backslash (a JSON string's run that needs no
// decoding or UTF-8 check), eight bytes at a time. Exact: a byte below 0x20 or from 0x80, or a
// backslash, always shows.
bool plain_ascii(const char* p, const char* end) {
  constexpr std::uint64_t k_ones = 0x0101010101010101ULL, k_highs = 0x8080808080808080ULL;
  constexpr std::uint64_t k_controls = 0x2020202020202020ULL, k_backslashes = 0x5C5C5C5C5C5C5C5CULL;
  for (; end - p >= 8; p += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    const std::uint64_t b = w ^ k_backslashes;  // a zero byte where w has a backslash
    // w & highs: non-ASCII; (w - 0x20..) & ~w & highs: a byte below 0x20 (given all are ASCII);
    // (b - 1..) & ~b & highs: a zero byte of b
    if ((w | ((w - k_controls) & ~w) | ((b - k_ones) & ~b)) & k_highs) return false;
  }
  for (; p != end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c >= 0x80 || c == '\\') return false;
  }
  return true;
}

// A JSON document as one array of nodes: the schema parsed from its text, the values converted
// from tmpl::Value. Parsing a schema into nlohmann's DOM (a std::map and a std::string per
// member, all freed again) was a tenth of the render of a chart with a large schema (bitnami
// redis's 154 KB); here a document is two vectors, and its strings are views into the schema's
// text or the values (escaped strings, rare in schemas, are decoded into the document).
class Doc {
public:
  enum class Type : std::uint8_t { null, boolean, integer, floating, string, array, object };
  struct Node {
    Type type = Type::null;
    bool boolean = false;
    bool is_unsigned = false;   // integer: `u` holds it (a non-negative literal), else `i`
    std::uint32_t keywords = 0; // object: the Keyword bits of its members' keys
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double number = 0;          // integer or floating, as a double
    std::string_view str;       // string
    std::string_view key;       // the member's key, for a member of an object
    // array/object: `count` children at `children` (m_nodes[first...]); an object's sorted by
    // key, one member per key (the last in the text, as nlohmann keeps)
    std::uint32_t first = 0;
    std::uint32_t count = 0;
    const Node* children = nullptr;

    bool is_object() const { return type == Type::object; }
    bool is_array() const { return type == Type::array; }
    bool is_string() const { return type == Type::string; }
    bool is_number() const { return type == Type::integer || type == Type::floating; }
    bool is_true() const { return type == Type::boolean && boolean; }
    std::span<const Node> kids() const { return {children, count}; }
    std::size_t size() const { return count; }
    // An object's member, or nullptr (also when this is no object).
    const Node* find(std::string_view k) const {
      if (type != Type::object) return nullptr;
      auto it = std::lower_bound(children, children + count, k,
                                 [](const Node& n, std::string_view x) { return n.key < x; });
      return it != children + count && it->key == k ? it : nullptr;
    }
    // The member named by keyword `k` (nullptr when there is none or this is no object).
    const Node* find(Keyword k) const {
      return keywords >> static_cast<unsigned>(k) & 1 ? find(k_keyword_names[static_cast<std::size_t>(k)]) : nullptr;
    }
    // nlohmann's get<size_t>() for the counts schemas give (minLength, maxItems, ...).
    std::size_t as_size() const {
      if (type == Type::integer) return is_unsigned ? u : static_cast<std::size_t>(i);
      return number > 0 ? static_cast<std::size_t>(number) : 0;
    }
  };

  // Strict RFC 8259 JSON, accepting exactly what nlohmann::json::parse accepts (a leading BOM,
  // no comments); false on a syntax error.
  bool parse(std::string_view text) {
    m_text = text;
    m_pos = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
    if (!parse_text()) return false;
    finish();
    return true;
  }

  // The values as Value::to_json() gives them (an Object through its data(); one without data
  // throws as to_json does).
  void convert(const tmpl::Value& v) {
    add(v, {});
    finish();
  }

  const Node& root() const { return m_nodes.back(); }

  // A JSON pointer ("" or "/a/b~1c/0") into the document, as nlohmann's json_pointer resolves
  // it; nullptr when it names nothing.
  const Node* resolve(std::string_view pointer) const {
    const Node* n = &root();
    if (pointer.empty()) return n;
    if (pointer.front() != '/') return nullptr;
    while (!pointer.empty()) {
      pointer.remove_prefix(1);
      std::size_t slash = std::min(pointer.find('/'), pointer.size());
      std::string token;
      for (std::size_t k = 0; k < slash; ++k) {
        if (pointer[k] != '~') {
          token.push_back(pointer[k]);
          continue;
        }
        if (k + 1 >= slash || (pointer[k + 1] != '0' && pointer[k + 1] != '1')) return nullptr;
        token.push_back(pointer[++k] == '0' ? '~' : '/');
      }
      pointer.remove_prefix(slash);
      if (n->is_object()) {
        n = n->find(token);
      } else if (n->is_array()) {
        std::size_t idx = 0;
        auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), idx);
        if (token.empty() || ec != std::errc() || end != token.data() + token.size() ||
            (token.size() > 1 && token[0] == '0') || idx >= n->count)
          return nullptr;
        n = &n->children[idx];
      } else {
        return nullptr;
      }
      if (!n) return nullptr;
    }
    return n;
  }

private:
  std::string_view m_text;
  std::size_t m_pos = 0;
  std::vector<Node> m_nodes;      // finished children blocks, the root last
  std::vector<Node> m_open;       // the children of the containers being built
  std::deque<std::string> m_decoded;  // escaped strings, decoded
  std::deque<tmpl::Value> m_data;     // Objects' data() the nodes view into

  struct Frame {
    std::size_t start;  // its first child in m_open
    bool object;
    std::string_view key;
  };

  // Moves the children m_open[start..] into a block of m_nodes and leaves the container in their
  // place. `sort`: an object parsed from the schema's text, whose members are sorted by key here
  // (the last of equal keys kept) and whose keywords are noted.
  void close(std::size_t start, Type type, std::string_view key, bool sort) {
    auto begin = m_open.begin() + static_cast<std::ptrdiff_t>(start);
    if (sort) {
      auto by_key = [](const Node& a, const Node& b) { return a.key < b.key; };
      // Most objects have a few members: a binary insertion sort (stable) moves them in place,
      // where std::stable_sort allocates a buffer per object.
      if (m_open.end() - begin <= 16) {
        for (auto it = begin; it != m_open.end(); ++it)
          std::rotate(std::upper_bound(begin, it, *it, by_key), it, it + 1);
      } else {
        std::stable_sort(begin, m_open.end(), by_key);
      }
      // of equal keys the last parsed wins
      auto out = begin;
      for (auto it = begin; it != m_open.end(); ++it) {
        if (it + 1 != m_open.end() && (it + 1)->key == it->key) continue;
        *out++ = *it;
      }
      m_open.erase(out, m_open.end());
    }
    Node c;
    c.type = type;
    c.key = key;
    if (sort)
      for (auto it = m_open.begin() + static_cast<std::ptrdiff_t>(start); it != m_open.end(); ++it)
        c.keywords |= keyword_bit(it->key);
    c.first = static_cast<std::uint32_t>(m_nodes.size());
    c.count = static_cast<std::uint32_t>(m_open.size() - start);
    m_nodes.insert(m_nodes.end(), begin, m_open.end());
    m_open.resize(start);
    m_open.push_back(c);
  }

  // Points every container at its children once no block moves any more.
  void finish() {
    m_nodes.push_back(m_open.back());
    m_open.clear();
    for (auto& n : m_nodes)
      if (n.type == Type::array || n.type == Type::object) n.children = m_nodes.data() + n.first;
  }

  void add(const tmpl::Value& v, std::string_view key) {
    Node n;
    n.key = key;
    switch (v.kind()) {
      case tmpl::Kind::null: break;
      case tmpl::Kind::boolean:
        n.type = Type::boolean;
        n.boolean = v.as_bool();
        break;
      case tmpl::Kind::integer:
        n.type = Type::integer;
        n.i = v.as_int();
        n.number = static_cast<double>(n.i);
        break;
      case tmpl::Kind::floating:
        n.type = Type::floating;
        n.number = v.as_float();
        break;
      case tmpl::Kind::string:
        n.type = Type::string;
        n.str = v.as_string();
        break;
      case tmpl::Kind::list: {
        std::size_t start = m_open.size();
        for (const auto& e : v.as_list()) add(e, {});
        close(start, Type::array, key, false);
        return;
      }
      case tmpl::Kind::map: {
        std::size_t start = m_open.size();
        for (const auto& [k, e] : v.as_map()) add(e, k);
        close(start, Type::object, key, false);  // a Map is sorted and one entry per key
        return;
      }
      case tmpl::Kind::object: {
        auto d = v.as_object()->data();
        if (!d) fail(ErrorKind::invalid, "cannot convert '" + v.as_object()->type_name() + "' to JSON");
        add(m_data.emplace_back(std::move(*d)), key);
        return;
      }
    }
    m_open.push_back(n);
  }

  char peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }
  void skip_space() {
    // Pretty-printed schemas are half indentation: eight spaces at a time where they come so.
    const char* const begin = m_text.data();
    const char* const end = begin + m_text.size();
    const char* p = begin + m_pos;
    constexpr std::uint64_t k_spaces = 0x2020202020202020ULL;
    while (p != end) {
      std::uint64_t w = 0;
      if (end - p >= 8 && (std::memcpy(&w, p, 8), w == k_spaces)) {
        p += 8;
        continue;
      }
      if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') break;
      ++p;
    }
    m_pos = static_cast<std::size_t>(p - begin);
  }
  bool literal(std::string_view word) {
    if (m_text.substr(m_pos, word.size()) != word) return false;
    m_pos += word.size();
    return true;
  }

  // One loop over the text with an explicit stack of open containers (no recursion limit, as
  // nlohmann's parser has none).
  bool parse_text() {
    std::vector<Frame> stack;
    std::string_view key;  // the key of the value about to be parsed
    while (true) {
      skip_space();
      char c = peek();
      if (c == '{' || c == '[') {
        ++m_pos;
        stack.push_back({m_open.size(), c == '{', key});
        skip_space();
        if (peek() == (c == '{' ? '}' : ']')) {
          ++m_pos;
          close(stack.back().start, c == '{' ? Type::object : Type::array, key, false);
          stack.pop_back();
        } else {
          if (c == '{' && !member_key(key)) return false;
          if (c == '[') key = {};
          continue;
        }
      } else {
        Node n;
        n.key = key;
        if (!scalar(n)) return false;
        m_open.push_back(n);
      }
      // after a value: the next member or element, or the end of containers
      while (true) {
        skip_space();
        if (stack.empty()) return m_pos == m_text.size();
        Frame& f = stack.back();
        char d = peek();
        ++m_pos;
        if (d == ',') {
          if (f.object) {
            skip_space();
            if (!member_key(key)) return false;
          } else {
            key = {};
          }
          break;
        }
        if (d != (f.object ? '}' : ']')) return false;
        close(f.start, f.object ? Type::object : Type::array, f.key, f.object);
        stack.pop_back();
      }
    }
  }

  // `"key" :` before a member's value.
  bool member_key(std::string_view& key) {
    if (peek() != '"' || !string(key)) return false;
    skip_space();
    if (peek() != ':') return false;
    ++m_pos;
    return true;
  }

  bool scalar(Node& n) {
    char c = peek();
    if (c == '"') {
      n.type = Type::string;
      return string(n.str);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number(n);
    if (literal("true")) {
      n.type = Type::boolean;
      n.boolean = true;
      return true;
    }
    if (literal("false")) {
      n.type = Type::boolean;
      return true;
    }
    return literal("null");
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  bool number(Node& n) {
    std::size_t start = m_pos;
    bool negative = peek() == '-';
    if (negative) ++m_pos;
    if (peek() == '0') {
      ++m_pos;
    } else if (digit(peek())) {
      while (digit(peek())) ++m_pos;
    } else {
      return false;
    }
    bool integral = true;
    if (peek() == '.') {
      ++m_pos;
      if (!digit(peek())) return false;
      while (digit(peek())) ++m_pos;
      integral = false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++m_pos;
      if (peek() == '+' || peek() == '-') ++m_pos;
      if (!digit(peek())) return false;
      while (digit(peek())) ++m_pos;
      integral = false;
    }
    const char* b = m_text.data() + start;
    const char* e = m_text.data() + m_pos;
    // as nlohmann: integers in range are integers (unsigned when not negative), others doubles
    if (integral) {
      n.type = Type::integer;
      n.is_unsigned = !negative;
      auto r = negative ? std::from_chars(b, e, n.i) : std::from_chars(b, e, n.u);
      if (r.ec == std::errc()) {
        n.number = negative ? static_cast<double>(n.i) : static_cast<double>(n.u);
        return true;
      }
    }
    n.type = Type::floating;
    n.is_unsigned = false;
    n.number = std::strtod(std::string(b, e).c_str(), nullptr);
    return std::isfinite(n.number);  // nlohmann rejects a number that overflows a double
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool hex4(std::uint32_t& v) {
    v = 0;
    for (int k = 0; k < 4; ++k) {
      int h = hex(peek());
      if (h < 0) return false;
      v = (v << 4) | static_cast<std::uint32_t>(h);
      ++m_pos;
    }
    return true;
  }

  // A string at '"': a view into the text when it has no escapes. Control characters must be
  // escaped, the bytes must be UTF-8, \u escapes must pair their surrogates (as nlohmann).
  bool string(std::string_view& out) {
    std::size_t start = ++m_pos;
    // Nearly every string of a schema is plain ASCII up to its closing quote: found with memchr
    // and checked eight bytes at a time. Any other goes the careful way below.
    if (const void* q = std::memchr(m_text.data() + start, '"', m_text.size() - start)) {
      const auto stop = static_cast<std::size_t>(static_cast<const char*>(q) - m_text.data());
      if (plain_ascii(m_text.data() + start, m_text.data() + stop)) {
        m_pos = stop + 1;
        out = m_text.substr(start, stop - start);
        return true;
      }
    }
    bool ascii = true;
    while (true) {
      if (m_pos >= m_text.size()) return false;
      auto c = static_cast<unsigned char>(m_text[m_pos]);
      if (c == '"' || c == '\\') break;
      if (c < 0x20) return false;
      ascii = ascii && c < 0x80;
      ++m_pos;
    }
    std::string_view run = m_text.substr(start, m_pos - start);
    if (!ascii && !utf8::valid(run)) return false;
    if (m_text[m_pos] == '"') {
      ++m_pos;
      out = run;
      return true;
    }
    std::string s(run);
    while (true) {
      if (m_pos >= m_text.size()) return false;
      auto c = static_cast<unsigned char>(m_text[m_pos]);
      if (c == '"') break;
      if (c < 0x20) return false;
      if (c != '\\') {
        std::size_t from = m_pos;
        while (m_pos < m_text.size() && m_text[m_pos] != '"' && m_text[m_pos] != '\\' &&
               static_cast<unsigned char>(m_text[m_pos]) >= 0x20)
          ++m_pos;
        std::string_view plain = m_text.substr(from, m_pos - from);
        if (!utf8::valid(plain)) return false;
        s += plain;
        continue;
      }
      ++m_pos;
      char e = peek();
      ++m_pos;
      switch (e) {
        case '"': s.push_back('"'); break;
        case '\\': s.push_back('\\'); break;
        case '/': s.push_back('/'); break;
        case 'b': s.push_back('\b'); break;
        case 'f': s.push_back('\f'); break;
        case 'n': s.push_back('\n'); break;
        case 'r': s.push_back('\r'); break;
        case 't': s.push_back('\t'); break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t lo = 0;
            if (peek() != '\\' || m_text.substr(m_pos + 1, 1) != "u") return false;
            m_pos += 2;
            if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8::append(s, static_cast<char32_t>(cp));
          break;
        }
        default: return false;
      }
    }
    ++m_pos;
    out = m_decoded.emplace_back(std::move(s));
    return true;
  }
};

using Node = Doc::Node;

// nlohmann's form of a node, for the messages that print schema values (enum, const) as
// emco always printed them.
json to_nlohmann(const Node& n) {
  switch (n.type) {
    case Doc::Type::null: return nullptr;
    case Doc::Type::boolean: return n.boolean;
    case Doc::Type::integer: return n.is_unsigned ? json(n.u) : json(n.i);
    case Doc::Type::floating: return n.number;
    case Doc::Type::string: return std::string(n.str);
    case Doc::Type::array: {
      json out = json::array();
      for (const auto& k : n.kids()) out.push_back(to_nlohmann(k));
      return out;
    }
    case Doc::Type::object: {
      json out = json::object();
      for (const auto& k : n.kids()) out[std::string(k.key)] = to_nlohmann(k);
      return out;
    }
  }
  return nullptr;
}

struct Problem {
  std::string field;
  std::string description;
};

// JSON type name as gojsonschema reports it: whole numbers are "integer".
std::string json_type(const Node& v) {
  switch (v.type) {
    case Doc::Type::null: return "null";
    case Doc::Type::boolean: return "boolean";
    case Doc::Type::integer: return "integer";
    case Doc::Type::floating: return std::isfinite(v.number) && v.number == std::floor(v.number) ? "integer" : "number";
    case Doc::Type::string: return "string";
    case Doc::Type::array: return "array";
    case Doc::Type::object: return "object";
  }
  return "undefined";
}

bool type_matches(std::string_view want, const Node& v) {
  std::string got = json_type(v);
  if (want == got) return true;
  return want == "number" && got == "integer";
}

// Numbers print as Go's %v of a big.Rat-backed value would for the common cases.
std::string num_text(const Node& v) {
  if (v.type == Doc::Type::integer) return v.is_unsigned ? std::to_string(v.u) : std::to_string(v.i);
  double d = v.number;
  if (d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
  std::ostringstream ss;
  ss << d;
  return ss.str();
}

bool json_equal(const Node& a, const Node& b) {
  if (a.is_number() && b.is_number()) return a.number == b.number;
  if (a.type != b.type) return false;
  switch (a.type) {
    case Doc::Type::null: return true;
    case Doc::Type::boolean: return a.boolean == b.boolean;
    case Doc::Type::string: return a.str == b.str;
    case Doc::Type::array:
      if (a.count != b.count) return false;
      for (std::size_t i = 0; i < a.count; ++i)
        if (!json_equal(a.children[i], b.children[i])) return false;
      return true;
    case Doc::Type::object:
      if (a.count != b.count) return false;
      for (const auto& m : a.kids()) {
        const Node* o = b.find(m.key);
        if (!o || !json_equal(m, *o)) return false;
      }
      return true;
    default: return false;
  }
}

class Validator {
public:
  explicit Validator(const Doc& schema) : m_schema(schema) {}

  void validate(const Node& schema, const Node& v, const std::string& field, std::vector<Problem>& out,
                int depth = 0) {
    if (depth > 200) fail(ErrorKind::invalid, "values.schema.json: $ref recursion is too deep");
    if (schema.type == Doc::Type::boolean) {
      if (!schema.boolean) out.push_back({field, "False always fails validation"});
      return;
    }
    if (!schema.is_object()) return;
    if (const Node* ref = schema.find(Keyword::ref); ref && ref->is_string()) {
      validate(resolve(ref->str), v, field, out, depth + 1);
      return;
    }
    // Combinators
    if (const Node* any = schema.find(Keyword::any_of); any && any->is_array()) {
      bool ok = false;
      for (const auto& sub : any->kids()) ok = ok || passes(sub, v, field, depth);
      if (!ok) out.push_back({field, "Must validate at least one schema (anyOf)"});
    }
    if (const Node* one = schema.find(Keyword::one_of); one && one->is_array()) {
      int n = 0;
      for (const auto& sub : one->kids()) n += passes(sub, v, field, depth) ? 1 : 0;
      if (n != 1) out.push_back({field, "Must validate one and only one schema (oneOf)"});
    }
    if (const Node* all = schema.find(Keyword::all_of); all && all->is_array()) {
      bool ok = true;
      for (const auto& sub : all->kids()) ok = passes(sub, v, field, depth) && ok;
      if (!ok) {
        out.push_back({field, "Must validate all the schemas (allOf)"});
        for (const auto& sub : all->kids()) validate(sub, v, field, out, depth + 1);
      }
    }
    if (const Node* no = schema.find(Keyword::not_)) {
      if (passes(*no, v, field, depth)) out.push_back({field, "Must not validate the schema (not)"});
    }
    if (const Node* cond = schema.find(Keyword::if_)) {
      if (passes(*cond, v, field, depth)) {
        if (const Node* t = schema.find(Keyword::then_)) {
          if (!passes(*t, v, field, depth)) {
            out.push_back({field, "Must validate \"then\" as \"if\" was valid"});
            validate(*t, v, field, out, depth + 1);
          }
        }
      } else if (const Node* e = schema.find(Keyword::else_)) {
        if (!passes(*e, v, field, depth)) {
          out.push_back({field, "Must validate \"else\" as \"if\" was not valid"});
          validate(*e, v, field, out, depth + 1);
        }
      }
    }
    // type
    if (const Node* type = schema.find(Keyword::type)) {
      std::vector<std::string> types;
      if (type->is_string()) types.emplace_back(type->str);
      if (type->is_array())
        for (const auto& t : type->kids())
          if (t.is_string()) types.emplace_back(t.str);
      bool ok = types.empty();
      for (const auto& t : types) ok = ok || type_matches(t, v);
      if (!ok) {
        std::string expected = types.size() == 1 ? types[0] : "[" + join(types, ",") + "]";
        out.push_back({field, "Invalid type. Expected: " + expected + ", given: " + json_type(v)});
        return;
      }
    }
    if (const Node* allowed = schema.find(Keyword::enum_); allowed && allowed->is_array()) {
      bool ok = false;
      for (const auto& e : allowed->kids()) ok = ok || json_equal(e, v);
      if (!ok) {
        std::vector<std::string> texts;
        for (const auto& e : allowed->kids()) texts.push_back(to_nlohmann(e).dump());
        out.push_back({field, field + " must be one of the following: " + join(texts, ", ")});
      }
    }
    if (const Node* c = schema.find(Keyword::const_)) {
      if (!json_equal(*c, v)) out.push_back({field, field + " does not match: " + to_nlohmann(*c).dump()});
    }
    if (v.is_number()) check_number(schema, v, field, out);
    if (v.is_string()) check_string(schema, v.str, field, out);
    if (v.is_array()) check_array(schema, v, field, out, depth);
    if (v.is_object()) check_object(schema, v, field, out, depth);
  }

private:
  static std::string child(const std::string& field, std::string_view key) {
    return field == "(root)" ? std::string(key) : field + "." + std::string(key);
  }

  bool passes(const Node& schema, const Node& v, const std::string& field, int depth) {
    std::vector<Problem> probe;
    validate(schema, v, field, probe, depth + 1);
    return probe.empty();
  }

  const Node& resolve(std::string_view ref) {
    if (ref == "#") return m_schema.root();
    if (!ref.starts_with("#/"))
      fail(ErrorKind::invalid, "values.schema.json: only local $ref is supported, not '" + std::string(ref) + "'");
    const Node* n = m_schema.resolve(ref.substr(1));
    if (!n) fail(ErrorKind::invalid, "values.schema.json: $ref '" + std::string(ref) + "' does not resolve");
    return *n;
  }

  void check_number(const Node& s, const Node& v, const std::string& field, std::vector<Problem>& out) {
    double d = v.number;
    auto num = [&](Keyword key) -> const Node* {
      const Node* n = s.find(key);
      return n && n->is_number() ? n : nullptr;
    };
    auto flag = [&](Keyword key) {
      const Node* n = s.find(key);
      return n && n->is_true();
    };
    if (const Node* m = num(Keyword::multiple_of)) {
      double q = d / m->number;
      if (std::fabs(q - std::round(q)) > 1e-9) out.push_back({field, "Must be a multiple of " + num_text(*m)});
    }
    if (const Node* m = num(Keyword::minimum)) {
      if (flag(Keyword::exclusive_minimum) ? !(d > m->number) : !(d >= m->number))
        out.push_back({field, std::string(flag(Keyword::exclusive_minimum) ? "Must be greater than "
                                                                           : "Must be greater than or equal to ") +
                                  num_text(*m)});
    }
    if (const Node* m = num(Keyword::exclusive_minimum); m && !(d > m->number))
      out.push_back({field, "Must be greater than " + num_text(*m)});
    if (const Node* m = num(Keyword::maximum)) {
      if (flag(Keyword::exclusive_maximum) ? !(d < m->number) : !(d <= m->number))
        out.push_back({field, std::string(flag(Keyword::exclusive_maximum) ? "Must be less than "
                                                                           : "Must be less than or equal to ") +
                                  num_text(*m)});
    }
    if (const Node* m = num(Keyword::exclusive_maximum); m && !(d < m->number))
      out.push_back({field, "Must be less than " + num_text(*m)});
  }

  void check_string(const Node& s, std::string_view v, const std::string& field, std::vector<Problem>& out) {
    size_t runes = utf8::count(v);
    if (const Node* n = s.find(Keyword::min_length); n && n->is_number() && runes < n->as_size())
      out.push_back({field, "String length must be greater than or equal to " + num_text(*n)});
    if (const Node* n = s.find(Keyword::max_length); n && n->is_number() && runes > n->as_size())
      out.push_back({field, "String length must be less than or equal to " + num_text(*n)});
    if (const Node* p = s.find(Keyword::pattern); p && p->is_string()) {
      RE2 re(p->str, RE2::Quiet);
      if (!re.ok()) fail(ErrorKind::invalid, "values.schema.json: invalid pattern '" + std::string(p->str) + "'");
      if (!RE2::PartialMatch(v, re)) out.push_back({field, "Does not match pattern '" + std::string(p->str) + "'"});
    }
  }

  void check_array(const Node& s, const Node& v, const std::string& field, std::vector<Problem>& out, int depth) {
    if (const Node* n = s.find(Keyword::min_items); n && n->is_number() && v.size() < n->as_size())
      out.push_back({field, "Array must have at least " + num_text(*n) + " items"});
    if (const Node* n = s.find(Keyword::max_items); n && n->is_number() && v.size() > n->as_size())
      out.push_back({field, "Array must have at most " + num_text(*n) + " items"});
    if (const Node* n = s.find(Keyword::unique_items); n && n->is_true()) {
      for (size_t i = 0; i < v.size(); ++i)
        for (size_t j = i + 1; j < v.size(); ++j)
          if (json_equal(v.children[i], v.children[j])) {
            out.push_back({field, "array items[" + std::to_string(i) + "," + std::to_string(j) + "] must be unique"});
            i = v.size();
            break;
          }
    }
    if (const Node* items = s.find(Keyword::items)) {
      if (items->is_array()) {
        for (size_t i = 0; i < v.size() && i < items->size(); ++i)
          validate(items->children[i], v.children[i], child(field, std::to_string(i)), out, depth + 1);
        if (const Node* add = s.find(Keyword::additional_items); add && v.size() > items->size()) {
          if (add->type == Doc::Type::boolean && !add->boolean)
            out.push_back({field, "No additional items allowed on array"});
          else if (add->is_object())
            for (size_t i = items->size(); i < v.size(); ++i)
              validate(*add, v.children[i], child(field, std::to_string(i)), out, depth + 1);
        }
      } else {
        for (size_t i = 0; i < v.size(); ++i)
          validate(*items, v.children[i], child(field, std::to_string(i)), out, depth + 1);
      }
    }
  }

  void check_object(const Node& s, const Node& v, const std::string& field, std::vector<Problem>& out, int depth) {
    if (const Node* required = s.find(Keyword::required); required && required->is_array())
      for (const auto& r : required->kids())
        if (r.is_string() && !v.find(r.str)) out.push_back({field, std::string(r.str) + " is required"});
    if (const Node* n = s.find(Keyword::min_properties); n && n->is_number() && v.size() < n->as_size())
      out.push_back({field, "Must have at least " + num_text(*n) + " properties"});
    if (const Node* n = s.find(Keyword::max_properties); n && n->is_number() && v.size() > n->as_size())
      out.push_back({field, "Must have at most " + num_text(*n) + " properties"});
    const Node* props = s.find(Keyword::properties);
    if (props && !props->is_object()) props = nullptr;
    const Node* pattern_props = s.find(Keyword::pattern_properties);
    if (pattern_props && !pattern_props->is_object()) pattern_props = nullptr;
    const Node* additional = s.find(Keyword::additional_properties);
    for (const auto& member : v.kids()) {
      bool matched = false;
      if (const Node* p = props ? props->find(member.key) : nullptr) {
        matched = true;
        validate(*p, member, child(field, member.key), out, depth + 1);
      }
      if (pattern_props) {
        for (const auto& p : pattern_props->kids()) {
          RE2 re(p.key, RE2::Quiet);
          if (re.ok() && RE2::PartialMatch(member.key, re)) {
            matched = true;
            validate(p, member, child(field, member.key), out, depth + 1);
          }
        }
      }
      if (!matched && additional) {
        if (additional->type == Doc::Type::boolean && !additional->boolean)
          out.push_back({field, "Additional property " + std::string(member.key) + " is not allowed"});
        else if (additional->is_object())
          validate(*additional, member, child(field, member.key), out, depth + 1);
      }
    }
    if (const Node* deps = s.find(Keyword::dependencies); deps && deps->is_object()) {
      for (const auto& d : deps->kids()) {
        if (!v.find(d.key)) continue;
        if (d.is_array()) {
          for (const auto& need : d.kids())
            if (need.is_string() && !v.find(need.str))
              out.push_back({field, "Has a dependency on " + std::string(need.str)});
        } else {
          validate(d, v, field, out, depth + 1);
        }
      }
    }
  }

  const Doc& m_schema;
};

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
  Doc schema;
  if (!schema.parse(schema_json)) {
    // nlohmann's words for the error, as emco always gave them (it accepts the same JSON)
    try {
      [[maybe_unused]] json parsed = json::parse(schema_json);
    } catch (const json::exception& e) {
      fail(ErrorKind::invalid, std::string("invalid values.schema.json: ") + e.what());
    }
    fail(ErrorKind::invalid, "invalid values.schema.json");
  }
  Doc v;
  // null values are checked as {} (Helm's ValidateAgainstSingleSchema)
  v.convert(values.is_null() ? tmpl::Value(tmpl::Map{}) : values);
  std::vector<Problem> problems;
  Validator(schema).validate(schema.root(), v.root(), "(root)", problems);
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
