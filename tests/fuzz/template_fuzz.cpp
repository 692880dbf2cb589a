// libFuzzer target: the Go template parser, and execution with Go's builtins under tight limits.
// Built by scripts/fuzz.sh with clang (-fsanitize=fuzzer,address); not part of the CMake build.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/template/engine.hpp"
#include "core/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  emco::tmpl::Options opts;
  opts.helm_functions = false;  // Go's builtins only: no slow key generation in the loop
  opts.max_include_depth = 50;
  opts.max_output_bytes = 1 << 16;
  emco::tmpl::Engine engine(opts);
  try {
    engine.add("fuzz", text);
  } catch (const emco::Error&) {
    return 0;
  }
  // ranges over huge integers are bounded only by the iteration limit; keep runs short
  if (size > 2048 || text.find("range") != std::string::npos) return 0;
  emco::tmpl::Map m;
  m["s"] = emco::tmpl::Value("str");
  m["l"] = emco::tmpl::Value(emco::tmpl::List{emco::tmpl::Value(1), emco::tmpl::Value("x"), emco::tmpl::Value()});
  m["f"] = emco::tmpl::Value(1.5);
  try {
    engine.execute("fuzz", emco::tmpl::Value(m));
  } catch (const emco::Error&) {
  }
  return 0;
}
