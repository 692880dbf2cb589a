// Sprig v3's deterministic functions: strings, lists, dicts, math, defaults, encodings,
// type inspection, regular expressions (RE2 with Go's replacement syntax), semver, paths.
#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/template/format.hpp"
#include "core/template/funcs.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/semver.hpp"
#include "core/util/utf8.hpp"

namespace emco::tmpl {

namespace {

using Args = std::vector<Value>;

semver::Version parse_semver_or_fail(const std::string& text) {
  auto v = semver::parse_version(text);
  if (!v) func_fail("Invalid Semantic Version");
  return *v;
}

// ---- runes ----
// Go's []rune(s): invalid bytes become U+FFFD, one each.
std::vector<std::uint32_t> decode(const std::string& s) {
  std::vector<std::uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    char32_t r;
    i += utf8::decode(s, i, r);
    out.push_back(r);
  }
  return out;
}
bool is_upper(std::uint32_t r) { return (r >= 'A' && r <= 'Z') || (r >= 0xC0 && r <= 0xDE && r != 0xD7); }
bool is_lower(std::uint32_t r) { return (r >= 'a' && r <= 'z') || (r >= 0xDF && r <= 0xFF && r != 0xF7); }
bool is_digit(std::uint32_t r) { return r >= '0' && r <= '9'; }
bool is_space(std::uint32_t r) {
  return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0x85 || r == 0xA0 ||
         r == 0x2028 || r == 0x2029 || r == 0x3000 || r == 0x1680 || (r >= 0x2000 && r <= 0x200A) || r == 0x202F ||
         r == 0x205F;
}
std::uint32_t to_upper(std::uint32_t r) {
  if ((r >= 'a' && r <= 'z') || (r >= 0xE0 && r <= 0xFE && r != 0xF7)) return r - 32;
  return r;
}
std::uint32_t to_lower(std::uint32_t r) {
  if ((r >= 'A' && r <= 'Z') || (r >= 0xC0 && r <= 0xDE && r != 0xD7)) return r + 32;
  return r;
}
std::string map_runes(const std::string& s, std::uint32_t (*f)(std::uint32_t)) {
  std::string out;
  out.reserve(s.size());
  for (auto r : decode(s)) utf8::append(out, f(r));
  return out;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) {
    // strings.Replace with an empty old string inserts `to` around every rune
    std::string out = to;
    for (auto r : decode(s)) {
      utf8::append(out, r);
      out += to;
    }
    return out;
  }
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t f = s.find(from, pos);
    if (f == std::string::npos) break;
    out.append(s, pos, f - pos);
    out += to;
    pos = f + from.size();
  }
  out.append(s, pos);
  return out;
}

std::string trim_space(const std::string& s) {
  auto r = decode(s);
  size_t b = 0, e = r.size();
  while (b < e && is_space(r[b])) ++b;
  while (e > b && is_space(r[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) utf8::append(out, r[i]);
  return out;
}

std::string trim_cutset(const std::string& s, const std::string& cutset, bool left, bool right) {
  auto cs = decode(cutset);
  auto in = [&](std::uint32_t r) { return std::find(cs.begin(), cs.end(), r) != cs.end(); };
  auto r = decode(s);
  size_t b = 0, e = r.size();
  if (left)
    while (b < e && in(r[b])) ++b;
  if (right)
    while (e > b && in(r[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) utf8::append(out, r[i]);
  return out;
}

std::vector<std::string> split_str(const std::string& s, const std::string& sep, long n = -1) {
  std::vector<std::string> out;
  if (n == 0) return out;
  if (sep.empty()) {
    auto r = decode(s);
    for (size_t i = 0; i < r.size(); ++i) {
      if (n > 0 && static_cast<long>(out.size()) == n - 1) {
        std::string rest;
        for (size_t k = i; k < r.size(); ++k) utf8::append(rest, r[k]);
        out.push_back(rest);
        return out;
      }
      std::string one;
      utf8::append(one, r[i]);
      out.push_back(one);
    }
    return out;
  }
  size_t pos = 0;
  while (true) {
    if (n > 0 && static_cast<long>(out.size()) == n - 1) break;
    size_t f = s.find(sep, pos);
    if (f == std::string::npos) break;
    out.push_back(s.substr(pos, f - pos));
    pos = f + sep.size();
  }
  out.push_back(s.substr(pos));
  return out;
}

std::vector<std::string> strslice(const Value& v) {
  std::vector<std::string> out;
  Value holder;
  if (const List* l = as_list_like(v, holder)) {
    for (const auto& e : *l)
      if (!e.is_null()) out.push_back(to_str(e));
    return out;
  }
  if (v.is_null()) return out;
  out.push_back(to_str(v));
  return out;
}

Value string_list(const std::vector<std::string>& v) {
  List l;
  l.reserve(v.size());
  for (const auto& s : v) l.emplace_back(s);
  return Value(std::move(l));
}

bool empty(const Value& v) { return !v.truthy(); }

const List& need_list(const Value& v, const char* op, Value& holder) {
  if (v.is_null()) func_fail("runtime error: invalid memory address or nil pointer dereference");
  const List* l = as_list_like(v, holder);
  if (!l) func_fail(std::string("Cannot ") + op + " on type " + v.go_kind());
  return *l;
}

Value new_int64(std::int64_t i) { return Value::integer(i, IntType::int64); }

// ---- title/case helpers ----
std::string title(const std::string& s) {
  // strings.Title: uppercase letters that begin words (words separated by non-letter/digit/_/')
  std::string out;
  std::uint32_t prev = ' ';
  for (auto r : decode(s)) {
    bool sep;
    if (prev < 0x80) {
      sep = !((prev >= '0' && prev <= '9') || (prev >= 'a' && prev <= 'z') || (prev >= 'A' && prev <= 'Z') ||
              prev == '_');
    } else {
      sep = is_space(prev);
    }
    utf8::append(out, sep ? to_upper(r) : r);
    prev = r;
  }
  return out;
}

std::string untitle(const std::string& s) {
  std::string out;
  bool in_word = false;
  for (auto r : decode(s)) {
    if (is_space(r)) {
      in_word = false;
      utf8::append(out, r);
    } else {
      utf8::append(out, in_word ? r : to_lower(r));
      in_word = true;
    }
  }
  return out;
}

bool is_connector(std::uint32_t r) { return r == '-' || r == '_' || is_space(r); }

std::string camelcase(const std::string& s) {
  auto r = decode(s);
  std::string out;
  size_t i = 0;
  std::uint32_t r0 = 0;
  bool have = false;
  while (i < r.size()) {
    r0 = r[i++];
    if (!is_connector(r0)) {
      r0 = to_upper(r0);
      have = true;
      break;
    }
    utf8::append(out, r0);
  }
  if (!have) return out;
  while (i < r.size()) {
    std::uint32_t r1 = r0;
    r0 = r[i++];
    if (is_connector(r0) && is_connector(r1)) {
      utf8::append(out, r1);
      continue;
    }
    if (is_connector(r1)) r0 = to_upper(r0);
    else utf8::append(out, r1);
  }
  utf8::append(out, r0);
  return out;
}

std::string delimited_lower(const std::string& s, char connector) {
  // camelCase / PascalCase / separated words -> lower-case words joined by `connector`
  auto r = decode(s);
  std::string out;
  bool need_sep = false;
  for (size_t i = 0; i < r.size(); ++i) {
    std::uint32_t c = r[i];
    if (is_connector(c)) {
      if (!out.empty()) need_sep = true;
      continue;
    }
    bool boundary = false;
    if (i > 0 && is_upper(c)) {
      std::uint32_t p = r[i - 1];
      if (is_lower(p) || is_digit(p)) boundary = true;
      else if (is_upper(p) && i + 1 < r.size() && is_lower(r[i + 1])) boundary = true;
    }
    if ((need_sep || boundary) && !out.empty()) out.push_back(connector);
    need_sep = false;
    utf8::append(out, to_lower(c));
  }
  return out;
}

std::string swapcase(const std::string& s) {
  std::string out;
  for (auto r : decode(s)) utf8::append(out, is_upper(r) ? to_lower(r) : is_lower(r) ? to_upper(r) : r);
  return out;
}

std::string initials(const std::string& s) {
  std::string out;
  bool last_space = true;
  for (auto r : decode(s)) {
    if (is_space(r)) {
      last_space = true;
    } else {
      if (last_space) utf8::append(out, r);
      last_space = false;
    }
  }
  return out;
}

std::string wrap_custom(const std::string& str, std::int64_t wrap_length, std::string nl, bool wrap_long) {
  if (str.empty()) return "";
  if (nl.empty()) nl = "\n";
  if (wrap_length < 1) wrap_length = 1;
  size_t wl = static_cast<size_t>(wrap_length);
  size_t len = str.size();
  size_t offset = 0;
  std::string out;
  while (len - offset > wl) {
    if (str[offset] == ' ') {
      ++offset;
      continue;
    }
    size_t end = std::min(wl + offset + 1, len);
    size_t sp = str.substr(offset, end - offset).rfind(' ');
    if (sp != std::string::npos) {
      out.append(str, offset, sp);
      out += nl;
      offset = offset + sp + 1;
    } else if (wrap_long) {
      out.append(str, offset, wl);
      out += nl;
      offset += wl;
    } else {
      size_t e2 = wl + offset;
      size_t idx = str.find(' ', e2);
      if (idx == std::string::npos) {
        out.append(str, offset);
        offset = len;
      } else {
        out.append(str, offset, idx - offset);
        out += nl;
        offset = idx + 1;
      }
    }
  }
  out.append(str, offset);
  return out;
}

std::string abbreviate_full(const std::string& str, std::int64_t offset, std::int64_t max_width) {
  std::int64_t len = static_cast<std::int64_t>(str.size());
  if (str.empty()) return "";
  if (len <= max_width) return str;
  if (offset > len) offset = len;
  if (len - offset < max_width - 3) offset = len - (max_width - 3);
  if (offset <= 4) return str.substr(0, static_cast<size_t>(max_width - 3)) + "...";
  if (offset + max_width - 3 < len) {
    std::string rest = str.substr(static_cast<size_t>(offset));
    std::int64_t w = max_width - 3;
    std::string ab = static_cast<std::int64_t>(rest.size()) <= w ? rest : rest.substr(0, static_cast<size_t>(w - 3)) + "...";
    return "..." + ab;
  }
  return "..." + str.substr(static_cast<size_t>(len - (max_width - 3)));
}

// ---- base32 (base64 is core/util/base64) ----
std::string b32enc(const std::string& in) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 5) {
    std::uint64_t buf = 0;
    size_t n = std::min<size_t>(5, in.size() - i);
    for (size_t k = 0; k < 5; ++k) buf = (buf << 8) | (k < n ? static_cast<unsigned char>(in[i + k]) : 0);
    size_t chars = (n * 8 + 4) / 5;
    for (size_t k = 0; k < 8; ++k) out.push_back(k < chars ? tbl[(buf >> (35 - 5 * k)) & 31] : '=');
  }
  return out;
}

bool b32dec(const std::string& in, std::string& out) {
  out.clear();
  std::uint64_t buf = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= '2' && c <= '7') v = c - '2' + 26;
    else return false;
    buf = (buf << 5) | static_cast<std::uint64_t>(v);
    bits += 5;
    if (bits >= 8) {
      out.push_back(static_cast<char>((buf >> (bits - 8)) & 0xFF));
      bits -= 8;
    }
  }
  return true;
}

// ---- regex: Go's syntax through RE2, Go's $-expansion ----
std::shared_ptr<RE2> compile(const std::string& pattern) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<RE2>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(pattern);
  if (it != cache.end()) return it->second;
  RE2::Options o;
  o.set_log_errors(false);
  auto re = std::make_shared<RE2>(pattern, o);
  if (!re->ok()) func_fail("error parsing regexp: " + re->error() + ": `" + pattern + "`");
  if (cache.size() > 1000) cache.clear();
  cache.emplace(pattern, re);
  return re;
}

struct Match {
  std::vector<re2::StringPiece> groups;
};

// All non-overlapping matches as Go's regexp finds them (n < 0: all).
std::vector<Match> find_all(const RE2& re, const std::string& s, long n) {
  std::vector<Match> out;
  int ngroups = re.NumberOfCapturingGroups() + 1;
  size_t pos = 0;
  long prev_end = -1;
  re2::StringPiece input(s);
  while (pos <= s.size() && (n < 0 || static_cast<long>(out.size()) < n)) {
    Match m;
    m.groups.resize(static_cast<size_t>(ngroups));
    if (!re.Match(input, pos, s.size(), RE2::UNANCHORED, m.groups.data(), ngroups)) break;
    size_t ms = static_cast<size_t>(m.groups[0].data() - s.data());
    size_t me = ms + m.groups[0].size();
    bool accept = true;
    if (me == ms && static_cast<long>(ms) == prev_end) accept = false;  // empty match abutting the previous
    if (accept) {
      out.push_back(m);
      prev_end = static_cast<long>(me);
    }
    if (me > pos && me > ms) {
      pos = me;
    } else {
      // advance one rune
      if (ms >= s.size()) break;
      char32_t r;
      pos = std::max(pos, ms) + utf8::decode(s, ms, r);
      if (!accept) continue;
    }
  }
  return out;
}

std::string expand(const RE2& re, const std::string& tmpl, const Match& m) {
  std::string out;
  const auto& names = re.NamedCapturingGroups();
  for (size_t i = 0; i < tmpl.size();) {
    char c = tmpl[i];
    if (c != '$' || i + 1 >= tmpl.size()) {
      out.push_back(c);
      ++i;
      continue;
    }
    if (tmpl[i + 1] == '$') {
      out.push_back('$');
      i += 2;
      continue;
    }
    std::string name;
    size_t j = i + 1;
    if (tmpl[j] == '{') {
      size_t close = tmpl.find('}', j);
      if (close == std::string::npos) {
        out.push_back('$');
        ++i;
        continue;
      }
      name = tmpl.substr(j + 1, close - j - 1);
      bool ok = !name.empty();
      for (char ch : name)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) ok = false;
      if (!ok) {
        out.push_back('$');
        ++i;
        continue;
      }
      j = close + 1;
    } else {
      while (j < tmpl.size() && (std::isalnum(static_cast<unsigned char>(tmpl[j])) || tmpl[j] == '_')) ++j;
      name = tmpl.substr(i + 1, j - i - 1);
      if (name.empty()) {
        out.push_back('$');
        ++i;
        continue;
      }
    }
    i = j;
    bool numeric = std::all_of(name.begin(), name.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (numeric) {
      size_t idx = name.size() > 9 ? SIZE_MAX : std::stoul(name);
      if (idx < m.groups.size() && m.groups[idx].data()) out.append(m.groups[idx].data(), m.groups[idx].size());
    } else {
      auto it = names.find(name);
      if (it != names.end() && static_cast<size_t>(it->second) < m.groups.size() && m.groups[static_cast<size_t>(it->second)].data())
        out.append(m.groups[static_cast<size_t>(it->second)].data(), m.groups[static_cast<size_t>(it->second)].size());
    }
  }
  return out;
}

std::string regex_replace(const std::string& pattern, const std::string& s, const std::string& repl, bool literal) {
  auto re = compile(pattern);
  auto matches = find_all(*re, s, -1);
  std::string out;
  size_t last = 0;
  for (const auto& m : matches) {
    size_t ms = static_cast<size_t>(m.groups[0].data() - s.data());
    out.append(s, last, ms - last);
    out += literal ? repl : expand(*re, repl, m);
    last = ms + m.groups[0].size();
  }
  out.append(s, last);
  return out;
}

std::string quote_meta(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::strchr("\\.+*?()|[]{}^$", c) && c != '\0') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

// ---- merge (mergo semantics as Sprig uses them) ----
void merge_maps(Map& dst, const Map& src, bool overwrite, int depth) {
  if (depth > 100) func_fail("max recursion depth reached");
  for (const auto& [k, s] : src) {
    auto it = dst.find(k);
    if (s.is_null()) {
      if (overwrite) dst[k] = Value();
      continue;
    }
    if (s.is_map() && it != dst.end() && it->second.is_map()) {
      if (it->second.as_map().empty()) {
        if (overwrite) it->second = s;
        else merge_maps(it->second.mutable_map(), s.as_map(), overwrite, depth + 1);
        continue;
      }
      merge_maps(it->second.mutable_map(), s.as_map(), overwrite, depth + 1);
      continue;
    }
    if (it == dst.end()) {
      dst.emplace(k, s);
    } else if (overwrite || empty(it->second)) {
      it->second = s;
    }
  }
}

Value merge_fn(Args& a, bool overwrite) {
  Value dst = a[0];
  if (dst.is_null()) dst = Value(Map{});
  for (size_t i = 1; i < a.size(); ++i) {
    const Value& src = a[i];
    if (src.is_null()) continue;
    if (!src.is_map()) func_fail("wrong type for value; expected map[string]interface {}; got " + src.go_type());
    merge_maps(dst.mutable_map(), src.as_map(), overwrite, 0);
  }
  return dst;
}

// ---- decimal-ish float math (shopspring/decimal via Sprig) ----
double decimal_round(double v) {
  if (!std::isfinite(v)) return v;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return std::strtod(buf, nullptr);
}

double to_float_for_math(const Value& v) { return to_float64(v); }

std::int64_t checked_div(std::int64_t a, std::int64_t b) {
  if (b == 0) func_fail("runtime error: integer divide by zero");
  if (b == -1) return static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(a));  // wraps like Go
  return a / b;
}

// Go's int64 arithmetic wraps on overflow
std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

std::string path_clean(const std::string& p) {
  // path.Clean
  if (p.empty()) return ".";
  bool rooted = p[0] == '/';
  std::vector<std::string> parts;
  for (const auto& seg : split_str(p, "/")) {
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (!parts.empty() && parts.back() != "..") parts.pop_back();
      else if (!rooted) parts.push_back("..");
      continue;
    }
    parts.push_back(seg);
  }
  std::string out = rooted ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += "/";
    out += parts[i];
  }
  if (out.empty()) return ".";
  return out;
}

std::string path_base(std::string p) {
  if (p.empty()) return ".";
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t s = p.rfind('/');
  if (s != std::string::npos && p.size() > 1) p = p.substr(s + 1);
  return p.empty() ? "/" : p;
}

std::string path_dir(const std::string& p) {
  size_t s = p.rfind('/');
  std::string dir = s == std::string::npos ? "" : p.substr(0, s + 1);
  return path_clean(dir);
}

std::string path_ext(const std::string& p) {
  for (size_t i = p.size(); i-- > 0;) {
    if (p[i] == '/') break;
    if (p[i] == '.') return p.substr(i);
  }
  return "";
}

}  // namespace

void register_sprig(FuncMap& m) {
  // ---- strings ----
  m["upper"] = {[](Context&, Args& a) { return Value(map_runes(a[0].as_string(), to_upper)); }, "s"};
  m["lower"] = {[](Context&, Args& a) { return Value(map_runes(a[0].as_string(), to_lower)); }, "s"};
  m["title"] = {[](Context&, Args& a) { return Value(title(a[0].as_string())); }, "s"};
  m["untitle"] = {[](Context&, Args& a) { return Value(untitle(a[0].as_string())); }, "s"};
  m["repeat"] = {[](Context&, Args& a) -> Value {
                   std::int64_t n = a[0].as_int();
                   if (n < 0) func_fail("strings: negative Repeat count");
                   const std::string& s = a[1].as_string();
                   if (n > 0 && s.size() > (size_t{64} << 20) / static_cast<size_t>(n))
                     func_fail("strings: Repeat output length overflow");
                   std::string out;
                   out.reserve(s.size() * static_cast<size_t>(n));
                   for (std::int64_t i = 0; i < n; ++i) out += s;
                   return Value(std::move(out));
                 },
                 "is"};
  m["substr"] = {[](Context&, Args& a) -> Value {
                   std::int64_t start = a[0].as_int(), end = a[1].as_int();
                   const std::string& s = a[2].as_string();
                   std::int64_t len = static_cast<std::int64_t>(s.size());
                   if (start < 0) {
                     if (end < 0 || end > len) func_fail("runtime error: slice bounds out of range [:" + std::to_string(end) + "] with length " + std::to_string(len));
                     return Value(s.substr(0, static_cast<size_t>(end)));
                   }
                   if (end < 0 || end > len) {
                     if (start > len) func_fail("runtime error: slice bounds out of range [" + std::to_string(start) + ":" + std::to_string(len) + "]");
                     return Value(s.substr(static_cast<size_t>(start)));
                   }
                   if (start > end) func_fail("runtime error: slice bounds out of range [" + std::to_string(start) + ":" + std::to_string(end) + "]");
                   return Value(s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start)));
                 },
                 "iis"};
  m["nospace"] = {[](Context&, Args& a) {
                    std::string out;
                    for (auto r : decode(a[0].as_string()))
                      if (!is_space(r)) utf8::append(out, r);
                    return Value(out);
                  },
                  "s"};
  m["trunc"] = {[](Context&, Args& a) -> Value {
                  std::int64_t c = a[0].as_int();
                  const std::string& s = a[1].as_string();
                  std::int64_t len = static_cast<std::int64_t>(s.size());
                  if (c < 0 && len + c > 0) return Value(s.substr(static_cast<size_t>(len + c)));
                  if (c >= 0 && len > c) return Value(s.substr(0, static_cast<size_t>(c)));
                  return a[1];
                },
                "is"};
  m["abbrev"] = {[](Context&, Args& a) -> Value {
                   std::int64_t w = a[0].as_int();
                   if (w < 4) return a[1];
                   return Value(abbreviate_full(a[1].as_string(), 0, w));
                 },
                 "is"};
  m["abbrevboth"] = {[](Context&, Args& a) -> Value {
                       std::int64_t left = a[0].as_int(), right = a[1].as_int();
                       if (right < 4 || (left > 0 && right < 7)) return a[2];
                       return Value(abbreviate_full(a[2].as_string(), left, right));
                     },
                     "iis"};
  m["initials"] = {[](Context&, Args& a) { return Value(initials(a[0].as_string())); }, "s"};
  m["wrap"] = {[](Context&, Args& a) { return Value(wrap_custom(a[1].as_string(), a[0].as_int(), "", false)); }, "is"};
  m["wrapWith"] = {[](Context&, Args& a) {
                     return Value(wrap_custom(a[2].as_string(), a[0].as_int(), a[1].as_string(), true));
                   },
                   "iss"};
  m["contains"] = {[](Context&, Args& a) { return Value(a[1].as_string().find(a[0].as_string()) != std::string::npos); }, "ss"};
  m["hasPrefix"] = {[](Context&, Args& a) { return Value(a[1].as_string().starts_with(a[0].as_string())); }, "ss"};
  m["hasSuffix"] = {[](Context&, Args& a) { return Value(a[1].as_string().ends_with(a[0].as_string())); }, "ss"};
  m["quote"] = {[](Context&, Args& a) {
                  std::string out;
                  bool first = true;
                  for (const auto& v : a) {
                    if (v.is_null()) continue;
                    if (!first) out += " ";
                    first = false;
                    out += go_quote(to_str(v));
                  }
                  return Value(out);
                },
                "a*"};
  m["squote"] = {[](Context&, Args& a) {
                   std::string out;
                   bool first = true;
                   for (const auto& v : a) {
                     if (v.is_null()) continue;
                     if (!first) out += " ";
                     first = false;
                     out += "'" + to_str(v) + "'";
                   }
                   return Value(out);
                 },
                 "a*"};
  m["cat"] = {[](Context&, Args& a) {
                std::string out;
                bool first = true;
                for (const auto& v : a) {
                  if (v.is_null()) continue;
                  if (!first) out += " ";
                  first = false;
                  append_value(out, v);
                }
                return Value(out);
              },
              "a*"};
  m["indent"] = {[](Context&, Args& a) -> Value {
                   std::int64_t n = a[0].as_int();
                   std::string pad(n > 0 ? static_cast<size_t>(std::min<std::int64_t>(n, 1 << 20)) : 0, ' ');
                   return Value(pad + replace_all(a[1].as_string(), "\n", "\n" + pad));
                 },
                 "is"};
  m["nindent"] = {[](Context&, Args& a) -> Value {
                    std::int64_t n = a[0].as_int();
                    std::string pad(n > 0 ? static_cast<size_t>(std::min<std::int64_t>(n, 1 << 20)) : 0, ' ');
                    return Value("\n" + pad + replace_all(a[1].as_string(), "\n", "\n" + pad));
                  },
                  "is"};
  m["replace"] = {[](Context&, Args& a) { return Value(replace_all(a[2].as_string(), a[0].as_string(), a[1].as_string())); }, "sss"};
  m["plural"] = {[](Context&, Args& a) { return a[2].as_int() == 1 ? a[0] : a[1]; }, "ssi"};
  m["trim"] = {[](Context&, Args& a) { return Value(trim_space(a[0].as_string())); }, "s"};
  m["trimAll"] = {[](Context&, Args& a) { return Value(trim_cutset(a[1].as_string(), a[0].as_string(), true, true)); }, "ss"};
  m["trimPrefix"] = {[](Context&, Args& a) -> Value {
                       const std::string& p = a[0].as_string();
                       const std::string& s = a[1].as_string();
                       return s.starts_with(p) ? Value(s.substr(p.size())) : a[1];
                     },
                     "ss"};
  m["trimSuffix"] = {[](Context&, Args& a) -> Value {
                       const std::string& p = a[0].as_string();
                       const std::string& s = a[1].as_string();
                       return s.ends_with(p) ? Value(s.substr(0, s.size() - p.size())) : a[1];
                     },
                     "ss"};
  m["camelcase"] = {[](Context&, Args& a) { return Value(camelcase(a[0].as_string())); }, "s"};
  m["snakecase"] = {[](Context&, Args& a) { return Value(delimited_lower(a[0].as_string(), '_')); }, "s"};
  m["kebabcase"] = {[](Context&, Args& a) { return Value(delimited_lower(a[0].as_string(), '-')); }, "s"};
  m["swapcase"] = {[](Context&, Args& a) { return Value(swapcase(a[0].as_string())); }, "s"};
  m["toString"] = {[](Context&, Args& a) { return Value(to_str(a[0])); }, "a"};
  m["toStrings"] = {[](Context&, Args& a) { return string_list(strslice(a[0])); }, "a"};
  m["split"] = {[](Context&, Args& a) {
                  Map out;
                  auto parts = split_str(a[1].as_string(), a[0].as_string());
                  for (size_t i = 0; i < parts.size(); ++i) out["_" + std::to_string(i)] = Value(parts[i]);
                  return Value(std::move(out));
                },
                "ss"};
  m["splitn"] = {[](Context&, Args& a) {
                   Map out;
                   auto parts = split_str(a[2].as_string(), a[0].as_string(), static_cast<long>(a[1].as_int()));
                   for (size_t i = 0; i < parts.size(); ++i) out["_" + std::to_string(i)] = Value(parts[i]);
                   return Value(std::move(out));
                 },
                 "sis"};
  m["splitList"] = {[](Context&, Args& a) { return string_list(split_str(a[1].as_string(), a[0].as_string())); }, "ss"};
  m["join"] = {[](Context&, Args& a) {
                 auto parts = strslice(a[1]);
                 std::string out;
                 for (size_t i = 0; i < parts.size(); ++i) {
                   if (i > 0) out += a[0].as_string();
                   out += parts[i];
                 }
                 return Value(out);
               },
               "sa"};
  m["sortAlpha"] = {[](Context&, Args& a) {
                      Value holder;
                      if (!as_list_like(a[0], holder)) return string_list({to_str(a[0])});
                      auto s = strslice(a[0]);
                      std::sort(s.begin(), s.end());
                      return string_list(s);
                    },
                    "a"};
  m["atoi"] = {[](Context&, Args& a) {
                 const std::string& s = a[0].as_string();
                 char* end = nullptr;
                 errno = 0;
                 long long v = std::strtoll(s.c_str(), &end, 10);
                 if (s.empty() || *end || errno || std::isspace(static_cast<unsigned char>(s[0]))) v = 0;
                 return Value::integer(v, IntType::int_);
               },
               "s"};
  m["int"] = {[](Context&, Args& a) { return Value::integer(to_int64(a[0]), IntType::int_); }, "a"};
  m["int64"] = {[](Context&, Args& a) { return new_int64(to_int64(a[0])); }, "a"};
  m["float64"] = {[](Context&, Args& a) { return Value(to_float64(a[0])); }, "a"};
  m["toDecimal"] = {[](Context&, Args& a) {
                      std::string s = to_str(a[0]);
                      char* end = nullptr;
                      long long v = std::strtoll(s.c_str(), &end, 8);
                      if (s.empty() || *end) v = 0;
                      return new_int64(v);
                    },
                    "a"};
  m["toBool"] = {[](Context&, Args& a) { return Value(to_bool(a[0])); }, "a"};
  m["hello"] = {[](Context&, Args&) { return Value("Hello!"); }, ""};

  // ---- defaults / flow ----
  m["default"] = {[](Context&, Args& a) -> Value {
                    if (a.size() < 2 || empty(a[1])) return a[0];
                    return a[1];
                  },
                  "aa*"};
  m["empty"] = {[](Context&, Args& a) { return Value(empty(a[0])); }, "a"};
  m["coalesce"] = {[](Context&, Args& a) -> Value {
                     for (const auto& v : a)
                       if (!empty(v)) return v;
                     return Value();
                   },
                   "a*"};
  m["all"] = {[](Context&, Args& a) {
                for (const auto& v : a)
                  if (empty(v)) return Value(false);
                return Value(true);
              },
              "a*"};
  m["any"] = {[](Context&, Args& a) {
                for (const auto& v : a)
                  if (!empty(v)) return Value(true);
                return Value(false);
              },
              "a*"};
  m["ternary"] = {[](Context&, Args& a) { return a[2].as_bool() ? a[0] : a[1]; }, "aab"};
  m["fail"] = {[](Context&, Args& a) -> Value { func_fail(a[0].as_string()); }, "s"};
  m["toPrettyJson"] = {[](Context&, Args& a) -> Value {
                         try {
                           // encoding/json MarshalIndent with two spaces, HTML-escaped
                           std::string compact = to_json_text(a[0]);
                           std::string out;
                           int depth = 0;
                           bool in_str = false;
                           for (size_t i = 0; i < compact.size(); ++i) {
                             char c = compact[i];
                             if (in_str) {
                               out.push_back(c);
                               if (c == '\\') out.push_back(compact[++i]);
                               else if (c == '"') in_str = false;
                               continue;
                             }
                             switch (c) {
                               case '"': in_str = true; out.push_back(c); break;
                               case '{': case '[': {
                                 char close = c == '{' ? '}' : ']';
                                 if (i + 1 < compact.size() && compact[i + 1] == close) {
                                   out.push_back(c);
                                   out.push_back(close);
                                   ++i;
                                   break;
                                 }
                                 out.push_back(c);
                                 ++depth;
                                 out += "\n" + std::string(static_cast<size_t>(depth) * 2, ' ');
                                 break;
                               }
                               case '}': case ']':
                                 --depth;
                                 out += "\n" + std::string(static_cast<size_t>(depth) * 2, ' ');
                                 out.push_back(c);
                                 break;
                               case ',': out += ",\n" + std::string(static_cast<size_t>(depth) * 2, ' '); break;
                               case ':': out += ": "; break;
                               default: out.push_back(c);
                             }
                           }
                           return Value(out);
                         } catch (const Error&) {
                           return Value("");
                         }
                       },
                       "a"};
  m["toRawJson"] = {[](Context&, Args& a) -> Value {
                      try {
                        std::string s = to_json_text(a[0]);
                        s = replace_all(replace_all(replace_all(s, "\\u003c", "<"), "\\u003e", ">"), "\\u0026", "&");
                        return Value(s);
                      } catch (const Error&) {
                        return Value("");
                      }
                    },
                    "a"};
  m["mustToPrettyJson"] = m["toPrettyJson"];
  m["mustToRawJson"] = m["toRawJson"];

  // ---- encodings ----
  m["b64enc"] = {[](Context&, Args& a) { return Value(base64_encode(a[0].as_string())); }, "s"};
  // Sprig returns Go's decoding error as the function's value
  m["b64dec"] = {[](Context&, Args& a) {
                   size_t bad = 0;
                   auto out = base64_decode(a[0].as_string(), {}, &bad);
                   if (!out) return Value("illegal base64 data at input byte " + std::to_string(bad));
                   return Value(std::move(*out));
                 },
                 "s"};
  m["b32enc"] = {[](Context&, Args& a) { return Value(b32enc(a[0].as_string())); }, "s"};
  m["b32dec"] = {[](Context&, Args& a) {
                   std::string out;
                   if (!b32dec(a[0].as_string(), out)) return Value("illegal base32 data at input byte 0");
                   return Value(out);
                 },
                 "s"};

  // ---- lists ----
  m["list"] = {[](Context&, Args& a) { return Value(List(a.begin(), a.end())); }, "a*"};
  m["tuple"] = m["list"];
  auto first = [](Context&, Args& a) -> Value {
    Value h;
    const List& l = need_list(a[0], "find first", h);
    return l.empty() ? Value() : l.front();
  };
  m["first"] = {first, "a"};
  m["mustFirst"] = {first, "a"};
  auto last = [](Context&, Args& a) -> Value {
    Value h;
    const List& l = need_list(a[0], "find last", h);
    return l.empty() ? Value() : l.back();
  };
  m["last"] = {last, "a"};
  m["mustLast"] = {last, "a"};
  auto rest = [](Context&, Args& a) -> Value {
    Value h;
    const List& l = need_list(a[0], "find rest", h);
    if (l.empty()) return Value();
    return Value(List(l.begin() + 1, l.end()));
  };
  m["rest"] = {rest, "a"};
  m["mustRest"] = {rest, "a"};
  auto initial = [](Context&, Args& a) -> Value {
    Value h;
    const List& l = need_list(a[0], "find initial", h);
    if (l.empty()) return Value();
    return Value(List(l.begin(), l.end() - 1));
  };
  m["initial"] = {initial, "a"};
  m["mustInitial"] = {initial, "a"};
  auto push = [](Context&, Args& a) -> Value {
    Value h;
    const List& l = need_list(a[0], "push", h);
    List out(l);
    out.push_back(a[1]);
    return Value(std::move(out));
  };
  m["append"] = {push, "aa"};
  m["push"] = {push, "aa"};
  m["mustAppend"] = {push, "aa"};
  m["mustPush"] = {push, "aa"};
  auto prepend = [](Context&, Args& a) -> Value {
    Value h;
    const List& l = need_list(a[0], "prepend", h);
    List out;
    out.reserve(l.size() + 1);
    out.push_back(a[1]);
    out.insert(out.end(), l.begin(), l.end());
    return Value(std::move(out));
  };
  m["prepend"] = {prepend, "aa"};
  m["mustPrepend"] = {prepend, "aa"};
  m["concat"] = {[](Context&, Args& a) -> Value {
                   List out;
                   for (const auto& v : a) {
                     Value h;
                     const List* l = as_list_like(v, h);
                     if (!l) func_fail("Cannot concat type " + v.go_kind() + " as list");
                     out.insert(out.end(), l->begin(), l->end());
                   }
                   return Value(std::move(out));
                 },
                 "a*"};
  auto reverse = [](Context&, Args& a) -> Value {
    Value h;
    const List& l = need_list(a[0], "find reverse", h);
    return Value(List(l.rbegin(), l.rend()));
  };
  m["reverse"] = {reverse, "a"};
  m["mustReverse"] = {reverse, "a"};
  auto uniq = [](Context&, Args& a) -> Value {
    Value h;
    const List& l = need_list(a[0], "find uniq", h);
    List out;
    for (const auto& v : l) {
      bool seen = false;
      for (const auto& o : out)
        if (deep_equal(o, v)) seen = true;
      if (!seen) out.push_back(v);
    }
    return Value(std::move(out));
  };
  m["uniq"] = {uniq, "a"};
  m["mustUniq"] = {uniq, "a"};
  auto without = [](Context&, Args& a) -> Value {
    Value h;
    const List& l = need_list(a[0], "find without", h);
    List out;
    for (const auto& v : l) {
      bool drop = false;
      for (size_t i = 1; i < a.size(); ++i)
        if (deep_equal(a[i], v)) drop = true;
      if (!drop) out.push_back(v);
    }
    return Value(std::move(out));
  };
  m["without"] = {without, "aa*"};
  m["mustWithout"] = {without, "aa*"};
  auto has = [](Context&, Args& a) -> Value {
    if (a[1].is_null()) return Value(false);
    Value h;
    const List* l = as_list_like(a[1], h);
    if (!l) func_fail("Cannot find has on type " + a[1].go_kind());
    for (const auto& v : *l)
      if (deep_equal(a[0], v)) return Value(true);
    return Value(false);
  };
  m["has"] = {has, "aa"};
  m["mustHas"] = {has, "aa"};
  auto compact = [](Context&, Args& a) -> Value {
    Value h;
    const List& l = need_list(a[0], "compact", h);
    List out;
    for (const auto& v : l)
      if (!empty(v)) out.push_back(v);
    return Value(std::move(out));
  };
  m["compact"] = {compact, "a"};
  m["mustCompact"] = {compact, "a"};
  auto chunk = [](Context&, Args& a) -> Value {
    std::int64_t size = a[0].as_int();
    Value h;
    const List& l = need_list(a[1], "chunk", h);
    if (size <= 0) func_fail("runtime error: integer divide by zero");
    List out;
    for (size_t i = 0; i < l.size(); i += static_cast<size_t>(size)) {
      size_t e = std::min(l.size(), i + static_cast<size_t>(size));
      out.emplace_back(List(l.begin() + static_cast<std::ptrdiff_t>(i), l.begin() + static_cast<std::ptrdiff_t>(e)));
    }
    return Value(std::move(out));
  };
  m["chunk"] = {chunk, "ia"};
  m["mustChunk"] = {chunk, "ia"};
  m["until"] = {[](Context&, Args& a) -> Value {
                  std::int64_t n = a[0].as_int();
                  std::int64_t step = n < 0 ? -1 : 1;
                  if (n > 10'000'000 || n < -10'000'000) func_fail("until: count too large");
                  List out;
                  for (std::int64_t i = 0; step > 0 ? i < n : i > n; i += step) out.push_back(Value::integer(i, IntType::int_));
                  return Value(std::move(out));
                },
                "i"};
  m["untilStep"] = {[](Context&, Args& a) -> Value {
                      std::int64_t start = a[0].as_int(), stop = a[1].as_int(), step = a[2].as_int();
                      List out;
                      if (step == 0) return Value(std::move(out));
                      long double count = (static_cast<long double>(stop) - static_cast<long double>(start)) / static_cast<long double>(step);
                      if (count > 10'000'000) func_fail("untilStep: count too large");
                      if (step > 0)
                        for (std::int64_t i = start; i < stop; i += step) out.push_back(Value::integer(i, IntType::int_));
                      else
                        for (std::int64_t i = start; i > stop; i += step) out.push_back(Value::integer(i, IntType::int_));
                      return Value(std::move(out));
                    },
                    "iii"};
  m["seq"] = {[](Context&, Args& a) -> Value {
                std::int64_t start = 1, end = 0, step = 1;
                std::vector<std::int64_t> p;
                for (const auto& v : a) p.push_back(v.as_int());
                if (p.empty()) return Value("");
                if (p.size() == 1) {
                  end = p[0];
                  if (end < 1) step = -1;
                } else if (p.size() == 2) {
                  start = p[0];
                  end = p[1];
                  if (end < start) step = -1;
                } else if (p.size() == 3) {
                  start = p[0];
                  step = p[1];
                  end = p[2];
                  if ((end < start && step > 0) || (end > start && step < 0) || step == 0) return Value("");
                } else {
                  return Value("");
                }
                long double span = std::fabs(static_cast<long double>(end) - static_cast<long double>(start)) /
                                   std::max<long double>(1, std::fabs(static_cast<long double>(step)));
                if (span > 10'000'000) func_fail("seq: count too large");
                std::string out;
                for (std::int64_t i = start; step > 0 ? i <= end : i >= end; i += step) {
                  if (!out.empty()) out += " ";
                  out += std::to_string(i);
                }
                return Value(out);
              },
              "i*"};

  // ---- dicts ----
  m["dict"] = {[](Context&, Args& a) {
                 Map out;
                 for (size_t i = 0; i < a.size(); i += 2) {
                   std::string key = to_str(a[i]);
                   out[key] = i + 1 < a.size() ? a[i + 1] : Value("");
                 }
                 return Value(std::move(out));
               },
               "a*"};
  m["get"] = {[](Context&, Args& a) -> Value {
                const Value* v = a[0].find(a[1].as_string());
                return v ? *v : Value("");
              },
              "ms"};
  m["set"] = {[](Context&, Args& a) -> Value {
                if (a[0].is_null()) func_fail("assignment to entry in nil map");
                a[0].mutable_map()[a[1].as_string()] = a[2];
                return a[0];
              },
              "msa"};
  m["unset"] = {[](Context&, Args& a) -> Value {
                  if (!a[0].is_null()) {
                    auto& mm = a[0].mutable_map();
                    auto it = mm.find(a[1].as_string());
                    if (it != mm.end()) mm.erase(it);
                  }
                  return a[0];
                },
                "ms"};
  m["hasKey"] = {[](Context&, Args& a) { return Value(a[0].find(a[1].as_string()) != nullptr); }, "ms"};
  m["pluck"] = {[](Context&, Args& a) {
                  List out;
                  for (size_t i = 1; i < a.size(); ++i)
                    if (const Value* v = a[i].find(a[0].as_string())) out.push_back(*v);
                  return Value(std::move(out));
                },
                "sm*"};
  m["keys"] = {[](Context&, Args& a) {
                 List out;
                 for (const auto& d : a)
                   if (d.is_map())
                     for (const auto& [k, v] : d.as_map()) out.emplace_back(k);
                 return Value(std::move(out));
               },
               "m*"};
  m["values"] = {[](Context&, Args& a) {
                   List out;
                   if (a[0].is_map())
                     for (const auto& [k, v] : a[0].as_map()) out.push_back(v);
                   return Value(std::move(out));
                 },
                 "m"};
  m["pick"] = {[](Context&, Args& a) {
                 Map out;
                 for (size_t i = 1; i < a.size(); ++i)
                   if (const Value* v = a[0].find(a[i].as_string())) out[a[i].as_string()] = *v;
                 return Value(std::move(out));
               },
               "ms*"};
  m["omit"] = {[](Context&, Args& a) {
                 Map out;
                 if (a[0].is_map())
                   for (const auto& [k, v] : a[0].as_map()) {
                     bool drop = false;
                     for (size_t i = 1; i < a.size(); ++i)
                       if (a[i].as_string() == k) drop = true;
                     if (!drop) out[k] = v;
                   }
                 return Value(std::move(out));
               },
               "ms*"};
  m["dig"] = {[](Context&, Args& a) -> Value {
                if (a.size() < 3) func_fail("dig needs at least three arguments");
                Value dict = a.back();
                const Value& def = a[a.size() - 2];
                for (size_t i = 0; i + 2 < a.size(); ++i) {
                  if (!a[i].is_string()) func_fail("interface conversion: interface {} is " + a[i].go_type() + ", not string");
                  if (!dict.is_map()) func_fail("interface conversion: interface {} is " + dict.go_type() + ", not map[string]interface {}");
                  const Value* step = dict.find(a[i].as_string());
                  if (!step) return def;
                  if (i + 3 == a.size()) return *step;
                  dict = *step;
                }
                return def;
              },
              "a*"};
  m["merge"] = {[](Context&, Args& a) { return merge_fn(a, false); }, "ma*"};
  m["mustMerge"] = m["merge"];
  m["mergeOverwrite"] = {[](Context&, Args& a) { return merge_fn(a, true); }, "ma*"};
  m["mustMergeOverwrite"] = m["mergeOverwrite"];
  m["deepCopy"] = {[](Context&, Args& a) { return a[0].deep_copy(); }, "a"};
  m["mustDeepCopy"] = {[](Context&, Args& a) -> Value {
                         if (a[0].is_null()) func_fail("copy: cannot copy nil");
                         return a[0].deep_copy();
                       },
                       "a"};

  // ---- types ----
  m["typeOf"] = {[](Context&, Args& a) { return Value(a[0].go_type()); }, "a"};
  m["kindOf"] = {[](Context&, Args& a) { return Value(a[0].go_kind()); }, "a"};
  m["typeIs"] = {[](Context&, Args& a) { return Value(a[0].as_string() == a[1].go_type()); }, "sa"};
  m["typeIsLike"] = {[](Context&, Args& a) {
                       std::string t = a[1].go_type();
                       return Value(a[0].as_string() == t || "*" + a[0].as_string() == t);
                     },
                     "sa"};
  m["kindIs"] = {[](Context&, Args& a) { return Value(a[0].as_string() == a[1].go_kind()); }, "sa"};
  m["deepEqual"] = {[](Context&, Args& a) { return Value(deep_equal(a[0], a[1])); }, "aa"};

  // ---- math ----
  m["add"] = {[](Context&, Args& a) {
                std::int64_t s = 0;
                for (const auto& v : a) s = wrap_add(s, to_int64(v));
                return new_int64(s);
              },
              "a*"};
  m["add1"] = {[](Context&, Args& a) { return new_int64(wrap_add(to_int64(a[0]), 1)); }, "a"};
  m["sub"] = {[](Context&, Args& a) { return new_int64(wrap_add(to_int64(a[0]), wrap_mul(to_int64(a[1]), -1))); }, "aa"};
  m["mul"] = {[](Context&, Args& a) {
                std::int64_t p = to_int64(a[0]);
                for (size_t i = 1; i < a.size(); ++i) p = wrap_mul(p, to_int64(a[i]));
                return new_int64(p);
              },
              "aa*"};
  m["div"] = {[](Context&, Args& a) { return new_int64(checked_div(to_int64(a[0]), to_int64(a[1]))); }, "aa"};
  m["mod"] = {[](Context&, Args& a) {
                std::int64_t b = to_int64(a[1]);
                if (b == 0) func_fail("runtime error: integer divide by zero");
                if (b == -1) return new_int64(0);
                return new_int64(to_int64(a[0]) % b);
              },
              "aa"};
  auto max_fn = [](Context&, Args& a) {
    std::int64_t r = to_int64(a[0]);
    for (size_t i = 1; i < a.size(); ++i) r = std::max(r, to_int64(a[i]));
    return new_int64(r);
  };
  m["max"] = {max_fn, "aa*"};
  m["biggest"] = {max_fn, "aa*"};
  m["min"] = {[](Context&, Args& a) {
                std::int64_t r = to_int64(a[0]);
                for (size_t i = 1; i < a.size(); ++i) r = std::min(r, to_int64(a[i]));
                return new_int64(r);
              },
              "aa*"};
  m["maxf"] = {[](Context&, Args& a) {
                 double r = to_float64(a[0]);
                 for (size_t i = 1; i < a.size(); ++i) r = std::fmax(r, to_float64(a[i]));
                 return Value(r);
               },
               "aa*"};
  m["minf"] = {[](Context&, Args& a) {
                 double r = to_float64(a[0]);
                 for (size_t i = 1; i < a.size(); ++i) r = std::fmin(r, to_float64(a[i]));
                 return Value(r);
               },
               "aa*"};
  m["addf"] = {[](Context&, Args& a) {
                 long double s = 0;
                 for (const auto& v : a) s += to_float_for_math(v);
                 return Value(decimal_round(static_cast<double>(s)));
               },
               "a*"};
  m["add1f"] = {[](Context&, Args& a) { return Value(decimal_round(to_float64(a[0]) + 1)); }, "a"};
  m["subf"] = {[](Context&, Args& a) {
                 long double s = to_float64(a[0]);
                 for (size_t i = 1; i < a.size(); ++i) s -= to_float64(a[i]);
                 return Value(decimal_round(static_cast<double>(s)));
               },
               "aa*"};
  m["mulf"] = {[](Context&, Args& a) {
                 long double s = to_float64(a[0]);
                 for (size_t i = 1; i < a.size(); ++i) s *= to_float64(a[i]);
                 return Value(decimal_round(static_cast<double>(s)));
               },
               "aa*"};
  m["divf"] = {[](Context&, Args& a) -> Value {
                 long double s = to_float64(a[0]);
                 for (size_t i = 1; i < a.size(); ++i) {
                   double d = to_float64(a[i]);
                   if (d == 0) func_fail("decimal division by 0");
                   s /= d;
                 }
                 return Value(decimal_round(static_cast<double>(s)));
               },
               "aa*"};
  m["floor"] = {[](Context&, Args& a) { return Value(std::floor(to_float64(a[0]))); }, "a"};
  m["ceil"] = {[](Context&, Args& a) { return Value(std::ceil(to_float64(a[0]))); }, "a"};
  m["round"] = {[](Context&, Args& a) {
                  double val = to_float64(a[0]);
                  double round_on = a.size() > 2 ? a[2].as_float() : 0.5;
                  double pow = std::pow(10.0, static_cast<double>(a[1].as_int()));
                  double digit = pow * val;
                  double intpart;
                  double frac = std::modf(digit, &intpart);
                  double r = frac >= round_on ? std::ceil(digit) : std::floor(digit);
                  return Value(r / pow);
                },
                "aif*"};

  // ---- regex ----
  auto regex_match = [](Context&, Args& a) { return Value(RE2::PartialMatch(a[1].as_string(), *compile(a[0].as_string()))); };
  m["regexMatch"] = {regex_match, "ss"};
  m["mustRegexMatch"] = {regex_match, "ss"};
  auto regex_find = [](Context&, Args& a) -> Value {
    auto re = compile(a[0].as_string());
    const std::string& s = a[1].as_string();
    auto ms = find_all(*re, s, 1);
    if (ms.empty()) return Value("");
    return Value(std::string(ms[0].groups[0].data(), ms[0].groups[0].size()));
  };
  m["regexFind"] = {regex_find, "ss"};
  m["mustRegexFind"] = {regex_find, "ss"};
  auto regex_find_all = [](Context&, Args& a) -> Value {
    auto re = compile(a[0].as_string());
    const std::string& s = a[1].as_string();
    std::int64_t n = a[2].as_int();
    List out;
    if (n == 0) return Value(std::move(out));
    for (const auto& mm : find_all(*re, s, n < 0 ? -1 : static_cast<long>(n)))
      out.emplace_back(std::string(mm.groups[0].data(), mm.groups[0].size()));
    return Value(std::move(out));
  };
  m["regexFindAll"] = {regex_find_all, "ssi"};
  m["mustRegexFindAll"] = {regex_find_all, "ssi"};
  auto regex_replace_all = [](Context&, Args& a) {
    return Value(regex_replace(a[0].as_string(), a[1].as_string(), a[2].as_string(), false));
  };
  m["regexReplaceAll"] = {regex_replace_all, "sss"};
  m["mustRegexReplaceAll"] = {regex_replace_all, "sss"};
  auto regex_replace_lit = [](Context&, Args& a) {
    return Value(regex_replace(a[0].as_string(), a[1].as_string(), a[2].as_string(), true));
  };
  m["regexReplaceAllLiteral"] = {regex_replace_lit, "sss"};
  m["mustRegexReplaceAllLiteral"] = {regex_replace_lit, "sss"};
  auto regex_split = [](Context&, Args& a) -> Value {
    auto re = compile(a[0].as_string());
    const std::string& s = a[1].as_string();
    std::int64_t n = a[2].as_int();
    List out;
    if (n == 0) return Value(std::move(out));
    if (a[0].as_string().empty() && s.empty()) return Value(List{Value("")});
    auto ms = find_all(*re, s, -1);
    size_t beg = 0;
    for (const auto& mm : ms) {
      if (n > 0 && static_cast<std::int64_t>(out.size()) == n - 1) break;
      size_t ms0 = static_cast<size_t>(mm.groups[0].data() - s.data());
      size_t me = ms0 + mm.groups[0].size();
      if (me == 0) continue;
      out.emplace_back(s.substr(beg, ms0 - beg));
      beg = me;
    }
    out.emplace_back(s.substr(beg));
    return Value(std::move(out));
  };
  m["regexSplit"] = {regex_split, "ssi"};
  m["mustRegexSplit"] = {regex_split, "ssi"};
  m["regexQuoteMeta"] = {[](Context&, Args& a) { return Value(quote_meta(a[0].as_string())); }, "s"};

  // ---- semver ----
  // Sprig parses the constraint first, then the version (so an invalid constraint is the
  // error reported when both are invalid).
  m["semverCompare"] = {[](Context&, Args& a) -> Value {
                          semver::Constraints c;
                          try {
                            c = semver::parse_constraints(a[0].as_string());
                          } catch (const Error& e) {
                            func_fail(e.message());
                          }
                          return Value(semver::satisfies(c, parse_semver_or_fail(a[1].as_string())));
                        },
                        "ss"};
  m["semver"] = {[](Context&, Args& a) -> Value {
                   semver::Version v = parse_semver_or_fail(a[0].as_string());
                   Map fields;
                   fields["Major"] = Value::integer(static_cast<std::int64_t>(v.major), IntType::int64);
                   fields["Minor"] = Value::integer(static_cast<std::int64_t>(v.minor), IntType::int64);
                   fields["Patch"] = Value::integer(static_cast<std::int64_t>(v.patch), IntType::int64);
                   fields["Prerelease"] = Value(v.prerelease);
                   fields["Metadata"] = Value(v.metadata);
                   fields["Original"] = Value(v.original);
                   return Value(std::move(fields));
                 },
                 "s"};

  // ---- paths / urls / environment ----
  m["base"] = {[](Context&, Args& a) { return Value(path_base(a[0].as_string())); }, "s"};
  m["dir"] = {[](Context&, Args& a) { return Value(path_dir(a[0].as_string())); }, "s"};
  m["ext"] = {[](Context&, Args& a) { return Value(path_ext(a[0].as_string())); }, "s"};
  m["clean"] = {[](Context&, Args& a) { return Value(path_clean(a[0].as_string())); }, "s"};
  m["isAbs"] = {[](Context&, Args& a) { return Value(a[0].as_string().starts_with("/")); }, "s"};
  m["osBase"] = m["base"];
  m["osDir"] = m["dir"];
  m["osExt"] = m["ext"];
  m["osClean"] = m["clean"];
  m["osIsAbs"] = m["isAbs"];
  m["env"] = {[](Context&, Args& a) -> Value {
                const char* v = std::getenv(a[0].as_string().c_str());
                return Value(v ? v : "");
              },
              "s"};
  m["expandenv"] = {[](Context&, Args& a) {
                      const std::string& s = a[0].as_string();
                      std::string out;
                      for (size_t i = 0; i < s.size();) {
                        if (s[i] != '$' || i + 1 >= s.size()) {
                          out.push_back(s[i++]);
                          continue;
                        }
                        size_t j = i + 1;
                        std::string name;
                        if (s[j] == '{') {
                          size_t close = s.find('}', j);
                          if (close == std::string::npos) {
                            out.push_back(s[i++]);
                            continue;
                          }
                          name = s.substr(j + 1, close - j - 1);
                          j = close + 1;
                        } else {
                          while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
                          name = s.substr(i + 1, j - i - 1);
                        }
                        if (name.empty()) {
                          out.push_back('$');
                          i = j > i + 1 ? j : i + 1;
                          continue;
                        }
                        const char* v = std::getenv(name.c_str());
                        if (v) out += v;
                        i = j;
                      }
                      return Value(out);
                    },
                    "s"};
  m["urlParse"] = {[](Context&, Args& a) {
                     // net/url.Parse for the common scheme://userinfo@host/path?query#fragment shape
                     std::string s = a[0].as_string();
                     Map out{{"scheme", Value("")}, {"host", Value("")}, {"hostname", Value("")}, {"path", Value("")},
                             {"query", Value("")}, {"opaque", Value("")}, {"fragment", Value("")}, {"userinfo", Value("")}};
                     size_t hash = s.find('#');
                     if (hash != std::string::npos) {
                       out["fragment"] = Value(s.substr(hash + 1));
                       s = s.substr(0, hash);
                     }
                     size_t q = s.find('?');
                     if (q != std::string::npos) {
                       out["query"] = Value(s.substr(q + 1));
                       s = s.substr(0, q);
                     }
                     size_t colon = s.find("://");
                     if (colon != std::string::npos) {
                       out["scheme"] = Value(s.substr(0, colon));
                       s = s.substr(colon + 3);
                       size_t slash = s.find('/');
                       std::string host = s.substr(0, slash);
                       s = slash == std::string::npos ? "" : s.substr(slash);
                       size_t at = host.rfind('@');
                       if (at != std::string::npos) {
                         out["userinfo"] = Value(host.substr(0, at));
                         host = host.substr(at + 1);
                       }
                       out["host"] = Value(host);
                       std::string hostname = host;
                       if (!hostname.empty() && hostname[0] == '[') {
                         size_t close = hostname.find(']');
                         hostname = hostname.substr(1, close == std::string::npos ? std::string::npos : close - 1);
                       } else {
                         size_t pc = hostname.rfind(':');
                         if (pc != std::string::npos) hostname = hostname.substr(0, pc);
                       }
                       out["hostname"] = Value(hostname);
                     }
                     out["path"] = Value(s);
                     return Value(std::move(out));
                   },
                   "s"};
  m["urlJoin"] = {[](Context&, Args& a) {
                    auto get = [&](const char* k) -> std::string {
                      const Value* v = a[0].find(k);
                      return v && v->is_string() ? v->as_string() : "";
                    };
                    std::string out;
                    if (!get("scheme").empty()) out += get("scheme") + ":";
                    if (!get("host").empty() || !get("userinfo").empty()) {
                      out += "//";
                      if (!get("userinfo").empty()) out += get("userinfo") + "@";
                      out += get("host");
                    }
                    out += get("path");
                    if (!get("query").empty()) out += "?" + get("query");
                    if (!get("fragment").empty()) out += "#" + get("fragment");
                    return Value(out);
                  },
                  "m"};
}

}  // namespace emco::tmpl
