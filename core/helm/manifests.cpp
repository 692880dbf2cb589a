#include "core/helm/manifests.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <tuple>
#include <unordered_map>

#include "core/template/value.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "core/yaml/yaml.hpp"

namespace emco::helm {

const std::vector<std::string>& install_order() {
  static const std::vector<std::string> order = {
      "PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
      "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
      "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList",
      "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
      "Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
      "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService"};
  return order;
}

namespace {

// Whether `s` holds a byte libyaml refuses in a document: a C0 control other than tab (tab
// too unless `tab_ok`) or DEL. Rendered dashboards make megabytes of lines, so eight bytes are
// tested at a time; a word that may hold such a byte is looked at byte by byte.
bool has_control(std::string_view s, bool tab_ok) {
  auto bad = [tab_ok](char c) {
    auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && !(tab_ok && c == '\t')) || u == 0x7f;
  };
  constexpr std::uint64_t k_ones = 0x0101010101010101ULL, k_highs = 0x8080808080808080ULL;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t x;
    std::memcpy(&x, s.data() + i, 8);
    std::uint64_t below_space = (x - k_ones * 0x20) & ~x & k_highs;
    std::uint64_t y = x ^ (k_ones * 0x7f);
    std::uint64_t del = (y - k_ones) & ~y & k_highs;
    if ((below_space | del) == 0) continue;
    for (std::size_t k = i; k < i + 8; ++k)
      if (bad(s[k])) return true;
  }
  for (; i < s.size(); ++i)
    if (bad(s[i])) return true;
  return false;
}

// The number of leading spaces of `s`, or npos when it holds nothing else (as
// find_first_not_of(' ')), eight bytes at a time.
std::size_t indentation(std::string_view s) {
  constexpr std::uint64_t k_spaces = 0x2020202020202020ULL;
  std::size_t i = 0;
  for (std::uint64_t x; i + 8 <= s.size(); i += 8) {
    std::memcpy(&x, s.data() + i, 8);
    if (x != k_spaces) break;
  }
  while (i < s.size() && s[i] == ' ') ++i;
  return i == s.size() ? std::string_view::npos : i;
}

// Go's strings.TrimSpace for the ASCII whitespace Helm output contains.
std::string_view go_trim(std::string_view s) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

int kind_rank(const std::string& kind) {
  static const std::unordered_map<std::string, int> ranks = [] {
    std::unordered_map<std::string, int> m;
    const auto& order = install_order();
    for (size_t i = 0; i < order.size(); ++i) m[order[i]] = static_cast<int>(i);
    return m;
  }();
  auto it = ranks.find(kind);
  return it == ranks.end() ? -1 : it->second;
}

// helm's words for a document goyaml.v2 refuses (sigs.k8s.io/yaml wraps goyaml's error)
std::string goyaml_error(const yaml::ParseError& e) { return "error converting YAML to JSON: " + e.goyaml_text(); }

yaml::Options first_document_only() {
  yaml::Options o;
  o.max_documents = 1;  // yaml.Unmarshal reads the first document only
  return o;
}

// --- fast path ----------------------------------------------------------------------------
//
// Rendered charts are large (CRDs of a megabyte) and a full parse builds a tree, so documents are first
// read by a small recognizer of the plain block-YAML subset templates produce: block maps and
// sequences indented with spaces, plain/quoted scalars, block scalars (| >), one-line flow
// collections and comments. It only ever answers "valid, and here is the head" for text it
// fully understands; anything else (anchors, tags, multi-line plain scalars, odd indentation,
// and every error) goes to core/yaml, which decides and words the error.
namespace fast {

struct Line {
  int indent = 0;
  std::string_view text;  // without indentation and trailing spaces
};

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Cuts a trailing " #comment" from text that holds no quotes.
std::string_view strip_comment(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == '#' && (i == 0 || is_space(s[i - 1]))) return rtrim(s.substr(0, i));
  return s;
}

bool plain_start_ok(std::string_view s) {
  if (s.empty()) return false;
  char c = s[0];
  if (std::string_view("[]{},#&*!|>'\"%@`").find(c) != std::string_view::npos) return false;
  if ((c == '-' || c == '?' || c == ':') && (s.size() == 1 || is_space(s[1]))) return false;
  return true;
}

// Plain scalars whose decoding can fail in Helm: a non-finite float (json.Marshal refuses it;
// any text of 4 or 5 bytes starting ".", "+." or "-." is let go, which covers .inf and .nan).
bool plain_value_risky(std::string_view s) {
  return (s.size() == 4 || s.size() == 5) && (s[0] == '.' || ((s[0] == '+' || s[0] == '-') && s[1] == '.'));
}

// Plain keys whose decoding is not a plain string key: a merge ("<<") or null (sigs.k8s.io/yaml
// refuses a nil key).
bool plain_key_risky(std::string_view s) {
  switch (s.size()) {  // every key is asked: the length first
    case 1: return s[0] == '~';
    case 2: return s[0] == '<' && s[1] == '<';
    case 4: return (s[1] == 'u' || s[1] == 'U') && (s == "null" || s == "Null" || s == "NULL");
    default: return false;
  }
}

// A plain scalar in block context on one line: no ": " inside, no trailing ':'.
bool plain_ok(std::string_view s) {
  if (!plain_start_ok(s)) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ':' && (i + 1 == s.size() || is_space(s[i + 1]))) return false;
    if (s[i] == '\t') return false;
  }
  return true;
}

// Parses a double- or single-quoted scalar starting at s[0]; sets `end` past the closing
// quote and `value` to its text. False when it is not closed on this line or uses escapes
// we do not decode.
bool quoted(std::string_view s, size_t& end, std::string& value) {
  char q = s[0];
  value.clear();
  for (size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (q == '\'') {
      if (c == '\'') {
        if (i + 1 < s.size() && s[i + 1] == '\'') {
          value += '\'';
          ++i;
          continue;
        }
        end = i + 1;
        return true;
      }
      value += c;
    } else {
      if (c == '"') {
        end = i + 1;
        return true;
      }
      if (c == '\\') {
        if (i + 1 >= s.size()) return false;
        char e = s[++i];
        switch (e) {
          case '"': value += '"'; break;
          case '\\': value += '\\'; break;
          case '/': value += '/'; break;
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case 'r': value += '\r'; break;
          case ' ': value += ' '; break;
          case '0': value += '\0'; break;
          default: return false;  // other escapes: let the full parser judge
        }
        continue;
      }
      value += c;
    }
  }
  return false;
}

// After a quoted scalar only spaces and a comment may follow.
bool only_comment(std::string_view rest) {
  rest = rtrim(rest);
  if (rest.empty()) return true;
  return is_space(rest[0]) && strip_comment(rest).find_first_not_of(" \t") == std::string_view::npos;
}

// One-line flow collection: [a, "b", {c: d}] with plain/quoted scalars.
bool flow(std::string_view s, size_t& i, int depth) {
  if (depth > 32) return false;
  char open = s[i], close = open == '[' ? ']' : '}';
  ++i;
  auto skip = [&] {
    while (i < s.size() && s[i] == ' ') ++i;
  };
  auto scalar = [&](bool is_key) -> bool {
    skip();
    if (i >= s.size()) return false;
    if (s[i] == '[' || s[i] == '{') return !is_key && flow(s, i, depth + 1);
    if (s[i] == '"' || s[i] == '\'') {
      size_t end = 0;
      std::string v;
      if (!quoted(s.substr(i), end, v)) return false;
      i += end;
      return true;
    }
    size_t start = i;
    while (i < s.size() && std::string_view(",[]{}").find(s[i]) == std::string_view::npos) {
      if (s[i] == ':' && (i + 1 >= s.size() || s[i + 1] == ' ' || std::string_view(",[]{}").find(s[i + 1]) != std::string_view::npos))
        break;
      if (s[i] == '#' && i > start && s[i - 1] == ' ') return false;
      ++i;
    }
    std::string_view tok = rtrim(s.substr(start, i - start));
    if (tok.empty() || !plain_start_ok(tok) || tok[0] == '?' || tok[0] == '-' || tok[0] == ':') return false;
    if (is_key ? plain_key_risky(tok) : plain_value_risky(tok)) return false;
    return tok.find_first_of("'\"?#&*!|>%@`\t") == std::string_view::npos;
  };
  skip();
  if (i < s.size() && s[i] == close) {
    ++i;
    return true;
  }
  for (;;) {
    if (!scalar(open == '{')) return false;
    skip();
    if (open == '{') {
      if (i >= s.size() || s[i] != ':') return false;
      ++i;
      if (i < s.size() && s[i] != ' ') return false;
      if (!scalar(false)) return false;
      skip();
    }
    if (i >= s.size()) return false;
    if (s[i] == ',') {
      ++i;
      continue;
    }
    if (s[i] == close) {
      ++i;
      return true;
    }
    return false;
  }
}

class Reader {
public:
  explicit Reader(const std::string& doc) {
    size_t pos = 0;
    while (pos <= doc.size()) {
      size_t nl = doc.find('\n', pos);
      std::string_view raw(doc.data() + pos, (nl == std::string::npos ? doc.size() : nl) - pos);
      m_raw.push_back(raw);
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
  }

  bool run(ManifestHead& head) {
    size_t i = 0;
    while (i < m_raw.size()) {
      std::string_view raw = m_raw[i];
      if (has_control(raw, true)) return false;
      size_t ind = indentation(raw);
      if (ind == std::string_view::npos) {  // blank line
        ++i;
        continue;
      }
      if (raw[ind] == '\t') return false;  // tabs in indentation: libyaml's rules are subtle
      std::string_view text = rtrim(raw.substr(ind));
      if (text[0] == '#') {
        ++i;
        continue;
      }
      if (text.starts_with("---") || text.starts_with("...") || text[0] == '%') return false;
      ++i;
      if (!line(static_cast<int>(ind), text, i)) return false;
    }
    if (!m_seen_content) return false;  // comment-only documents: the full parser
    head = std::move(m_head);
    return true;
  }

private:
  struct Frame {
    int indent;
    bool is_seq;
    bool compact;     // a sequence at its parent key's indentation
    std::string_view key;  // the key this block is the value of ("" for items / root)
  };

  // Where a key with no value (or a bare "-") waits for its block.
  struct Pending {
    bool active = false;
    int indent = 0;
    bool from_key = false;
    std::string_view key;
  };

  bool push(Frame f) {
    if (m_stack.size() == 1 && f.key == "metadata") {
      if (f.is_seq) return false;  // Helm cannot read a list as metadata
      m_head.has_metadata = true;
    }
    if (m_stack.size() == 2 && m_stack[1].key == "metadata" && f.key == "annotations" && f.is_seq) return false;
    m_stack.push_back(std::move(f));
    return true;
  }

  bool line(int ind, std::string_view text, size_t& next) {
    m_seen_content = true;
    bool dash = text == "-" || text.starts_with("- ");
    if (m_pending.active) {
      Pending p = m_pending;
      m_pending.active = false;
      if (ind > p.indent) {
        std::string_view k;
        size_t after = 0;
        if (p.from_key && head_position(p.key) && !(at_path({""}) && p.key == "metadata") &&
            !(at_path({"", "metadata"}) && p.key == "annotations"))
          return false;  // a head field with a value on the next lines: the full parser reads it
        if (dash || map_key(text, k, after)) return push({ind, dash, false, p.key}) && content(ind, text, next);
        // A scalar or flow value on the line after its key or dash.
        if (p.from_key && head_position(p.key)) {
          // ...but `annotations:` over an empty `{}` (charts write `annotations:` and then
          // `{{ toYaml .Values.x | nindent 4 }}`): no annotations.
          if (at_path({"", "metadata"}) && p.key == "annotations" && strip_comment(text) == "{}") {
            m_head.annotations.clear();  // the last annotations key counts, as in goyaml.v2
            return true;
          }
          return false;
        }
        return value(p.indent, text, next, nullptr);
      }
      if (ind == p.indent && p.from_key && dash) return push({ind, true, true, p.key}) && content(ind, text, next);
    }
    if (m_stack.empty()) {
      if (ind != 0 || dash) return false;  // the root must be a mapping
      m_stack.push_back({0, false, false, ""});
      return content(ind, text, next);
    }
    while (!m_stack.empty() && m_stack.back().indent > ind) m_stack.pop_back();
    if (m_stack.empty() || m_stack.back().indent != ind) return false;
    if (m_stack.back().is_seq && !dash) {
      if (!m_stack.back().compact) return false;
      m_stack.pop_back();
      if (m_stack.empty() || m_stack.back().indent != ind || m_stack.back().is_seq) return false;
    }
    if (!m_stack.back().is_seq && dash) return false;
    return content(ind, text, next);
  }

  // Whether `key` in the current frame is one of the head fields Helm reads.
  bool head_position(std::string_view key) const {
    return (at_path({""}) && (key == "apiVersion" || key == "kind" || key == "metadata")) ||
           (at_path({"", "metadata"}) && (key == "name" || key == "annotations")) ||
           at_path({"", "metadata", "annotations"});
  }

  // Path of keys from the root to the current frame, for head extraction.
  bool at_path(std::initializer_list<std::string_view> path) const {
    if (m_stack.size() != path.size()) return false;
    size_t k = 0;
    for (auto p : path) {
      if (k > 0 && m_stack[k].key != p) return false;
      if (m_stack[k].is_seq) return false;
      ++k;
    }
    return true;
  }

  bool content(int ind, std::string_view text, size_t& next) {
    if (m_stack.back().is_seq) {
      // "- rest": the rest starts at column ind + 2 + extra spaces
      if (text == "-") {
        m_pending = {true, ind, false, ""};
        return true;
      }
      std::string_view rest = text.substr(2);
      size_t extra = rest.find_first_not_of(' ');
      if (extra == std::string_view::npos) {
        m_pending = {true, ind, false, ""};
        return true;
      }
      int col = ind + 2 + static_cast<int>(extra);
      rest = rest.substr(extra);
      if (rest[0] == '#') {
        m_pending = {true, ind, false, ""};
        return true;
      }
      if (rest == "-" || rest.starts_with("- ")) {
        m_stack.push_back({col, true, false, ""});
        return content(col, rest, next);
      }
      std::string_view key;
      size_t after = 0;
      if (map_key(rest, key, after)) {
        m_stack.push_back({col, false, false, ""});
        return entry(col, rest, key, after, next);
      }
      return value(ind, rest, next, nullptr);
    }
    std::string_view key;
    size_t after = 0;
    if (!map_key(text, key, after)) return false;
    return entry(ind, text, key, after, next);
  }

  // Recognizes `key:` (plain or quoted key) and where its value starts. `key` views the line,
  // or for a quoted key its unescaped text kept by the reader.
  bool map_key(std::string_view text, std::string_view& key, size_t& after) {
    if (text[0] == '"' || text[0] == '\'') {
      size_t end = 0;
      std::string unquoted;
      if (!quoted(text, end, unquoted)) return false;
      key = m_quoted_keys.emplace_back(std::move(unquoted));
      if (end >= text.size() || text[end] != ':') return false;
      if (end + 1 < text.size() && text[end + 1] != ' ') return false;
      after = end + 1;
      return true;
    }
    if (!plain_start_ok(text)) return false;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '#' && i > 0 && is_space(text[i - 1])) return false;
      if (text[i] == ':' && (i + 1 == text.size() || text[i + 1] == ' ')) {
        key = rtrim(text.substr(0, i));
        if (key.empty() || key.find('\t') != std::string_view::npos || plain_key_risky(key)) return false;
        after = i + 1;
        return true;
      }
    }
    return false;
  }

  // Whether `key` reaches a head field the way encoding/json matches names but is not its exact
  // name (`Kind:`, `METADATA:`): the full parser applies JSON's rules for those.
  bool head_key_variant(std::string_view key) const {
    // Cheap refusals first, as every key is asked: the level, the lengths of the names (a
    // Kelvin sign or long s adds bytes) and their first letters.
    if (m_stack.size() > 2 || key.size() < 4 || key.size() > 12) return false;
    char first = static_cast<char>(key[0] | 0x20);
    if (first != 'a' && first != 'k' && first != 'm' && first != 'n' && key[0] != '\xE2') return false;
    auto variant = [key](std::string_view field) { return key != field && tmpl::json_name_matches(key, field); };
    if (m_stack.size() == 1) return at_path({""}) && (variant("apiVersion") || variant("kind") || variant("metadata"));
    return at_path({"", "metadata"}) && (variant("name") || variant("annotations"));
  }

  bool entry(int ind, std::string_view text, std::string_view key, size_t after, size_t& next) {
    if (head_key_variant(key)) return false;
    // Where the entry sits, found once (nothing below moves the stack); most entries are deeper
    // than any head field.
    const bool shallow = m_stack.size() <= 3;
    const bool at_root = shallow && at_path({""});
    const bool at_metadata = shallow && at_path({"", "metadata"});
    const bool at_annotations = shallow && at_path({"", "metadata", "annotations"});
    // A repeated key replaces the earlier value (goyaml.v2, as the full parser reads it): a
    // second metadata or annotations starts from nothing rather than adding to the first.
    if (at_root && key == "metadata") {
      m_head.has_metadata = false;  // set again when its block opens
      m_head.name.clear();
      m_head.annotations.clear();
    } else if (at_metadata && key == "annotations") {
      m_head.annotations.clear();
    }
    std::string_view rest = text.substr(after);
    size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos || rest[start] == '#') {
      if (at_annotations) m_head.annotations[std::string(key)] = "";  // null reads as ""
      m_pending = {true, ind, true, key};
      // metadata / annotations blocks are reached through their key
      return true;
    }
    rest = rest.substr(start);
    bool wanted = (at_root && (key == "apiVersion" || key == "kind")) ||
                  (at_metadata && key == "name") || at_annotations;
    std::string scalar;
    bool is_scalar = false;
    if (!value(ind, rest, next, wanted ? &scalar : nullptr, &is_scalar)) return false;
    // The head: apiVersion, kind, metadata.name, metadata.annotations.* must be plain text;
    // metadata and annotations written inline (scalar or flow) go to the full parser.
    if (at_root) {
      if (key == "metadata") return false;
      if (key == "apiVersion" || key == "kind") {
        if (!is_scalar) return false;
        (key == "kind" ? m_head.kind : m_head.api_version) = scalar;
      }
    } else if (at_metadata) {
      if (key == "annotations") {
        if (strip_comment(rest) != "{}") return false;
        m_head.annotations.clear();  // `annotations: {}`: none (the last annotations key counts)
        return true;
      }
      if (key == "name") {
        if (!is_scalar) return false;
        m_head.name = scalar;
      }
    } else if (at_annotations) {
      if (!is_scalar) return false;
      m_head.annotations[std::string(key)] = scalar;
    }
    return true;
  }

  // A value on the same line as its key or dash. `scalar` receives one-line scalar text.
  bool value(int ind, std::string_view rest, size_t& next, std::string* scalar, bool* is_scalar = nullptr) {
    char c = rest[0];
    if (c == '"' || c == '\'') {
      size_t end = 0;
      std::string v;
      if (quoted(rest, end, v)) {
        if (!only_comment(rest.substr(end))) return false;
        if (scalar) *scalar = v;
        if (is_scalar) *is_scalar = true;
        return true;
      }
      // A quoted scalar over several lines (never a head field): every continuation line
      // indented deeper than the parent, checked as one joined line.
      if (scalar) return false;
      std::string joined(rest);
      for (size_t j = next; j < m_raw.size(); ++j) {
        std::string_view raw = m_raw[j];
        size_t k = indentation(raw);
        if (k != std::string_view::npos && (static_cast<int>(k) <= ind || raw[k] == '\t')) return false;
        if (has_control(raw, true)) return false;
        joined += ' ';
        joined += k == std::string_view::npos ? std::string_view() : rtrim(raw.substr(k));
        if (quoted(joined, end, v)) {
          if (!only_comment(std::string_view(joined).substr(end))) return false;
          next = j + 1;
          if (is_scalar) *is_scalar = true;
          return true;
        }
      }
      return false;
    }
    if (c == '|' || c == '>') return block_scalar(ind, rest, next);
    if (c == '[' || c == '{') {
      size_t i = 0;
      if (!flow(rest, i, 0)) return false;
      return only_comment(rest.substr(i));
    }
    std::string_view v = strip_comment(rest);
    if (!plain_ok(v) || plain_value_risky(v)) return false;
    // More indented lines continue a plain scalar (folded into one); a comment ends it.
    bool ended = v.size() != rest.size();
    size_t continued_to = 0;
    for (size_t j = next; j < m_raw.size(); ++j) {
      std::string_view raw = m_raw[j];
      size_t k = indentation(raw);
      if (k == std::string_view::npos) continue;
      if (raw[k] == '\t') return false;
      if (static_cast<int>(k) <= ind) break;
      std::string_view t = rtrim(raw.substr(k));
      if (t[0] == '#') {
        ended = true;
        continue;
      }
      // Continuation lines may start with any character but the block indicators.
      if (ended || strip_comment(t).size() != t.size()) return false;
      if (((t[0] == '-' || t[0] == '?' || t[0] == ':') && (t.size() == 1 || t[1] == ' ')) || t[0] == '#')
        return false;
      for (size_t q = 0; q < t.size(); ++q)
        if (t[q] == ':' && (q + 1 == t.size() || t[q + 1] == ' ')) return false;
      if (has_control(raw, false)) return false;
      continued_to = j + 1;
    }
    if (continued_to > 0) {
      if (scalar) return false;  // a head field folded over lines: the full parser reads it
      next = continued_to;
    }
    if (scalar) {
      if (!tmpl::yaml_plain_is_string(v)) return false;  // YAML 1.1 (goyaml.v2): the head must be text
      *scalar = std::string(v);
    }
    if (is_scalar) *is_scalar = true;
    return true;
  }

  bool block_scalar(int parent, std::string_view header, size_t& next) {
    std::string_view h = strip_comment(header);
    if (h.size() > 2 || (h.size() == 2 && h[1] != '-' && h[1] != '+')) return false;
    int content = -1;
    while (next < m_raw.size()) {
      std::string_view raw = m_raw[next];
      size_t k = indentation(raw);
      if (k == std::string_view::npos) {  // blank (spaces only) lines belong to the scalar
        ++next;
        continue;
      }
      // libyaml refuses a tab where the indentation is still being found (the
      // first content line) or is expected (less indented than the content).
      if (raw[k] == '\t' && (content < 0 || static_cast<int>(k) < content)) return false;
      if (static_cast<int>(k) <= parent) break;
      if (content < 0) {
        content = static_cast<int>(k);
      } else if (static_cast<int>(k) < content) {
        return false;  // less indented than the first line: the full parser decides
      }
      if (has_control(raw, true)) return false;
      ++next;
    }
    return true;
  }

  std::vector<std::string_view> m_raw;
  std::deque<std::string> m_quoted_keys;  // unescaped quoted keys, viewed by frames (never move)
  std::vector<Frame> m_stack;
  Pending m_pending;
  ManifestHead m_head;
  bool m_seen_content = false;
};

}  // namespace fast

}  // namespace

// Helm's SplitManifests: the trimmed text split at each match of the Go regexp
// `(?:^|\s*\n)---\s*`, pieces trimmed, empty ones dropped. A hand-written matcher, since the
// regexp engine cost more than the rest of the sort: the leftmost match either starts the text
// with "---" or starts where the run of whitespace ([\t\n\f\r ] in Go) before the next
// "\n---" begins (not before `from`); it ends after "---" and all whitespace that follows.
namespace {

bool go_regexp_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

// The next separator at or after `from` as [start, end), or false.
bool next_separator(std::string_view text, size_t from, size_t& start, size_t& end) {
  size_t dashes;
  if (from == 0 && text.substr(0, 3) == "---") {
    start = 0;
    dashes = 0;
  } else {
    size_t nl = text.find("\n---", from);
    if (nl == std::string_view::npos) return false;
    start = nl;
    while (start > from && go_regexp_space(text[start - 1])) --start;
    dashes = nl + 1;
  }
  end = dashes + 3;
  while (end < text.size() && go_regexp_space(text[end])) ++end;
  return true;
}

}  // namespace

std::vector<std::string> split_manifests(std::string_view text) {
  std::string_view big = go_trim(text);
  std::vector<std::string> docs;
  auto add = [&](std::string_view piece) {
    piece = go_trim(piece);
    if (!piece.empty()) docs.emplace_back(piece);
  };
  size_t pos = 0, start = 0, end = 0;
  while (next_separator(big, pos, start, end)) {
    add(big.substr(pos, start - pos));
    pos = end;
  }
  add(big.substr(pos));
  return docs;
}

std::string yaml_syntax_error(const std::string& text) {
  try {
    yaml::parse(text, first_document_only());
  } catch (const yaml::ParseError& e) {
    return goyaml_error(e);
  }
  return "";
}

bool read_head_fast(const std::string& doc, ManifestHead& head) { return fast::Reader(doc).run(head); }

ManifestHead parse_manifest_head(const std::string& doc) {
  ManifestHead head;
  if (read_head_fast(doc, head)) return head;
  return parse_manifest_head_slow(doc);
}

namespace {

// What sigs.k8s.io/yaml is told of releaseutil.SimpleHead: its string fields get scalars as text.
const tmpl::GoTarget& simple_head_target() {
  using T = tmpl::GoTarget::Type;
  static const tmpl::GoTarget text{T::string, {}, nullptr};
  static const tmpl::GoTarget annotations{T::map, {}, &text};
  static const tmpl::GoTarget metadata{T::structure, {{"name", &text}, {"annotations", &annotations}}, nullptr};
  static const tmpl::GoTarget head{T::structure, {{"apiVersion", &text}, {"kind", &text}, {"metadata", &metadata}}, nullptr};
  return head;
}

// encoding/json's word for a JSON value in its errors.
const char* json_type(const tmpl::Value& v) {
  switch (v.kind()) {
    case tmpl::Kind::null: return "null";
    case tmpl::Kind::boolean: return "bool";
    case tmpl::Kind::integer:
    case tmpl::Kind::floating: return "number";
    case tmpl::Kind::string: return "string";
    case tmpl::Kind::list: return "array";
    default: break;
  }
  return "object";
}

// encoding/json's Unmarshal of the JSON sigs.k8s.io/yaml made into a SimpleHead: object keys in
// their (sorted) order, each matched to a field by name or case-insensitively, a later match
// replacing an earlier one, a second metadata object filling the same struct and a second
// annotations object the same map, null resetting a pointer or map. A value of the wrong type
// is skipped and the first such is the error.
class SimpleHeadDecoder {
public:
  ManifestHead decode(const tmpl::Value& json) {
    ManifestHead head;
    if (json.is_null()) return head;
    if (!json.is_map())
      fail_json(std::string("cannot unmarshal ") + json_type(json) + " into Go value of type releaseutil.SimpleHead");
    for (const auto& [key, v] : json.as_map()) {
      if (tmpl::json_name_matches(key, "apiVersion")) {
        text_field(v, "SimpleHead.apiVersion", head.api_version);
      } else if (tmpl::json_name_matches(key, "kind")) {
        text_field(v, "SimpleHead.kind", head.kind);
      } else if (tmpl::json_name_matches(key, "metadata")) {
        metadata(v, head);
      }
    }
    if (!m_error.empty()) fail_json(m_error);
    return head;
  }

private:
  std::string m_error;

  [[noreturn]] static void fail_json(const std::string& what) {
    fail(ErrorKind::invalid, "error unmarshaling JSON: while decoding JSON: json: " + what);
  }

  void type_error(const tmpl::Value& v, std::string_view field, std::string_view type) {
    if (m_error.empty())
      m_error = std::string("cannot unmarshal ") + json_type(v) + " into Go struct field " + std::string(field) + " of type " +
                std::string(type);
  }

  void text_field(const tmpl::Value& v, std::string_view field, std::string& out) {
    if (v.is_string()) out = v.as_string();
    else if (!v.is_null()) type_error(v, field, "string");
  }

  void metadata(const tmpl::Value& v, ManifestHead& head) {
    if (v.is_null()) {
      head.has_metadata = false;
      head.name.clear();
      head.annotations.clear();
      return;
    }
    if (!v.is_map()) {
      type_error(v, "SimpleHead.metadata",
                 "struct { Name string \"json:\\\"name\\\"\"; Annotations map[string]string \"json:\\\"annotations\\\"\" }");
      return;
    }
    head.has_metadata = true;
    for (const auto& [key, e] : v.as_map()) {
      if (tmpl::json_name_matches(key, "name")) {
        text_field(e, ".metadata.name", head.name);  // the struct is anonymous: no type name before the dot
      } else if (tmpl::json_name_matches(key, "annotations")) {
        if (e.is_null()) {
          head.annotations.clear();
        } else if (!e.is_map()) {
          type_error(e, ".metadata.annotations", "map[string]string");
        } else {
          for (const auto& [name, value] : e.as_map()) {
            std::string& slot = head.annotations[name];
            slot.clear();
            text_field(value, ".metadata.annotations", slot);
          }
        }
      }
    }
  }
};

}  // namespace

ManifestHead parse_manifest_head_slow(const std::string& doc) {
  tmpl::Value json;
  try {
    std::vector<yaml::Document> docs = yaml::parse(doc, first_document_only());
    if (docs.empty()) return ManifestHead{};
    json = tmpl::yaml_to_json_value(docs.front(), &simple_head_target());
  } catch (const yaml::ParseError& e) {
    fail(ErrorKind::invalid, goyaml_error(e));
  }
  return SimpleHeadDecoder().decode(json);
}

namespace {

// Helm's stable sort by lessByKind (install-order rank; unknown kinds last, by name). Each
// item's rank is looked up once (a hash of its kind) rather than twice per comparison: indices
// are sorted by rank, then the items moved into that order.
template <typename T, typename KindOf>
void stable_sort_by_kind(std::vector<T>& items, KindOf kind_of) {
  std::vector<std::pair<int, std::size_t>> ranked;  // (rank, index)
  ranked.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) ranked.emplace_back(kind_rank(kind_of(items[i])), i);
  std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    if (a.first < 0 && b.first < 0) return kind_of(items[a.second]) < kind_of(items[b.second]);
    if (a.first < 0) return false;
    if (b.first < 0) return true;
    return a.first < b.first;
  });
  std::vector<T> sorted;
  sorted.reserve(items.size());
  for (const auto& entry : ranked) sorted.push_back(std::move(items[entry.second]));
  items = std::move(sorted);
}

}  // namespace

void sort_by_kind(std::vector<Manifest>& manifests) {
  stable_sort_by_kind(manifests, [](const Manifest& m) -> const std::string& { return m.head.kind; });
}

void sort_by_kind(std::vector<Hook>& hooks) {
  stable_sort_by_kind(hooks, [](const Hook& h) -> const std::string& { return h.kind; });
}

SortedManifests sort_manifests(const std::map<std::string, std::string>& files) {
  static const std::map<std::string, std::string> events = {
      {"pre-install", "pre-install"},   {"post-install", "post-install"},   {"pre-delete", "pre-delete"},
      {"post-delete", "post-delete"},   {"pre-upgrade", "pre-upgrade"},     {"post-upgrade", "post-upgrade"},
      {"pre-rollback", "pre-rollback"}, {"post-rollback", "post-rollback"}, {"test", "test"},
      {"test-success", "test"}};
  SortedManifests out;
  for (const auto& [path, content] : files) {  // std::map: sorted like Go's sort.Strings
    auto base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
    if (starts_with(base, "_")) continue;
    if (go_trim(content).empty()) continue;
    for (auto& doc : split_manifests(content)) {
      ManifestHead head;
      try {
        head = parse_manifest_head(doc);
      } catch (const Error& e) {
        fail(ErrorKind::failed, "YAML parse error on " + path + ": " + e.message());
      }
      auto hook_it = head.annotations.find("helm.sh/hook");
      if (hook_it == head.annotations.end()) {
        out.manifests.push_back({path, std::move(doc), std::move(head)});
        continue;
      }
      Hook hook;
      hook.source = path;
      hook.kind = head.kind;
      hook.name = head.name;
      auto weight_it = head.annotations.find("helm.sh/hook-weight");
      if (weight_it != head.annotations.end()) {
        // strconv.Atoi: optional sign and decimal digits only, else 0.
        const std::string& w = weight_it->second;
        size_t i = (!w.empty() && (w[0] == '+' || w[0] == '-')) ? 1 : 0;
        bool ok = i < w.size() && w.size() - i <= 18 &&
                  std::all_of(w.begin() + static_cast<long>(i), w.end(), [](char c) { return c >= '0' && c <= '9'; });
        hook.weight = ok ? static_cast<int>(std::stoll(w)) : 0;
      }
      bool unknown = false;
      for (const auto& raw : split(hook_it->second, ',')) {
        auto ev = events.find(to_lower(trim(raw)));
        if (ev == events.end()) {
          unknown = true;
          break;
        }
        hook.events.push_back(ev->second);
      }
      if (unknown) {
        out.log_lines.push_back("manifest_sorter.go:190: info: skipping unknown hook: \"" + hook_it->second + "\"");
        continue;
      }
      auto del_it = head.annotations.find("helm.sh/hook-delete-policy");
      if (del_it != head.annotations.end())
        for (const auto& p : split(del_it->second, ',')) hook.delete_policies.push_back(trim(p));
      hook.content = std::move(doc);
      out.hooks.push_back(std::move(hook));
    }
  }
  sort_by_kind(out.hooks);
  sort_by_kind(out.manifests);
  return out;
}

}  // namespace emco::helm
