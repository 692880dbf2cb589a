// libFuzzer target: batch documents, emcoctl multi-document files as `emco apply -f` parses
// them, up to the stored form and without the workspace: core/manifest's reader (YAML with
// anchors and aliases, resourceContext.anchor, metadata/spec, file:/files:, FILE:LINE for
// every path) in emco's strict mode and emcoctl's lenient one, then, for every declarative
// document, prepare_resource with the built-in plugins' kinds and content preparers (schema
// validation and canonicalisation, the attached files read and checked: chart and profile
// packages, kubeconfigs). `file:` paths resolve against tests/fuzz/fixtures (app1.tgz,
// profile.tgz, kubeconfig, ca.crt, ...); absolute paths and paths with ".." are not followed
// (a user may name any file of theirs; the fuzzer should not walk the machine's). Only
// emco::Error may leave, and every message of a document's error names FILE:LINE.
// Built by scripts/fuzz.sh; not part of the CMake build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/util/clock.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/builtin.hpp"

#ifndef EMCO_SOURCE_DIR
#error "EMCO_SOURCE_DIR names the checkout (tests/fuzz/CMakeLists.txt)"
#endif

namespace {

using namespace emco;

const std::string k_fixtures = EMCO_SOURCE_DIR "/tests/fuzz/fixtures";

bool stays_inside(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.front() == '~') return false;
  return path.find("..") == std::string::npos;
}

void prepare(const manifest::Document& doc, const lifecycle::Runtime& runtime) {
  if (!doc.anchor.kind || doc.anchor.target == resource::AnchorTarget::operation) return;
  for (const auto& f : doc.files)
    if (!stays_inside(f)) return;
  try {
    std::vector<std::string> warnings;
    (void)manifest::prepare_resource(doc, system_clock(), &runtime, &warnings);
  } catch (const Error& e) {
    // A document's own problems are reported at its place in the file.
    if (!starts_with(e.message(), "fuzz.yaml:")) {
      std::fprintf(stderr, "error without FILE:LINE: %s\n", e.message().c_str());
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)plugins::builtin_runtime();  // installs the plugins' kinds before any anchor is parsed
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  const lifecycle::Runtime& runtime = plugins::builtin_runtime();
  for (bool strict : {true, false}) {
    manifest::ReadOptions options;
    options.strict_top_level = strict;
    options.keep_bad_anchors = !strict;
    manifest::File file;
    try {
      file = manifest::parse_text(text, "fuzz.yaml", k_fixtures, options);
    } catch (const Error& e) {
      if (!starts_with(e.message(), "fuzz.yaml:")) {
        std::fprintf(stderr, "error without FILE:LINE: %s\n", e.message().c_str());
        std::abort();
      }
      continue;
    }
    for (const auto& doc : file.documents) {
      (void)doc.where();
      for (const auto& [path, line] : doc.lines) (void)doc.where(path);
      prepare(doc, runtime);
    }
  }
  return 0;
}
