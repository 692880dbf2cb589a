#pragma once
// emcoctl multi-document files: reading, (optional) templating, splitting
// into documents, mapping each anchor to a resource, and remembering where
// every value came from so errors can say FILE:LINE.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/resource/kinds.hpp"
#include "core/util/error.hpp"

namespace emco::manifest {

// Renders a file's text with the -v values before YAML parsing (Go
// text/template semantics, emcoctl's rules). Empty = use the text verbatim.
using Renderer = std::function<std::string(const std::string& text, const std::string& source)>;

struct ReadOptions {
  Renderer render;
  size_t max_file_bytes = 16u << 20;  // batch files larger than this are refused
  bool strict_top_level = true;       // unknown top-level keys: error (emco) or ignored (emcoctl mode)
  // emcoctl mode: an anchor that does not parse fails its own document only
  // (Document::anchor_error, Error(not_found) as a server's router answers),
  // instead of the whole file.
  bool keep_bad_anchors = false;
};

struct Document {
  std::string source;         // file name as given ("-" for stdin)
  std::string base_dir;       // directory `file:`/`files:` are resolved against
  int line = 0;               // 1-based line of the document's first key
  int index = 0;              // 1-based document number in the file
  std::string anchor_text;
  resource::Anchor anchor;            // anchor.kind is null when anchor_error is set
  std::optional<Error> anchor_error;  // ReadOptions::keep_bad_anchors: why the anchor does not parse
  std::string name;           // metadata.name, or clusterLabel for label documents
  std::shared_ptr<nlohmann::json> body;  // {"metadata":..., "spec":..., "clusterLabel":...}
  std::vector<std::string> files;  // file:/files: paths as written
  bool multi_file = false;         // files: rather than file:
  // Contents given directly instead of paths (noun commands updating a
  // resource without re-reading its file): name, filename, bytes.
  struct InlineFile {
    std::string name, filename, data;
  };
  std::vector<InlineFile> inline_files;
  std::map<std::string, int> lines;  // dotted path ("spec.intent.allOf[0]") -> line
  // "FILE:LINE: ..." lines about the document itself (an ignored field, a
  // value the template rendered as '<no value>'); run_batch reports them.
  std::vector<std::string> warnings;

  // "FILE:LINE" for the value at `path` (falls back to the nearest parent, then the document).
  std::string where(const std::string& path = "") const;
};

struct File {
  std::string source;
  std::vector<Document> documents;
};

// Reads FILE, a directory (its *.yaml/*.yml files in name order) or "-"
// (stdin). Throws Error(invalid) "FILE:LINE: ..." on YAML syntax errors,
// non-UTF-8 input, unknown top-level fields, missing or unknown anchors,
// duplicate keys, and files over the size limit.
std::vector<File> read_files(const std::string& path, const ReadOptions& opts);
File parse_text(const std::string& text, const std::string& source, const std::string& base_dir, const ReadOptions& opts);

}  // namespace emco::manifest
