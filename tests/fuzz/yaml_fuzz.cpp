// libFuzzer target: the YAML -> Value loader (both typing modes) and the toYaml emitter, whose
// output must load again. Built by scripts/fuzz.sh with clang; not part of the CMake build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/template/value.hpp"
#include "core/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  for (auto mode : {emco::tmpl::YamlMode::helm, emco::tmpl::YamlMode::go_yaml}) {
    try {
      auto docs = emco::tmpl::parse_yaml_documents(text, mode, "fuzz.yaml");
      for (const auto& d : docs) {
        std::string out;
        try {
          out = emco::tmpl::to_yaml(d);
        } catch (const emco::Error&) {
          continue;  // values JSON cannot hold (.inf, .nan) are refused, as Helm does
        }
        // what we emit must parse again
        try {
          emco::tmpl::parse_yaml(out, emco::tmpl::YamlMode::helm, "roundtrip.yaml");
        } catch (const emco::Error& e) {
          std::abort();
        }
        (void)emco::tmpl::to_json_text(d);
      }
    } catch (const emco::Error&) {
    }
  }
  return 0;
}
