#pragma once
// Shared helpers for the template engine tests.

#include <string>

#include "core/template/engine.hpp"
#include "core/template/value.hpp"

namespace emco::tmpl::test {

// Parses `text` as template "t" in a fresh engine and executes it with `dot`.
std::string render(const std::string& text, const Value& dot = Value(), Options opts = {});
// Same with Helm's settings (missingkey=zero, "<no value>" removed).
std::string render_helm(const std::string& text, const Value& dot = Value());
// The emco::Error message of a failed parse or execution ("" when it succeeded).
std::string error_of(const std::string& text, const Value& dot = Value(), Options opts = {});
// YAML in Helm mode as a Value.
Value yaml(const std::string& text);

}  // namespace emco::tmpl::test
