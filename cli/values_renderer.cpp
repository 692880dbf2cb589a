#include "cli/values_renderer.hpp"

#include <fstream>
#include <iterator>
#include <memory>

#include "core/template/engine.hpp"
#include "core/util/error.hpp"

namespace emco::cli {

manifest::Renderer make_values_renderer(const std::string& values_file) {
  std::ifstream in(values_file, std::ios::binary);
  if (!in) fail(ErrorKind::invalid, "cannot read values file '" + values_file + "'", "check the path given to -v");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto values = std::make_shared<tmpl::Value>(tmpl::parse_yaml(text, tmpl::YamlMode::go_yaml, values_file));
  return [values](const std::string& body, const std::string& source) {
    tmpl::Options o;
    o.helm_functions = false;
    o.set_name = source;
    tmpl::Engine engine(o);
    engine.add(source, body);
    return engine.execute(source, *values);
  };
}

}  // namespace emco::cli
