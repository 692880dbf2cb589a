#pragma once
// Go text/template lexer and parser (internal to core/template). Mirrors text/template/parse:
// the same node kinds, the same error messages ("template: NAME:LINE: ...").

#include <algorithm>
#include <cstddef>
#include <deque>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/template/value.hpp"

namespace emco::tmpl {

enum class NodeType : std::uint8_t {
  list, text, action, if_, range, with, template_, break_, continue_, pipe, command,
  field, variable, chain, identifier, dot, nil, boolean, number, string, comment
};

struct Node;
struct FuncDef;  // funcs.hpp
using NodeList = std::span<Node*>;
using NodeSpan = std::span<Node* const>;

// A view of `size()` Ts as std::span gives one (and a contiguous range a std::span is made from),
// that a union can hold (std::span's constrained default constructor leaves a class with a union
// holding one without a default constructor, in gcc 12 and clang 14 alike).
template <class T>
struct UnionSpan {
  UnionSpan() = default;
  UnionSpan(std::span<T> s) : m_first(s.data()), m_size(s.size()) {}
  T* begin() const { return m_first; }
  T* end() const { return m_first + m_size; }
  std::size_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }
  T& operator[](std::size_t i) const { return m_first[i]; }

private:
  T* m_first;
  std::size_t m_size;
};

// A node and everything it refers to lives in its Arena's memory or in the parsed file's text,
// so nodes are never destroyed one by one: dropping a tree releases its arena's blocks. (Making
// and then destroying one node per few template bytes was bound by memory traffic; the
// destructor pass alone was 4% of a render.) Its lists are arrays in the arena made at their
// final size (three std::pmr::vectors per node made it 176 bytes, and building them showed in
// profiles of template-heavy charts).
//
// Fields no node type uses together share their place (a union per pair or triple, read only as
// the member its type names below), making a node 48 bytes: a render's parse trees are most of
// its heap, and its heap is faulted in huge pages.
struct Node {
  NodeType type{};
  bool is_assign = false;             // pipe: "=" rather than ":="
  bool number_is_int = false;         // number: fits Go int (usable where an int is required)
  bool number_overflows_int = false;  // number: an unsigned literal beyond Go's int (idealConstant's error)
  int pos = 0;   // byte offset in the file's text (Tree::location counts its line when an error needs it)
  struct Branches {
    Node* list;
    Node* else_list;  // nullptr without {{else}}
  };
  union {
    // text: the literal text, a view into the file's text (Tree::text); identifier; template
    // name; literal's source text (file text or arena); the parser's end/else pseudo nodes
    std::string_view text{};
    UnionSpan<Node*> decls;                    // pipe: declared variables
    UnionSpan<const std::string_view> idents;  // field (".a.b" -> a,b) / variable ("$x.a" -> $x,a) / chain fields
  };
  union {
    UnionSpan<Node*> nodes{};  // list items; command args; pipe commands
    Branches branches;         // if/range/with
  };
  union {
    Node* pipe = nullptr;   // action/if/range/with/template; chain: its head node
    const Value* constant;  // bool/number/string literal: its value as an untyped constant yields (arena's)
    const FuncDef* func;    // identifier: the function the parse's resolver named (looking it up by
                            // name per call was 1% of rendering a chart)
  };
  std::string to_string() const;  // Go's Node.String()
};

static_assert(std::is_trivially_destructible_v<Node>);
static_assert(sizeof(Node) <= 48);

// Owns the nodes of one parsed file, the strings and arrays they hold that are not in the
// file's text, and their literal values. Nodes, strings and arrays are carved from blocks
// released with the arena; the values, which may own memory of their own, are destroyed with it.
class Arena {
public:
  // `first_block` bytes are taken at once; what outgrows them comes in small blocks.
  explicit Arena(std::size_t first_block) { add_block(first_block); }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();

  // The first block's size for a file the lexer made `items` items of: a little under what its
  // nodes and their arrays take, as seen over the wide corpus's templates (0.44-1.17 nodes and up
  // to 14 array bytes per item, 0.91 and 10.7 over all); the rest comes in small blocks, so that
  // a few KiB at most are left unused (4% over the corpus).
  static std::size_t first_block_for(std::size_t items) { return items * (sizeof(Node) * 3 / 4 + 8); }

  Node* make(NodeType t, int pos) {
    Node* n = new (allocate(sizeof(Node), alignof(Node))) Node;
    n->type = t;
    n->pos = pos;
    return n;
  }
  // A copy of `s` that lives as long as the arena.
  std::string_view keep(std::string_view s) {
    if (s.empty()) return {};
    char* p = static_cast<char*>(allocate(s.size(), 1));
    std::copy(s.begin(), s.end(), p);
    return {p, s.size()};
  }
  const Value* keep(Value v) { return &m_values.emplace_back(std::move(v)); }
  // A string constant whose Value shares the arena's store of literal texts (a Value with a
  // string of its own per literal was an allocation each). The store lives on while any such
  // Value does, so a constant may outlive the arena.
  const Value* keep_string(std::string s) {
    if (!m_texts) m_texts = std::make_shared<std::deque<std::string>>();
    const std::string& kept = m_texts->emplace_back(std::move(s));
    return keep(Value::shared_string(std::shared_ptr<const std::string>(m_texts, &kept)));
  }
  // An uninitialized array of `n` Ts (trivial types: views and pointers) that lives as long as the arena.
  template <class T>
  std::span<T> array(std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    if (n == 0) return {};
    return {static_cast<T*>(allocate(n * sizeof(T), alignof(T))), n};
  }
  // A copy of `items` that lives as long as the arena.
  template <class T>
  std::span<T> copy(std::span<const T> items) {
    std::span<T> out = array<T>(items.size());
    std::copy(items.begin(), items.end(), out.begin());
    return out;
  }

private:
  // A file's nodes in one block sized from its items, then 2 KiB blocks: a monotonic buffer of
  // 16 KiB growing by half was 27% more than the nodes took (a first block per small file, an
  // unused tail on the last), and a render's heap is faulted in huge pages.
  static constexpr std::size_t k_block = 2048;
  void* allocate(std::size_t n, std::size_t align) {
    const std::size_t at = (m_next + align - 1) & ~(align - 1);
    if (at + n > m_end) return allocate_in_new_block(n, align);
    m_next = at + n;
    return reinterpret_cast<void*>(at);
  }
  void* allocate_in_new_block(std::size_t n, std::size_t align);
  void add_block(std::size_t size);

  struct Block {
    Block* previous;
  };
  Block* m_last = nullptr;  // the newest block, chained to the older ones
  std::uintptr_t m_next = 0;
  std::uintptr_t m_end = 0;
  std::shared_ptr<std::deque<std::string>> m_texts;  // string literals' texts (keep_string)
  std::deque<Value> m_values;                        // literal nodes' constants
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

// The function a name calls, nullptr when none is defined; what it returns must outlive the trees.
using FunctionResolver = std::function<const FuncDef*(std::string_view)>;

// Parses `text` named `name`, resolving each function name it calls with `resolve`. Returns the
// file's own tree first, then one per {{define}} / {{block}} in source order; they keep `text`
// (Tree::text). Throws emco::Error(invalid) with Go's message on a syntax error (an undefined
// function is one).
std::vector<std::shared_ptr<Tree>> parse_template(const std::string& name, std::shared_ptr<const std::string> text,
                                                  const FunctionResolver& resolve);

}  // namespace emco::tmpl
