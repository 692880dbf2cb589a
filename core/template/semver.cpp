#include "core/template/semver.hpp"

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/template/funcs.hpp"
#include "core/util/error.hpp"

namespace emco::tmpl {

namespace {

struct Version {
  std::uint64_t major = 0, minor = 0, patch = 0;
  std::string pre, meta, original;
};

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool ident_ok(const std::string& s) {
  if (s.empty()) return false;
  for (const auto& part : [&] {
         std::vector<std::string> v;
         size_t st = 0;
         while (true) {
           size_t d = s.find('.', st);
           v.push_back(s.substr(st, d == std::string::npos ? std::string::npos : d - st));
           if (d == std::string::npos) break;
           st = d + 1;
         }
         return v;
       }()) {
    if (part.empty()) return false;
    for (char c : part)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
  }
  return true;
}

// NewVersion (lenient): v?MAJOR(.MINOR)?(.PATCH)?(-PRE)?(+META)?
bool parse_version(const std::string& in, Version& v) {
  v = Version{};
  v.original = in;
  std::string s = in;
  if (!s.empty() && (s[0] == 'v' || s[0] == 'V')) s = s.substr(1);
  size_t plus = s.find('+');
  if (plus != std::string::npos) {
    v.meta = s.substr(plus + 1);
    if (!ident_ok(v.meta)) return false;
    s = s.substr(0, plus);
  }
  size_t dash = s.find('-');
  if (dash != std::string::npos) {
    v.pre = s.substr(dash + 1);
    if (!ident_ok(v.pre)) return false;
    s = s.substr(0, dash);
  }
  std::vector<std::string> parts;
  size_t st = 0;
  while (true) {
    size_t d = s.find('.', st);
    parts.push_back(s.substr(st, d == std::string::npos ? std::string::npos : d - st));
    if (d == std::string::npos) break;
    st = d + 1;
  }
  if (parts.size() > 3) return false;
  for (const auto& p : parts)
    if (!all_digits(p)) return false;
  auto num = [](const std::string& p) { return std::strtoull(p.c_str(), nullptr, 10); };
  v.major = num(parts[0]);
  if (parts.size() > 1) v.minor = num(parts[1]);
  if (parts.size() > 2) v.patch = num(parts[2]);
  return true;
}

int compare_pre_part(const std::string& a, const std::string& b) {
  bool an = all_digits(a), bn = all_digits(b);
  if (an && bn) {
    std::uint64_t x = std::strtoull(a.c_str(), nullptr, 10), y = std::strtoull(b.c_str(), nullptr, 10);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (an) return -1;
  if (bn) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

int compare(const Version& a, const Version& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  if (a.pre.empty() && b.pre.empty()) return 0;
  if (a.pre.empty()) return 1;
  if (b.pre.empty()) return -1;
  std::vector<std::string> x, y;
  auto split = [](const std::string& s, std::vector<std::string>& out) {
    size_t st = 0;
    while (true) {
      size_t d = s.find('.', st);
      out.push_back(s.substr(st, d == std::string::npos ? std::string::npos : d - st));
      if (d == std::string::npos) break;
      st = d + 1;
    }
  };
  split(a.pre, x);
  split(b.pre, y);
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    int c = compare_pre_part(x[i], y[i]);
    if (c) return c;
  }
  if (x.size() == y.size()) return 0;
  return x.size() < y.size() ? -1 : 1;
}

struct Constraint {
  std::string op;
  Version con;
  bool minor_dirty = false, patch_dirty = false, dirty = false;
  std::string orig;
};

bool is_wild(const std::string& s) { return s == "x" || s == "X" || s == "*"; }

Constraint parse_constraint(const std::string& in) {
  static const char* ops[] = {">=", "=>", "<=", "=<", "!=", "~>", ">", "<", "=", "~", "^"};
  Constraint c;
  c.orig = in;
  std::string s = in;
  for (const char* o : ops) {
    if (s.rfind(o, 0) == 0) {
      c.op = o;
      s = s.substr(std::string(o).size());
      break;
    }
  }
  while (!s.empty() && s[0] == ' ') s.erase(0, 1);
  if (c.op == "=>") c.op = ">=";
  if (c.op == "=<") c.op = "<=";
  if (c.op == "~>") c.op = "~";
  // wildcard handling: 1.x, 1.2.*, *, ""
  std::string ver = s, rest;
  size_t cut = ver.find_first_of("-+");
  if (cut != std::string::npos) {
    rest = ver.substr(cut);
    ver = ver.substr(0, cut);
  }
  std::string vv = ver;
  if (!vv.empty() && (vv[0] == 'v' || vv[0] == 'V')) vv = vv.substr(1);
  std::vector<std::string> parts;
  size_t st = 0;
  while (true) {
    size_t d = vv.find('.', st);
    parts.push_back(vv.substr(st, d == std::string::npos ? std::string::npos : d - st));
    if (d == std::string::npos) break;
    st = d + 1;
  }
  if (parts.size() > 3) func_fail("improper constraint: " + in);
  if (parts.size() == 1 && (parts[0].empty() || is_wild(parts[0]))) {
    c.dirty = c.minor_dirty = c.patch_dirty = true;
    parts = {"0", "0", "0"};
  } else {
    if (parts.size() < 2 || is_wild(parts[1])) {
      c.minor_dirty = c.patch_dirty = c.dirty = true;
    } else if (parts.size() < 3 || is_wild(parts[2])) {
      c.patch_dirty = c.dirty = true;
    }
    for (auto& p : parts)
      if (is_wild(p)) p = "0";
    while (parts.size() < 3) parts.push_back("0");
    if (is_wild(parts[0])) func_fail("improper constraint: " + in);
  }
  std::string norm = parts[0] + "." + parts[1] + "." + parts[2] + rest;
  if (!parse_version(norm, c.con)) func_fail("improper constraint: " + in);
  c.con.original = s;
  return c;
}

bool check(const Constraint& c, const Version& v) {
  // Masterminds v3: a prerelease version only satisfies constraints that carry a prerelease
  if (!v.pre.empty() && c.con.pre.empty()) return false;
  const Version& k = c.con;
  const std::string& op = c.op;
  if (op.empty() || op == "=") {
    if (c.dirty) {
      if (v.major != k.major) return false;
      if (c.minor_dirty) return true;
      if (v.minor != k.minor) return false;
      return true;
    }
    return compare(v, k) == 0;
  }
  if (op == "!=") {
    if (c.dirty) {
      if (v.major != k.major) return true;
      if (c.minor_dirty) return false;
      if (v.minor != k.minor) return true;
      return false;
    }
    return compare(v, k) != 0;
  }
  if (op == ">") {
    if (!c.dirty) return compare(v, k) > 0;
    if (v.major > k.major) return true;
    if (v.major < k.major) return false;
    if (c.minor_dirty) return false;
    if (c.patch_dirty) return v.minor > k.minor;
    return compare(v, k) > 0;
  }
  if (op == "<") return compare(v, k) < 0;
  if (op == ">=") return compare(v, k) >= 0;
  if (op == "<=") {
    if (!c.dirty) return compare(v, k) <= 0;
    if (v.major > k.major) return false;
    if (v.major < k.major) return true;
    if (c.minor_dirty) return true;
    if (c.patch_dirty) return v.minor <= k.minor;
    return compare(v, k) <= 0;
  }
  if (op == "~") {
    if (compare(v, k) < 0) return false;
    if (k.major == 0 && k.minor == 0 && k.patch == 0 && c.minor_dirty) return true;
    if (v.major != k.major) return false;
    if (v.minor != k.minor && !c.minor_dirty) return false;
    return true;
  }
  if (op == "^") {
    if (compare(v, k) < 0) return false;
    if (k.major > 0 || c.minor_dirty) return v.major == k.major;
    if (k.minor > 0 || c.patch_dirty) return v.major == 0 && v.minor == k.minor;
    return v.major == 0 && v.minor == 0 && v.patch == k.patch;
  }
  return false;
}

std::vector<std::string> split_on(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t st = 0;
  while (true) {
    size_t d = s.find(sep, st);
    out.push_back(s.substr(st, d == std::string::npos ? std::string::npos : d - st));
    if (d == std::string::npos) break;
    st = d + sep.size();
  }
  return out;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

bool semver_satisfies(const std::string& constraint, const std::string& version) {
  Version v;
  if (!parse_version(trim(version), v)) func_fail("Invalid Semantic Version");
  for (const auto& group : split_on(constraint, "||")) {
    // tokens: split on commas and spaces, joining operators with their versions; handle "a - b"
    std::string g = trim(group);
    std::vector<std::string> toks;
    std::string cur;
    for (size_t i = 0; i <= g.size(); ++i) {
      char ch = i < g.size() ? g[i] : ',';
      if (ch == ',' || ch == ' ') {
        if (!cur.empty()) toks.push_back(cur);
        cur.clear();
      } else {
        cur.push_back(ch);
      }
    }
    // merge bare operators with the following version ("> 1.2")
    std::vector<std::string> merged;
    for (size_t i = 0; i < toks.size(); ++i) {
      const std::string& t = toks[i];
      bool only_op = t.find_first_not_of("<>=!~^") == std::string::npos;
      if (only_op && t != "-" && i + 1 < toks.size()) {
        merged.push_back(t + toks[i + 1]);
        ++i;
      } else {
        merged.push_back(t);
      }
    }
    std::vector<Constraint> cs;
    for (size_t i = 0; i < merged.size(); ++i) {
      if (i + 2 < merged.size() && merged[i + 1] == "-") {
        cs.push_back(parse_constraint(">=" + merged[i]));
        cs.push_back(parse_constraint("<=" + merged[i + 2]));
        i += 2;
        continue;
      }
      cs.push_back(parse_constraint(merged[i]));
    }
    if (cs.empty()) cs.push_back(parse_constraint("*"));
    bool ok = true;
    for (const auto& c : cs)
      if (!check(c, v)) ok = false;
    if (ok) return true;
  }
  return false;
}

Value semver_value(const std::string& version) {
  Version v;
  if (!parse_version(version, v)) func_fail("Invalid Semantic Version");
  Map m;
  m["Major"] = Value::integer(static_cast<std::int64_t>(v.major), IntType::int64);
  m["Minor"] = Value::integer(static_cast<std::int64_t>(v.minor), IntType::int64);
  m["Patch"] = Value::integer(static_cast<std::int64_t>(v.patch), IntType::int64);
  m["Prerelease"] = Value(v.pre);
  m["Metadata"] = Value(v.meta);
  m["Original"] = Value(v.original);
  return Value(std::move(m));
}

}  // namespace emco::tmpl
