#pragma once
// A loaded Helm chart (Helm v3.17's chart.Chart) and the loader.
//
// load_chart(path) accepts a chart directory or a .tgz package (a directory's files that only
// .Files reads are read on first use: ChartFile::contents); load_chart_files builds a
// chart from already-read files (e.g. an uploaded archive). Subcharts under charts/ (as
// directories or .tgz) are loaded recursively in name order; entries starting with '_' or
// '.' are skipped. Chart.yaml apiVersion v1 (requirements.yaml) and v2 are accepted; the
// metadata is validated with Helm's messages ("validation: chart.metadata.name is required").
// Errors are emco::Error(invalid) with Helm's wording ("cannot load values.yaml: ...").

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/helm/files.hpp"
#include "core/template/value.hpp"

namespace emco::helm {

struct Maintainer {
  std::string name;
  std::string email;
  std::string url;
};

struct Dependency {
  std::string name;
  std::string version;
  std::string repository;
  std::string condition;
  std::vector<std::string> tags;
  bool enabled = false;
  tmpl::Value import_values;  // list: strings or {child, parent} maps, as written
  std::string alias;
};

struct Metadata {
  std::string name;
  std::string home;
  std::vector<std::string> sources;
  std::string version;
  std::string description;
  std::vector<std::string> keywords;
  std::vector<Maintainer> maintainers;
  std::string icon;
  std::string api_version;
  std::string condition;
  std::string tags;
  std::string app_version;
  bool deprecated = false;
  std::map<std::string, std::string> annotations;
  std::string kube_version;
  std::vector<Dependency> dependencies;
  std::string type;
};

struct Chart {
  Metadata metadata;
  tmpl::Value values;                 // values.yaml (a map; {} when absent)
  std::string schema;                 // values.schema.json, "" when absent
  std::vector<ChartFile> templates;   // templates/... (names keep the "templates/" prefix)
  std::vector<ChartFile> files;       // every other file (.Files; includes crds/); a directory's read on first use
  std::vector<Chart> dependencies;    // loaded subcharts

  const std::string& name() const { return metadata.name; }
  bool is_library() const { return metadata.type == "library"; }
};

// Whether a chart file (a name in Chart::files) is one of Helm's CRDs(): under crds/, ending in
// .yaml, .yml or .json.
bool is_crd_file(std::string_view name);

Chart load_chart(const std::filesystem::path& path, const ArchiveLimits& limits = {});
Chart load_chart_files(std::vector<ChartFile> files, const ArchiveLimits& limits = {});

// A copy of `metadata` as Helm's .Chart shows it: Go field names, zero values for absent
// fields, plus IsRoot.
tmpl::Value metadata_value(const Metadata& metadata, bool is_root);

}  // namespace emco::helm
