// libFuzzer target: core/yaml's loader on its own. Every input either parses or throws
// ParseError; a parsed tree is walked through its aliases under the alias budget and its
// invariants are checked (children exist, positions are 1-based, aliases point at non-aliases).
// Built by scripts/fuzz.sh with clang; not part of the CMake build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/yaml/yaml.hpp"

namespace {

using namespace emco::yaml;

void check(bool ok) {
  if (!ok) std::abort();
}

void walk(const Document& d, NodeId id, AliasBudget& budget, bool via_alias) {
  check(id < d.node_count());
  const Node& n = d.node(id);
  check(n.line >= 1 && n.column >= 1);
  if (n.type == NodeType::alias) {
    NodeId t = d.target(id);
    check(t < id && d.node(t).type != NodeType::alias);
    walk(d, t, budget, true);
    return;
  }
  if (via_alias) budget.charge();
  if (n.type == NodeType::sequence)
    for (std::size_t i = 0; i < d.size(id); ++i) walk(d, d.item(id, i), budget, via_alias);
  if (n.type == NodeType::mapping)
    for (std::size_t i = 0; i < d.size(id); ++i) {
      walk(d, d.key(id, i), budget, via_alias);
      walk(d, d.value(id, i), budget, via_alias);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    Options options;
    options.max_depth = 200;
    for (const auto& d : parse(text, options)) {
      AliasBudget budget(d);
      walk(d, d.root(), budget, false);
    }
  } catch (const ParseError& e) {
    check(e.line() >= 1 && !e.problem().empty());
  }
  return 0;
}
