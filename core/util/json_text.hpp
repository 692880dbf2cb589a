#pragma once
// JSON text without a document model: for output paths that print stored
// JSON (resources are stored as compact JSON text) without parsing it.

#include <string>
#include <string_view>

namespace emco {

// Appends `json` (any valid JSON text, normally compact) to `out` laid out
// exactly as nlohmann::json::dump(indent) lays out the same value: one
// member or element per line, `"key": value`, empty containers as {} / [].
// `level` is the nesting depth the value starts at (its closing bracket is
// indented by level * indent spaces; the first line is not indented).
// Whitespace outside strings is dropped; strings and numbers are copied as
// they are, so the input must already use dump()'s escaping and number
// forms (it does when it was produced by dump()).
void append_indented_json(std::string& out, std::string_view json, int indent, int level = 0);

}  // namespace emco
