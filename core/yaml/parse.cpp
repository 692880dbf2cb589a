// The parser: libyaml's grammar (as goyaml.v2 has it) written as recursive
// descent over the scanner's tokens, building the node tree directly instead
// of emitting events. Problems and the marks they are reported at follow
// libyaml, so error lines match goyaml's.
#include <unordered_map>

#include "core/yaml/scanner.hpp"
#include "core/yaml/yaml.hpp"

namespace emco::yaml {

namespace {

std::string goyaml_message(ParseError::Stage stage, const std::string& problem, int line, int context_line) {
  if (stage == ParseError::Stage::reader || stage == ParseError::Stage::loader) return "yaml: " + problem;
  // decode.go's fail(): a problem on the first line falls back to the context's line, and
  // only scanner problems are counted from 1
  int shown = 0;
  if (line != 0) {
    shown = stage == ParseError::Stage::scanner ? line + 1 : line;
  } else if (context_line != 0) {
    shown = context_line;
  }
  if (shown == 0) return "yaml: " + problem;
  return "yaml: line " + std::to_string(shown) + ": " + problem;
}

}  // namespace

ParseError::ParseError(Stage stage, std::string problem, int problem_line, int problem_column, int context_line)
    : std::runtime_error(goyaml_message(stage, problem, problem_line, context_line)),
      m_stage(stage),
      m_problem(std::move(problem)),
      m_line(problem_line),
      m_column(problem_column),
      m_context_line(context_line) {}

std::string ParseError::goyaml_text() const { return what(); }

NodeId Document::find(NodeId map, std::string_view key) const {
  if (m_nodes[map].type != NodeType::mapping) return k_none;
  NodeId found = k_none;
  for (std::size_t i = 0; i < size(map); ++i) {
    NodeId k = target(this->key(map, i));
    if (m_nodes[k].type == NodeType::scalar && scalar(k) == key) found = value(map, i);
  }
  return found;
}

using detail::Mark;
using detail::Tok;
using detail::Token;

class Builder {
public:
  Builder(std::string_view text, const Options& options) : m_scanner(text), m_options(options) {}

  std::vector<Document> run() {
    std::vector<Document> docs;
    peek();
    m_scanner.next();  // STREAM-START
    bool implicit = true;
    for (;;) {
      if (m_options.max_documents != 0 && docs.size() >= m_options.max_documents) break;
      if (!implicit)
        while (peek().type == Tok::document_end) m_scanner.next();
      Tok t = peek().type;
      if (t == Tok::stream_end) break;
      m_doc = Document();
      m_anchors.clear();
      m_tag_ids.clear();
      m_open.clear();
      if (implicit && t != Tok::version_directive && t != Tok::tag_directive && t != Tok::document_start) {
        process_directives();
        m_doc.m_root = parse_node(true, false, 0);
      } else {
        process_directives();
        if (peek().type != Tok::document_start) parser_error(nullptr, peek().start, "did not find expected <document start>");
        m_scanner.next();
        Tok c = peek().type;
        if (c == Tok::version_directive || c == Tok::tag_directive || c == Tok::document_start ||
            c == Tok::document_end || c == Tok::stream_end) {
          m_doc.m_root = empty_scalar(peek().start);
        } else {
          m_doc.m_root = parse_node(true, false, 0);
        }
      }
      if (peek().type == Tok::document_end) m_scanner.next();
      docs.push_back(std::move(m_doc));
      implicit = false;
    }
    return docs;
  }

private:
  detail::Scanner m_scanner;
  const Options& m_options;
  Document m_doc;
  std::vector<NodeId> m_scratch;  // children of the collections being built
  std::unordered_map<std::string, NodeId> m_anchors;
  std::unordered_map<std::string, std::uint32_t> m_tag_ids;  // per document, like its tags
  std::vector<bool> m_open;  // per node: a collection still being built
  std::vector<std::pair<std::string, std::string>> m_tag_directives;

  Token& peek() { return m_scanner.peek(); }

  [[noreturn]] void parser_error(const Mark* context, const Mark& problem, std::string message) {
    throw ParseError(ParseError::Stage::parser, std::move(message), problem.line, problem.column,
                     context ? context->line : 0);
  }

  void process_directives() {
    m_tag_directives.clear();
    bool have_version = false;
    for (;;) {
      Token& t = peek();
      if (t.type == Tok::version_directive) {
        if (have_version) parser_error(nullptr, t.start, "found duplicate %YAML directive");
        if (t.major != 1 || t.minor != 1) parser_error(nullptr, t.start, "found incompatible YAML document");
        have_version = true;
      } else if (t.type == Tok::tag_directive) {
        for (const auto& d : m_tag_directives)
          if (d.first == t.handle) parser_error(nullptr, t.start, "found duplicate %TAG directive");
        m_tag_directives.emplace_back(t.handle, t.value);
      } else {
        break;
      }
      m_scanner.next();
    }
    auto add_default = [&](const char* handle, const char* prefix) {
      for (const auto& d : m_tag_directives)
        if (d.first == handle) return;
      m_tag_directives.emplace_back(handle, prefix);
    };
    add_default("!", "!");
    add_default("!!", "tag:yaml.org,2002:");
  }

  NodeId new_node(NodeType type, Style style, const Mark& mark, std::uint32_t tag) {
    Node n;
    n.type = type;
    n.style = style;
    n.line = static_cast<std::uint32_t>(mark.line + 1);
    n.column = static_cast<std::uint32_t>(mark.column + 1);
    n.tag = tag;
    m_doc.m_nodes.push_back(n);
    m_open.push_back(false);
    return static_cast<NodeId>(m_doc.m_nodes.size() - 1);
  }

  NodeId scalar_node(const Mark& mark, std::string_view value, Style style, std::uint32_t tag) {
    NodeId id = new_node(NodeType::scalar, style, mark, tag);
    m_doc.m_nodes[id].a = static_cast<std::uint32_t>(m_doc.m_pool.size());
    m_doc.m_nodes[id].b = static_cast<std::uint32_t>(value.size());
    m_doc.m_pool.append(value);
    return id;
  }

  NodeId empty_scalar(const Mark& mark) { return scalar_node(mark, {}, Style::plain, 0); }

  std::uint32_t intern_tag(std::string tag) {
    if (tag.empty()) return 0;
    auto [it, added] = m_tag_ids.emplace(tag, static_cast<std::uint32_t>(m_doc.m_tags.size()));
    if (added) m_doc.m_tags.push_back(std::move(tag));
    return it->second;
  }

  void remember_anchor(const std::string& anchor, NodeId id) {
    if (!anchor.empty()) m_anchors[anchor] = id;
  }

  // Moves the children collected since `from` into the document.
  void close_collection(NodeId id, std::size_t from, std::size_t per_entry) {
    Node& n = m_doc.m_nodes[id];
    n.a = static_cast<std::uint32_t>(m_doc.m_kids.size());
    n.b = static_cast<std::uint32_t>((m_scratch.size() - from) / per_entry);
    m_doc.m_kids.insert(m_doc.m_kids.end(), m_scratch.begin() + static_cast<std::ptrdiff_t>(from), m_scratch.end());
    m_scratch.resize(from);
    m_open[id] = false;
  }

  NodeId open_collection(NodeType type, Style style, const Mark& mark, std::uint32_t tag, const std::string& anchor,
                         int depth) {
    if (depth >= m_options.max_depth)
      parser_error(nullptr, mark, "exceeded max depth of " + std::to_string(m_options.max_depth));
    NodeId id = new_node(type, style, mark, tag);
    m_open[id] = true;
    remember_anchor(anchor, id);
    return id;
  }

  NodeId parse_node(bool block, bool indentless_sequence, int depth) {
    Token& first = peek();
    if (first.type == Tok::alias) {
      auto it = m_anchors.find(first.value);
      if (it == m_anchors.end())
        throw ParseError(ParseError::Stage::loader, "unknown anchor '" + first.value + "' referenced", 0, 0, 0);
      if (m_open[it->second])
        throw ParseError(ParseError::Stage::loader, "anchor '" + first.value + "' value contains itself", 0, 0, 0);
      NodeId id = new_node(NodeType::alias, Style::plain, first.start, 0);
      m_doc.m_nodes[id].b = it->second;
      m_scanner.next();
      return id;
    }
    Mark start = first.start;
    Mark tag_mark;
    std::string anchor, tag_handle, tag_suffix;
    bool have_tag = false;
    auto take_tag = [&](Token& t) {
      tag_handle = std::move(t.handle);
      tag_suffix = std::move(t.value);
      tag_mark = t.start;
      have_tag = true;
      m_scanner.next();
    };
    if (first.type == Tok::anchor) {
      anchor = std::move(first.value);
      m_scanner.next();
      if (peek().type == Tok::tag) take_tag(peek());
    } else if (first.type == Tok::tag) {
      take_tag(first);
      if (peek().type == Tok::anchor) {
        anchor = std::move(peek().value);
        m_scanner.next();
      }
    }
    std::string tag;
    if (have_tag) {
      if (tag_handle.empty()) {
        tag = std::move(tag_suffix);
      } else {
        bool found = false;
        for (const auto& d : m_tag_directives) {
          if (d.first == tag_handle) {
            tag = d.second + tag_suffix;
            found = true;
            break;
          }
        }
        if (!found) parser_error(&start, tag_mark, "found undefined tag handle");
      }
    }
    std::uint32_t tag_id = intern_tag(std::move(tag));
    bool has_props = have_tag || !anchor.empty();

    Token& t = peek();
    if (indentless_sequence && t.type == Tok::block_entry) {
      NodeId id = open_collection(NodeType::sequence, Style::block, start, tag_id, anchor, depth);
      return parse_indentless_sequence(id, depth);
    }
    switch (t.type) {
      case Tok::scalar: {
        NodeId id = scalar_node(start, t.value, t.style, tag_id);
        remember_anchor(anchor, id);
        m_scanner.next();
        return id;
      }
      case Tok::flow_sequence_start: {
        NodeId id = open_collection(NodeType::sequence, Style::flow, start, tag_id, anchor, depth);
        return parse_flow_sequence(id, depth);
      }
      case Tok::flow_mapping_start: {
        NodeId id = open_collection(NodeType::mapping, Style::flow, start, tag_id, anchor, depth);
        return parse_flow_mapping(id, depth);
      }
      case Tok::block_sequence_start:
        if (block) {
          NodeId id = open_collection(NodeType::sequence, Style::block, start, tag_id, anchor, depth);
          return parse_block_sequence(id, depth);
        }
        break;
      case Tok::block_mapping_start:
        if (block) {
          NodeId id = open_collection(NodeType::mapping, Style::block, start, tag_id, anchor, depth);
          return parse_block_mapping(id, depth);
        }
        break;
      default: break;
    }
    if (has_props) {
      NodeId id = scalar_node(start, {}, Style::plain, tag_id);
      remember_anchor(anchor, id);
      return id;
    }
    Mark problem = t.start;
    throw ParseError(ParseError::Stage::parser, "did not find expected node content", problem.line, problem.column,
                     start.line);
  }

  NodeId parse_block_sequence(NodeId id, int depth) {
    Mark context = peek().start;
    m_scanner.next();  // BLOCK-SEQUENCE-START
    std::size_t from = m_scratch.size();
    for (;;) {
      Token& t = peek();
      if (t.type == Tok::block_entry) {
        Mark mark = t.end;
        m_scanner.next();
        Tok n = peek().type;
        NodeId item = (n != Tok::block_entry && n != Tok::block_end) ? parse_node(true, false, depth + 1) : empty_scalar(mark);
        m_scratch.push_back(item);
      } else if (t.type == Tok::block_end) {
        m_scanner.next();
        break;
      } else {
        parser_error(&context, t.start, "did not find expected '-' indicator");
      }
    }
    close_collection(id, from, 1);
    return id;
  }

  NodeId parse_indentless_sequence(NodeId id, int depth) {
    std::size_t from = m_scratch.size();
    while (peek().type == Tok::block_entry) {
      Mark mark = peek().end;
      m_scanner.next();
      Tok n = peek().type;
      NodeId item = (n != Tok::block_entry && n != Tok::key && n != Tok::value && n != Tok::block_end)
                        ? parse_node(true, false, depth + 1)
                        : empty_scalar(mark);
      m_scratch.push_back(item);
    }
    close_collection(id, from, 1);
    return id;
  }

  NodeId parse_block_mapping(NodeId id, int depth) {
    Mark context = peek().start;
    m_scanner.next();  // BLOCK-MAPPING-START
    std::size_t from = m_scratch.size();
    for (;;) {
      Token& t = peek();
      if (t.type == Tok::key) {
        Mark mark = t.end;
        m_scanner.next();
        Tok n = peek().type;
        NodeId key = (n != Tok::key && n != Tok::value && n != Tok::block_end) ? parse_node(true, true, depth + 1)
                                                                               : empty_scalar(mark);
        m_scratch.push_back(key);
      } else if (t.type == Tok::block_end) {
        m_scanner.next();
        break;
      } else {
        parser_error(&context, t.start, "did not find expected key");
      }
      Token& v = peek();
      if (v.type == Tok::value) {
        Mark mark = v.end;
        m_scanner.next();
        Tok n = peek().type;
        NodeId value = (n != Tok::key && n != Tok::value && n != Tok::block_end) ? parse_node(true, true, depth + 1)
                                                                                 : empty_scalar(mark);
        m_scratch.push_back(value);
      } else {
        m_scratch.push_back(empty_scalar(v.start));
      }
    }
    close_collection(id, from, 2);
    return id;
  }

  NodeId parse_flow_sequence(NodeId id, int depth) {
    Mark context = peek().start;
    m_scanner.next();  // '['
    std::size_t from = m_scratch.size();
    bool first = true;
    for (;;) {
      if (peek().type == Tok::flow_sequence_end) break;
      if (!first) {
        if (peek().type != Tok::flow_entry) parser_error(&context, peek().start, "did not find expected ',' or ']'");
        m_scanner.next();
      }
      first = false;
      Token& t = peek();
      if (t.type == Tok::key) {
        // a single-pair mapping inside a flow sequence: [a: b]
        NodeId pair = open_collection(NodeType::mapping, Style::flow, t.start, 0, {}, depth + 1);
        Mark mark = t.end;
        m_scanner.next();
        std::size_t pair_from = m_scratch.size();
        Tok n = peek().type;
        NodeId key = (n != Tok::value && n != Tok::flow_entry && n != Tok::flow_sequence_end)
                         ? parse_node(false, false, depth + 2)
                         : empty_scalar(mark);
        m_scratch.push_back(key);
        if (peek().type == Tok::value) {
          Mark vmark = peek().end;
          m_scanner.next();
          Tok vn = peek().type;
          NodeId value = (vn != Tok::flow_entry && vn != Tok::flow_sequence_end) ? parse_node(false, false, depth + 2)
                                                                                 : empty_scalar(vmark);
          m_scratch.push_back(value);
        } else {
          m_scratch.push_back(empty_scalar(peek().start));
        }
        close_collection(pair, pair_from, 2);
        m_scratch.push_back(pair);
      } else if (t.type != Tok::flow_sequence_end) {
        m_scratch.push_back(parse_node(false, false, depth + 1));
      }
    }
    m_scanner.next();  // ']'
    close_collection(id, from, 1);
    return id;
  }

  NodeId parse_flow_mapping(NodeId id, int depth) {
    Mark context = peek().start;
    m_scanner.next();  // '{'
    std::size_t from = m_scratch.size();
    bool first = true;
    for (;;) {
      if (peek().type == Tok::flow_mapping_end) break;
      if (!first) {
        if (peek().type != Tok::flow_entry) parser_error(&context, peek().start, "did not find expected ',' or '}'");
        m_scanner.next();
      }
      first = false;
      Token& t = peek();
      if (t.type == Tok::key) {
        Mark mark = t.end;
        m_scanner.next();
        Tok n = peek().type;
        NodeId key = (n != Tok::value && n != Tok::flow_entry && n != Tok::flow_mapping_end)
                         ? parse_node(false, false, depth + 1)
                         : empty_scalar(mark);
        m_scratch.push_back(key);
        if (peek().type == Tok::value) {
          Mark vmark = peek().end;
          m_scanner.next();
          Tok vn = peek().type;
          NodeId value = (vn != Tok::flow_entry && vn != Tok::flow_mapping_end) ? parse_node(false, false, depth + 1)
                                                                                : empty_scalar(vmark);
          m_scratch.push_back(value);
        } else {
          m_scratch.push_back(empty_scalar(peek().start));
        }
      } else if (t.type != Tok::flow_mapping_end) {
        m_scratch.push_back(parse_node(false, false, depth + 1));
        m_scratch.push_back(empty_scalar(peek().start));
      }
    }
    m_scanner.next();  // '}'
    close_collection(id, from, 2);
    return id;
  }
};

std::vector<Document> parse(std::string_view text, const Options& options) {
  if (text.size() >= 0xFFFFFFF0u)
    throw ParseError(ParseError::Stage::reader, "input is too large", 0, 0, 0);
  return Builder(text, options).run();
}

}  // namespace emco::yaml
