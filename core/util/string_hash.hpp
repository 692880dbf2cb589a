#pragma once
// Hash maps keyed by std::string that are looked up with a std::string_view (or a literal)
// without making a std::string first: C++20's heterogeneous lookup, which needs a transparent
// hash and key comparison.

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace emco {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

}  // namespace emco
