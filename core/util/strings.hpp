#pragma once
// Small string helpers shared by every module.

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace emco {

std::vector<std::string> split(std::string_view text, char sep);          // keeps empty fields
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// The parts one after another, in one allocation (a chain of `+` allocates
// a growing temporary per step).
std::string concat(std::initializer_list<std::string_view> parts);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);
// True when `filter` is empty (no filter given) or holds `value`.
bool selected(const std::vector<std::string>& filter, const std::string& value);
std::string to_lower(std::string_view text);
std::string trim(std::string_view text);                                  // ASCII whitespace
// The parameters of a URL query string ("a=1&b&c=x%2By"), in order, empty
// parts skipped: (name, value) with the value's %XX escapes decoded ("" when
// it has none). "+" is kept (not a space), as EMCO's servers read
// "cluster=p+c"; a malformed escape stays as written.
std::vector<std::pair<std::string, std::string>> query_parameters(std::string_view query);
// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` within distance max(2, len/3), or "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace emco
