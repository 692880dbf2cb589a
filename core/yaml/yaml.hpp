#pragma once
// emco's YAML loader: one pass over the bytes into a compact node tree.
//
// The scanner and parser follow libyaml as goyaml.v2 (the YAML library under
// sigs.k8s.io/yaml and therefore Helm) implements it, so the same text is
// accepted or refused, and refusals carry goyaml's wording and line numbers
// (ParseError::goyaml_text()). Scalars are returned with their style and tag
// and are never typed here: the caller applies its own resolution rules
// (YAML 1.1 for Helm values, 1.2 for yaml.v3 users, JSON for manifests).
//
// Guarantees: time and memory are linear in the input. Every node has its
// 1-based line and column. Nesting deeper than Options::max_depth is refused.
// Aliases are kept as nodes pointing at their anchor's node (the tree does not
// grow with them); callers that expand them use AliasBudget, which bounds the
// expansion to a multiple of the document's size (billion laughs).

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace emco::yaml {

enum class NodeType : std::uint8_t { scalar, sequence, mapping, alias };
enum class Style : std::uint8_t { plain, single_quoted, double_quoted, literal, folded, block, flow };

using NodeId = std::uint32_t;

struct Node {
  NodeType type = NodeType::scalar;
  Style style = Style::plain;  // scalars: plain..folded; collections: block or flow
  std::uint32_t line = 0;      // 1-based, of the node's first token (anchor or tag included)
  std::uint32_t column = 0;    // 1-based, in characters
  std::uint32_t a = 0;         // scalar: offset of the value in the text pool; collection: first child slot
  std::uint32_t b = 0;         // scalar: value length; sequence: items; mapping: pairs; alias: target NodeId
  std::uint32_t tag = 0;       // index into Document tags, 0 = no tag
};

// One document of a stream. Node ids are stable indexes; children of a
// mapping alternate key, value.
class Document {
public:
  NodeId root() const { return m_root; }
  const Node& node(NodeId id) const { return m_nodes[id]; }
  std::size_t node_count() const { return m_nodes.size(); }

  // The scalar's value after unescaping and folding.
  std::string_view scalar(NodeId id) const {
    const Node& n = m_nodes[id];
    return std::string_view(m_pool).substr(n.a, n.b);
  }
  // Resolved tag: "" none, "!" non-specific, otherwise the full tag ("tag:yaml.org,2002:str", "!local").
  const std::string& tag(NodeId id) const { return m_tags[m_nodes[id].tag]; }
  // Number of items (sequence) or pairs (mapping).
  std::size_t size(NodeId id) const { return m_nodes[id].b; }
  NodeId item(NodeId seq, std::size_t i) const { return m_kids[m_nodes[seq].a + i]; }
  NodeId key(NodeId map, std::size_t i) const { return m_kids[m_nodes[map].a + 2 * i]; }
  NodeId value(NodeId map, std::size_t i) const { return m_kids[m_nodes[map].a + 2 * i + 1]; }
  // An alias's anchored node (which is never itself an alias); other nodes unchanged.
  NodeId target(NodeId id) const { return m_nodes[id].type == NodeType::alias ? m_nodes[id].b : id; }
  // A plain, untagged scalar: the only kind YAML resolves by its text (null, bools, numbers, "<<").
  bool is_plain(NodeId id) const {
    const Node& n = m_nodes[id];
    return n.type == NodeType::scalar && n.style == Style::plain && n.tag == 0;
  }
  // The value of the last pair whose key is the scalar `key` (goyaml.v2 lets a later key win), or k_none.
  static constexpr NodeId k_none = 0xFFFFFFFFu;
  NodeId find(NodeId map, std::string_view key) const;

private:
  friend class Builder;
  std::vector<Node> m_nodes;
  std::vector<NodeId> m_kids;
  std::string m_pool;
  std::vector<std::string> m_tags{std::string()};
  NodeId m_root = 0;
};

struct Options {
  int max_depth = 1000;           // collections nested deeper are refused
  std::size_t max_documents = 0;  // 0 = all; 1 = stop after the first (what yaml.Unmarshal reads)
};

// A syntax error as libyaml reports it. Lines and columns are 0-based marks.
class ParseError : public std::runtime_error {
public:
  enum class Stage { reader, scanner, parser, loader };
  ParseError(Stage stage, std::string problem, int problem_line, int problem_column, int context_line);

  Stage stage() const { return m_stage; }
  const std::string& problem() const { return m_problem; }
  int line() const { return m_line + 1; }      // 1-based line of the problem
  int column() const { return m_column + 1; }  // 1-based column of the problem
  // goyaml.v2's error text: "yaml: line N: PROBLEM" with its line rules (scanner
  // problems 1-based, parser problems 0-based, no line when that is 0).
  std::string goyaml_text() const;

private:
  Stage m_stage;
  std::string m_problem;
  int m_line, m_column, m_context_line;
};

// Parses a stream (UTF-8, optional BOM, any line breaks). Empty or
// comment-only text gives no documents. Throws ParseError.
std::vector<Document> parse(std::string_view text, const Options& options = {});

// Bounds alias expansion while a caller walks a Document: call enter() for
// every node it visits through an alias (expanded() says when). Throws
// ParseError "document contains excessive aliasing" (goyaml's words) once the
// expansion exceeds max(k_floor, k_ratio × node_count). An alias never points
// at a node that contains it: parse() refuses that ("anchor 'x' value contains
// itself"), so walks through aliases always end.
class AliasBudget {
public:
  static constexpr std::size_t k_floor = 100000;
  static constexpr std::size_t k_ratio = 10;
  explicit AliasBudget(const Document& doc)
      : m_limit(std::max<std::size_t>(k_floor, k_ratio * doc.node_count())) {}
  void charge(std::size_t nodes = 1) {
    m_used += nodes;
    if (m_used > m_limit) throw ParseError(ParseError::Stage::loader, "document contains excessive aliasing", 0, 0, 0);
  }

private:
  std::size_t m_limit;
  std::size_t m_used = 0;
};

}  // namespace emco::yaml
