#include "core/util/semver.hpp"

#include <charconv>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::semver {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_digit(c)) return false;
  return true;
}
bool ident_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}
// Go's \s in Masterminds' regular expressions.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Dot-separated non-empty identifiers of [0-9A-Za-z-]; a numeric prerelease identifier
// may not start with 0 (Masterminds' validatePrerelease; metadata has no such rule).
bool valid_identifiers(std::string_view s, bool prerelease) {
  if (s.empty()) return false;
  for (const auto& part : split(s, '.')) {
    if (part.empty()) return false;
    for (char c : part)
      if (!ident_char(c)) return false;
    if (prerelease && all_digits(part) && part.size() > 1 && part[0] == '0') return false;
  }
  return true;
}

bool parse_number(std::string_view s, std::uint64_t& out) {
  if (!all_digits(s)) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

int compare_prerelease(const std::string& a, const std::string& b) {
  if (a == b) return 0;
  if (a.empty()) return 1;  // a release ranks above its prereleases
  if (b.empty()) return -1;
  auto pa = split(a, '.'), pb = split(b, '.');
  for (size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    bool na = all_digits(pa[i]), nb = all_digits(pb[i]);
    if (na && nb) {
      std::uint64_t x = 0, y = 0;
      parse_number(pa[i], x);
      parse_number(pb[i], y);
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

bool is_x(std::string_view s) { return s == "x" || s == "X" || s == "*"; }

// The scanner of one "||" segment: Masterminds validates a segment with one regular
// expression and then finds its comparisons with another; scanning once does both.
class SegmentScanner {
public:
  explicit SegmentScanner(std::string_view text) : m_s(text) {}

  bool parse(std::vector<Comparison>& out) {
    skip_space();
    if (at_end()) return false;
    while (true) {
      std::string op = scan_op();
      skip_space();
      Comparison c;
      std::string major, minor, patch, pre;
      if (!scan_version(major, minor, patch, pre)) return false;
      // "A - B" (Masterminds rewrites it to ">= A, <= B" before parsing)
      bool spaced = skip_space();
      if (op.empty() && spaced && peek() == '-' && m_i + 1 < m_s.size() && is_space(m_s[m_i + 1])) {
        ++m_i;
        skip_space();
        std::string major2, minor2, patch2, pre2;
        if (!scan_version(major2, minor2, patch2, pre2)) return false;
        if (!make(">=", major, minor, patch, pre, c)) return false;
        out.push_back(c);
        if (!make("<=", major2, minor2, patch2, pre2, c)) return false;
        out.push_back(c);
        spaced = skip_space();
      } else {
        if (!make(op, major, minor, patch, pre, c)) return false;
        out.push_back(c);
      }
      if (at_end()) return true;
      // comparisons are separated by white space or a comma
      if (peek() == ',') {
        ++m_i;
        skip_space();
      } else if (!spaced) {
        return false;
      }
      if (at_end()) return false;
    }
  }

private:
  bool at_end() const { return m_i >= m_s.size(); }
  char peek() const { return at_end() ? '\0' : m_s[m_i]; }
  bool skip_space() {
    size_t start = m_i;
    while (!at_end() && is_space(m_s[m_i])) ++m_i;
    return m_i > start;
  }
  std::string scan_op() {
    // two-character operators first: Go's alternation backtracks to the one that lets the
    // version parse, which for these operators is always the longer
    static const char* ops[] = {">=", "=>", "<=", "=<", "!=", "~>", "=", ">", "<", "~", "^"};
    for (const char* o : ops) {
      std::string_view ov(o);
      if (m_s.substr(m_i, ov.size()) == ov) {
        m_i += ov.size();
        if (ov == "=>") return ">=";
        if (ov == "=<") return "<=";
        if (ov == "~>") return "~";
        return std::string(ov);
      }
    }
    return "";
  }
  std::string scan_part() {
    size_t start = m_i;
    while (!at_end() && (is_digit(m_s[m_i]) || m_s[m_i] == 'x' || m_s[m_i] == 'X' || m_s[m_i] == '*')) ++m_i;
    return std::string(m_s.substr(start, m_i - start));
  }
  std::string scan_identifiers() {
    size_t start = m_i;
    while (!at_end() && (ident_char(m_s[m_i]) || m_s[m_i] == '.')) ++m_i;
    return std::string(m_s.substr(start, m_i - start));
  }
  // v?PART(.PART)?(.PART)?(-PRE)?(+META)? with PART of digits, x, X or *.
  bool scan_version(std::string& major, std::string& minor, std::string& patch, std::string& pre) {
    if (peek() == 'v') ++m_i;
    major = scan_part();
    if (major.empty()) return false;
    for (std::string* part : {&minor, &patch}) {
      if (peek() != '.') break;
      ++m_i;
      *part = scan_part();
      if (part->empty()) return false;
    }
    if (peek() == '-') {
      ++m_i;
      pre = scan_identifiers();
      if (!valid_identifiers(pre, true)) return false;
    }
    if (peek() == '+') {
      ++m_i;
      if (!valid_identifiers(scan_identifiers(), false)) return false;
    }
    return at_end() || is_space(peek()) || peek() == ',';
  }
  // Masterminds' parseConstraint: wildcards and omitted parts become 0 and set the dirty
  // flags; the comparison's metadata is dropped.
  static bool make(const std::string& op, const std::string& major, const std::string& minor,
                   const std::string& patch, const std::string& pre, Comparison& c) {
    c = Comparison{};
    c.op = op;
    c.con.prerelease = pre;
    if (is_x(major)) {
      c.dirty = true;
      return true;
    }
    if (!parse_number(major, c.con.major)) return false;
    if (minor.empty() || is_x(minor)) {
      c.dirty = c.minor_dirty = true;
      return true;
    }
    if (!parse_number(minor, c.con.minor)) return false;
    if (patch.empty() || is_x(patch)) {
      c.dirty = c.patch_dirty = true;
      return true;
    }
    return parse_number(patch, c.con.patch);
  }

  std::string_view m_s;
  size_t m_i = 0;
};

// The check of each operator, as Masterminds' constraint functions do it (v3.2).
bool tilde(const Comparison& c, const Version& v) {
  const Version& k = c.con;
  if (compare(v, k) < 0) return false;
  // ~0.0.0 and ~* accept every version
  if (k.major == 0 && k.minor == 0 && k.patch == 0 && !c.minor_dirty && !c.patch_dirty) return true;
  if (v.major != k.major) return false;
  return v.minor == k.minor || c.minor_dirty;
}

bool check(const Comparison& c, const Version& v) {
  const Version& k = c.con;
  const std::string& op = c.op;
  if (op == "!=") {
    if (c.dirty) {
      if (!v.prerelease.empty() && k.prerelease.empty()) return false;
      if (k.major != v.major) return true;
      if (k.minor != v.minor && !c.minor_dirty) return true;
      if (c.minor_dirty) return false;
      if (c.patch_dirty) {
        if (!v.prerelease.empty() || !k.prerelease.empty()) return compare_prerelease(v.prerelease, k.prerelease) != 0;
        return false;
      }
    }
    return compare(v, k) != 0;
  }
  // Every other operator: a prerelease version needs a comparison that names a prerelease.
  if (!v.prerelease.empty() && k.prerelease.empty()) return false;
  if (op.empty() || op == "=") return c.dirty ? tilde(c, v) : compare(v, k) == 0;
  if (op == ">") {
    if (!c.dirty) return compare(v, k) > 0;
    if (v.major != k.major) return v.major > k.major;
    if (c.minor_dirty) return false;  // >1 (1.x) needs 2 or above
    if (c.patch_dirty) return v.minor > k.minor;
    return compare(v, k) > 0;
  }
  if (op == "<") return compare(v, k) < 0;
  if (op == ">=") return compare(v, k) >= 0;
  if (op == "<=") {
    if (!c.dirty) return compare(v, k) <= 0;
    if (v.major > k.major) return false;
    return !(v.major == k.major && v.minor > k.minor && !c.minor_dirty);
  }
  if (op == "~") return tilde(c, v);
  // "^"
  if (c.dirty && !c.minor_dirty && !c.patch_dirty) return true;  // ^* is any version
  if (compare(v, k) < 0) return false;
  if (k.major > 0 || c.minor_dirty) return v.major == k.major;
  if (v.major > 0) return false;
  if (k.minor > 0 || c.patch_dirty) return v.minor == k.minor;
  if (v.minor > 0) return false;
  return v.patch == k.patch;
}

}  // namespace

std::optional<Version> parse_version(std::string_view text) {
  Version v;
  v.original = std::string(text);
  std::string_view s = text;
  if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
  if (auto plus = s.find('+'); plus != std::string_view::npos) {
    v.metadata = std::string(s.substr(plus + 1));
    if (!valid_identifiers(v.metadata, false)) return std::nullopt;
    s = s.substr(0, plus);
  }
  if (auto dash = s.find('-'); dash != std::string_view::npos) {
    v.prerelease = std::string(s.substr(dash + 1));
    if (!valid_identifiers(v.prerelease, true)) return std::nullopt;
    s = s.substr(0, dash);
  }
  auto parts = split(s, '.');
  if (parts.size() > 3) return std::nullopt;
  std::uint64_t* dst[3] = {&v.major, &v.minor, &v.patch};
  for (size_t i = 0; i < parts.size(); ++i)
    if (!parse_number(parts[i], *dst[i])) return std::nullopt;
  return v;
}

int compare(const Version& a, const Version& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  return compare_prerelease(a.prerelease, b.prerelease);
}

Constraints parse_constraints(std::string_view text) {
  Constraints out;
  size_t start = 0;
  while (true) {
    size_t bar = text.find("||", start);
    std::string_view segment = text.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start);
    std::vector<Comparison> group;
    if (!SegmentScanner(segment).parse(group))
      throw Error(ErrorKind::invalid, "improper constraint: " + std::string(segment));
    out.alternatives.push_back(std::move(group));
    if (bar == std::string_view::npos) break;
    start = bar + 2;
  }
  return out;
}

bool satisfies(std::string_view constraint, std::string_view version) {
  auto v = parse_version(version);
  if (!v) return false;
  if (trim(constraint).empty()) return satisfies(parse_constraints("*"), *v);
  try {
    return satisfies(parse_constraints(constraint), *v);
  } catch (const Error&) {
    return false;
  }
}

bool satisfies(const Constraints& constraints, const Version& version) {
  for (const auto& group : constraints.alternatives) {
    bool all = true;
    for (const auto& c : group)
      if (!check(c, version)) {
        all = false;
        break;
      }
    if (all) return true;
  }
  return false;
}

}  // namespace emco::semver
