#include "cli/values_renderer.hpp"

#include <memory>

#include "core/template/engine.hpp"
#include "core/util/error.hpp"
#include "core/util/file_io.hpp"

namespace emco::cli {

manifest::Renderer make_values_renderer(const std::string& values_file) {
  std::string text = read_input_file(values_file, {.what = "values file", .missing_hint = "check the path given to -v"});
  auto values = std::make_shared<tmpl::Value>(tmpl::parse_yaml(text, tmpl::YamlMode::go_yaml, values_file));
  return [values](const std::string& body, const std::string& source) {
    tmpl::Options o;
    o.helm_functions = false;
    o.set_name = source;
    tmpl::Engine engine(o);
    // A template that fails on the values is bad input (exit 3), as a
    // template that does not parse is.
    try {
      engine.add(source, body);
      return engine.execute(source, *values);
    } catch (const Error& e) {
      throw Error(ErrorKind::invalid, e.message(), e.hint());
    }
  };
}

}  // namespace emco::cli
