// libFuzzer target: the YAML -> Value loader (both typing modes) and the toYaml emitter, whose
// output must load again. Built by scripts/fuzz.sh with clang; not part of the CMake build.
#include <cstddef>
#include <cstdint>
#include <cstdio>
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
          // Go's emitter writes a "<<" key plain (goyaml.v2 resolves "<<"
          // as a string), which then loads as a merge key: helm 3.17.3 fails
          // the same way on `{"<<": null}` ("map merge requires map or
          // sequence of maps"), so this is faithful, not a bug.
          if (e.message().find("map merge requires") != std::string::npos) continue;
          std::fprintf(stderr, "toYaml output that does not load again (%s):\n%s\n", e.message().c_str(), out.c_str());
          std::abort();
        }
        (void)emco::tmpl::to_json_text(d);
      }
    } catch (const emco::Error&) {
    }
  }
  return 0;
}
