#include "core/helm/semver.hpp"

#include <re2/re2.h>

#include <vector>

#include "core/util/strings.hpp"

namespace emco::helm {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Prerelease precedence per semver 2.0: dot-separated identifiers, numeric < alphanumeric.
int compare_prerelease(const std::string& a, const std::string& b) {
  if (a == b) return 0;
  if (a.empty()) return 1;
  if (b.empty()) return -1;
  auto pa = split(a, '.'), pb = split(b, '.');
  for (size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    bool na = all_digits(pa[i]), nb = all_digits(pb[i]);
    if (na && nb) {
      auto x = std::stoull(pa[i]), y = std::stoull(pb[i]);
      if (x != y) return x < y ? -1 : 1;
    } else if (na != nb) {
      return na ? -1 : 1;
    } else if (pa[i] != pb[i]) {
      return pa[i] < pb[i] ? -1 : 1;
    }
  }
  if (pa.size() == pb.size()) return 0;
  return pa.size() < pb.size() ? -1 : 1;
}

// One comparison of a constraint: operator plus a (possibly wildcarded) version.
struct Term {
  std::string op;
  SemVersion v;
  int wild = 3;  // number of concrete components (0..3); fewer means x/* or omitted parts
  bool has_pre = false;
};

bool parse_term(std::string text, Term& t) {
  static const RE2 re("^\\s*(=>|=<|>=|<=|!=|~>|=|>|<|~|\\^)?\\s*v?([0-9xX*]+)(?:\\.([0-9xX*]+))?(?:\\.([0-9xX*]+))?"
                      "(?:-([0-9A-Za-z.-]+))?(?:\\+([0-9A-Za-z.-]+))?\\s*$");
  std::string op, a, b, c, pre, meta;
  if (!RE2::FullMatch(text, re, &op, &a, &b, &c, &pre, &meta)) return false;
  if (op == "=>") op = ">=";
  if (op == "=<") op = "<=";
  if (op == "~>") op = "~";
  t.op = op;
  std::string parts[3] = {a, b, c};
  t.wild = 0;
  unsigned long long* dst[3] = {&t.v.major, &t.v.minor, &t.v.patch};
  for (int i = 0; i < 3; ++i) {
    if (parts[i].empty() || parts[i] == "x" || parts[i] == "X" || parts[i] == "*") break;
    if (!all_digits(parts[i])) return false;
    *dst[i] = std::stoull(parts[i]);
    t.wild = i + 1;
  }
  t.v.prerelease = pre;
  t.has_pre = !pre.empty();
  return true;
}

SemVersion bump(const SemVersion& v, int component) {
  SemVersion r;
  r.major = v.major;
  if (component == 0) {
    r.major = v.major + 1;
  } else if (component == 1) {
    r.minor = v.minor + 1;
  } else {
    r.minor = v.minor;
    r.patch = v.patch + 1;
  }
  return r;
}

bool check_term(const Term& t, const SemVersion& v) {
  int c = compare_semver(v, t.v);
  if (t.wild == 0)  // "*" matches everything except with != > <
    return t.op.empty() || t.op == "=" || t.op == ">=" || t.op == "<=" || t.op == "~" || t.op == "^";
  auto upper_for_wild = [&]() { return bump(t.v, t.wild - 1); };  // 2.x -> 3.0.0, 2.8.x -> 2.9.0
  if (t.op.empty() || t.op == "=") {
    if (t.wild < 3) return c >= 0 && compare_semver(v, upper_for_wild()) < 0;
    return c == 0;
  }
  if (t.op == "!=") {
    if (t.wild < 3) return !(c >= 0 && compare_semver(v, upper_for_wild()) < 0);
    return c != 0;
  }
  if (t.op == ">") {
    if (t.wild < 3) return compare_semver(v, upper_for_wild()) >= 0;
    return c > 0;
  }
  if (t.op == ">=") return c >= 0;
  if (t.op == "<") return c < 0;
  if (t.op == "<=") {
    if (t.wild < 3) return compare_semver(v, upper_for_wild()) < 0;
    return c <= 0;
  }
  if (t.op == "~") {
    // ~1.2.3 -> <1.3.0; ~1.2 -> <1.3.0; ~1 -> <2.0.0
    SemVersion hi = t.wild == 1 ? bump(t.v, 0) : bump(t.v, 1);
    return c >= 0 && compare_semver(v, hi) < 0;
  }
  if (t.op == "^") {
    SemVersion hi;
    if (t.v.major > 0 || t.wild == 1) hi = bump(t.v, 0);
    else if (t.v.minor > 0 || t.wild == 2) hi = bump(t.v, 1);
    else hi = bump(t.v, 2);
    return c >= 0 && compare_semver(v, hi) < 0;
  }
  return false;
}

bool check_and(const std::string& group, const SemVersion& v) {
  // "A - B" hyphen range
  auto dash = group.find(" - ");
  std::vector<std::string> terms;
  if (dash != std::string::npos) {
    terms.push_back(">=" + trim(group.substr(0, dash)));
    terms.push_back("<=" + trim(group.substr(dash + 3)));
  } else {
    // split on ',' and whitespace, re-attaching an operator separated from its version
    std::string cur;
    std::vector<std::string> raw;
    for (char ch : group) {
      if (ch == ',' || ch == ' ' || ch == '\t') {
        if (!cur.empty()) raw.push_back(cur);
        cur.clear();
      } else {
        cur += ch;
      }
    }
    if (!cur.empty()) raw.push_back(cur);
    for (size_t i = 0; i < raw.size(); ++i) {
      const auto& r = raw[i];
      bool op_only = r.find_first_not_of("=<>!~^") == std::string::npos;
      if (op_only && i + 1 < raw.size()) {
        terms.push_back(r + raw[i + 1]);
        ++i;
      } else {
        terms.push_back(r);
      }
    }
  }
  if (terms.empty()) return false;
  bool any_pre = false;
  std::vector<Term> parsed;
  for (const auto& text : terms) {
    Term t;
    if (!parse_term(text, t)) return false;
    any_pre = any_pre || t.has_pre;
    parsed.push_back(t);
  }
  if (!v.prerelease.empty() && !any_pre) return false;
  for (const auto& t : parsed)
    if (!check_term(t, v)) return false;
  return true;
}

}  // namespace

std::optional<SemVersion> parse_semver(std::string_view text) {
  static const RE2 re("^v?([0-9]+)(?:\\.([0-9]+))?(?:\\.([0-9]+))?(?:-([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?"
                      "(?:\\+([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?$");
  std::string a, b, c, pre, meta;
  if (!RE2::FullMatch(re2::StringPiece(text.data(), text.size()), re, &a, &b, &c, &pre, &meta)) return std::nullopt;
  SemVersion v;
  try {
    v.major = std::stoull(a);
    v.minor = b.empty() ? 0 : std::stoull(b);
    v.patch = c.empty() ? 0 : std::stoull(c);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  v.prerelease = pre;
  v.metadata = meta;
  return v;
}

int compare_semver(const SemVersion& a, const SemVersion& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  return compare_prerelease(a.prerelease, b.prerelease);
}

bool semver_satisfies(std::string_view constraint, std::string_view version) {
  auto v = parse_semver(trim(version));
  if (!v) return false;
  std::string c(constraint);
  if (trim(c).empty()) c = "*";  // Masterminds: an empty constraint means any version
  size_t start = 0;
  for (;;) {
    auto bar = c.find("||", start);
    std::string group = trim(c.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (!group.empty()) {
      if (check_and(group, *v)) return true;
    }
    if (bar == std::string::npos) break;
    start = bar + 2;
  }
  return false;
}

}  // namespace emco::helm
