#include "helpers.hpp"

#include "core/util/error.hpp"

namespace emco::tmpl::test {

std::string render(const std::string& text, const Value& dot, Options opts) {
  Engine e(opts);
  e.add("t", text);
  return e.execute("t", dot);
}

std::string render_helm(const std::string& text, const Value& dot) {
  Options o;
  o.missingkey_zero = true;
  return render(text, dot, o);
}

std::string error_of(const std::string& text, const Value& dot, Options opts) {
  try {
    render(text, dot, opts);
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

Value yaml(const std::string& text) { return parse_yaml(text, YamlMode::helm, "test.yaml"); }

}  // namespace emco::tmpl::test
