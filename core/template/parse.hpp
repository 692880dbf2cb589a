#pragma once
// Go text/template lexer and parser (internal to core/template). Mirrors text/template/parse:
// the same node kinds, the same error messages ("template: NAME:LINE: ...").

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/template/value.hpp"

namespace emco::tmpl {

enum class NodeType : std::uint8_t {
  list, text, action, if_, range, with, template_, break_, continue_, pipe, command,
  field, variable, chain, identifier, dot, nil, boolean, number, string, comment
};

struct Node;
using NodeList = std::pmr::vector<Node*>;
using NodeSpan = std::span<Node* const>;

// A node's lists are allocated from its Arena's memory (see Arena), so building and dropping a
// tree costs no malloc/free per list.
struct Node {
  explicit Node(std::pmr::memory_resource* memory = std::pmr::get_default_resource())
      : idents(memory), nodes(memory), decls(memory) {}
  // The flags sit beside the type so that a node takes 216 bytes, not 264: a render makes and
  // then destroys one node per few template bytes, and both passes are bound by memory traffic.
  NodeType type{};
  bool is_assign = false;             // pipe: "=" rather than ":="
  bool number_is_int = false;         // number: fits Go int (usable where an int is required)
  bool number_overflows_int = false;  // number: an unsigned literal beyond Go's int (idealConstant's error)
  int pos = 0;   // byte offset in the file's text
  int line = 0;
  std::string_view raw;             // text: the literal text, a view into the file's text (Tree::text)
  std::string text;                 // identifier; template name; literal's source text
  std::pmr::vector<std::string> idents;  // field (".a.b" -> a,b) / variable ("$x.a" -> $x,a) / chain fields
  NodeList nodes;                   // list items; command args; pipe commands
  NodeList decls;                   // pipe: declared variables
  Node* pipe = nullptr;             // action/if/range/with/template; chain: its head node
  Node* list = nullptr;
  Node* else_list = nullptr;
  Value constant;                   // bool/number/string literal's value as an untyped constant yields
  std::string to_string() const;    // Go's Node.String()
};

// Owns the nodes of one parsed file. Nodes are constructed in chunks whose capacity grows from
// 16 to 512 nodes (a std::deque would make one allocation per two nodes); a chunk never grows
// past its capacity, so nodes never move. Their lists take memory from a monotonic buffer
// released with the arena.
class Arena {
public:
  Node* make(NodeType t, int pos, int line = 0) {
    if (m_chunks.empty() || m_chunks.back().size() == m_chunks.back().capacity()) {
      std::size_t capacity = m_chunks.empty() ? 16 : std::min<std::size_t>(m_chunks.back().capacity() * 2, 512);
      m_chunks.emplace_back().reserve(capacity);
    }
    Node& n = m_chunks.back().emplace_back(&m_memory);
    n.type = t;
    n.pos = pos;
    n.line = line;
    return &n;
  }

private:
  std::pmr::monotonic_buffer_resource m_memory;  // declared first: outlives the nodes using it
  std::vector<std::vector<Node>> m_chunks;
};

struct Tree {
  std::string name;        // the template's name (define name or file name)
  std::string parse_name;  // the file it was parsed from (error locations)
  std::shared_ptr<const std::string> text;
  std::shared_ptr<Arena> arena;
  Node* root = nullptr;
  // "file:line:col" of a node, Go's ErrorContext location.
  std::string location(const Node* n) const;
};

bool is_empty_tree(const Node* n);

// Parses `text` named `name`. Returns the file's own tree first, then one per {{define}} /
// {{block}} in source order. Throws emco::Error(invalid) with Go's message on a syntax error.
std::vector<std::shared_ptr<Tree>> parse_template(const std::string& name, std::string_view text,
                                                  const std::function<bool(const std::string&)>& has_function);

}  // namespace emco::tmpl
