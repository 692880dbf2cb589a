#include "cli/address.hpp"

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

using resource::Key;
using resource::Kind;

namespace {

// Number of user-visible key values (fixed elements excluded).
size_t value_count(const Kind& k) {
  size_t n = 0;
  for (const Kind* c : resource::lineage(k.id)) n += c->elements.size();
  return n;
}

}  // namespace

Key resolve_address(const Kind& k, const std::string& text, const std::string& address, bool parent_only) {
  const Kind* target = parent_only ? (k.parent.empty() ? nullptr : &resource::kind(k.parent)) : &k;
  if (!target) return {};
  // An anchor ("projects/p1/...") rather than an address ("p1/..."): its
  // first segment is a root collection.
  if (auto slash = text.find('/'); slash != std::string::npos && resource::find_root(std::string_view(text).substr(0, slash))) {
    auto a = resource::parse_anchor(text);
    if (a.target != resource::AnchorTarget::resource || a.kind != target)
      fail(ErrorKind::usage, "anchor '" + text + "' does not name a " + target->display);
    return a.key;
  }
  auto values = split(text, '/');
  size_t want = value_count(*target);
  auto expected = split(address, '/');
  expected.resize(want);
  if (values.size() != want)
    fail(ErrorKind::usage, "'" + text + "' does not name a " + target->display,
         "expected " + join(expected, "/") + " or the " + target->display + "'s anchor");
  Key key;
  size_t i = 0;
  for (const Kind* c : resource::lineage(target->id)) {
    for (const auto& f : c->fixed) key.parts.push_back(f);
    for (const auto& e : c->elements) {
      if (!resource::is_valid_name(values[i]))
        fail(ErrorKind::invalid, "invalid name '" + values[i] + "' in '" + text + "'", resource::name_rule_text());
      key.parts.emplace_back(e, values[i++]);
    }
  }
  return key;
}

}  // namespace emco::cli
