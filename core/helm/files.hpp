#pragma once
// Reading a chart's files: a chart directory (with Helm's .helmignore rules) or a
// gzipped tar package held in memory. Nothing is ever written to disk.
//
// Contract (Helm v3.17 loader semantics):
// - read_chart_dir walks DIR in lexical order following symlinks, applies DIR/.helmignore
//   plus Helm's default rule `templates/.?*`, strips a UTF-8 BOM from every file and
//   returns names relative to DIR with '/' separators. Irregular files are an error.
// - read_chart_archive drops the first path component of every entry (the chart's top
//   directory; a leading "./" is skipped first), skips directories and pax headers, and
//   rejects absolute names, any ".." component, drive letters and a Chart.yaml outside a
//   directory. Sizes are bounded by ArchiveLimits (decompression bombs). Corrupt or
//   truncated data gives emco::Error(invalid) naming the problem.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace emco::helm {

// A chart directory's file whose contents are read on first use (read_chart_dir's `defer`).
class DeferredContents {
public:
  DeferredContents(std::string path, std::size_t max_bytes) : m_path(std::move(path)), m_max_bytes(max_bytes) {}
  // The contents, a UTF-8 BOM stripped, read by the first call (once, whichever thread asks).
  // Throws emco::Error(invalid) "cannot read 'PATH': ..." when the file cannot be read then.
  const std::string& get() const;

private:
  std::string m_path;  // absolute
  std::size_t m_max_bytes;
  mutable std::once_flag m_once;
  mutable std::string m_data;
};

struct ChartFile {
  std::string name;  // relative, '/'-separated, e.g. "templates/deployment.yaml"
  std::string data;  // the contents, unless `deferred`
  std::shared_ptr<const DeferredContents> deferred;  // a deferred file's contents (`data` is empty)
  const std::string& contents() const { return deferred ? deferred->get() : data; }
};

struct ArchiveLimits {
  std::size_t max_total_bytes = std::size_t{100} << 20;  // Helm's MaxDecompressedChartSize
  std::size_t max_file_bytes = std::size_t{5} << 20;     // Helm's MaxDecompressedFileSize
  std::size_t max_entries = 100000;
};

// A file for which `defer` (given its name) is true is opened and checked as if read (a
// regular file within the limits; the total counts its size as it was then, BOM included) but
// its contents are read on first use (ChartFile::deferred).
std::vector<ChartFile> read_chart_dir(const std::filesystem::path& dir, const ArchiveLimits& limits = {},
                                      const std::function<bool(std::string_view)>& defer = {});
std::vector<ChartFile> read_chart_archive(std::string_view bytes, const ArchiveLimits& limits = {});

// Go's path/filepath.Match on '/'-separated names ('*' and '?' never match '/').
// Throws emco::Error(invalid) "syntax error in pattern" for a malformed pattern.
bool go_path_match(std::string_view pattern, std::string_view name);

// Helm's .helmignore rules (pkg/ignore): blank lines and '#' comments skipped, '!' negates,
// a trailing '/' matches directories only, a leading '/' anchors at the chart root, a
// pattern with a '/' matches the whole path, otherwise only the base name; "**" is rejected.
class IgnoreRules {
public:
  static IgnoreRules parse(std::string_view text);  // throws emco::Error(invalid)
  void add_defaults();                              // Helm's `templates/.?*`
  bool ignored(const std::string& path, bool is_dir) const;

private:
  struct Pattern {
    std::string rule;
    bool negate = false;
    bool must_dir = false;
    enum class Mode { root, path, base } mode = Mode::base;
    // How the rule matches, found once: literal (no *?[\), "*" and a literal without '/', or
    // Go's filepath.Match in general. All three give filepath.Match's answer.
    enum class Kind { literal, star_suffix, glob } kind = Kind::glob;
  };
  void add(std::string_view line);
  std::vector<Pattern> m_patterns;
};

}  // namespace emco::helm
