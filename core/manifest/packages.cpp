#include "core/manifest/packages.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/strings.hpp"

namespace emco::manifest {

namespace fs = std::filesystem;

namespace {

constexpr size_t k_max_package_bytes = 1u << 30;        // upstream's 1 GB limit
constexpr size_t k_max_unpacked_bytes = 2ull << 30;      // decompression bomb guard

struct ArchiveReader {
  archive* a = archive_read_new();
  ~ArchiveReader() { archive_read_free(a); }
};

struct ArchiveWriter {
  archive* a = archive_write_new();
  ~ArchiveWriter() { archive_write_free(a); }
};

std::string read_file(const std::string& path) {
  return read_input_file(path, {.what = "file", .max_bytes = k_max_package_bytes});
}

// libarchive's explanation of its last error; it leaves none for some inputs.
std::string error_of(archive* a) {
  const char* why = archive_error_string(a);
  return why ? why : "unreadable data";
}

// Entry names of a gzip tar in memory, normalised (no leading "./").
std::vector<std::string> list_entries(const std::string& bytes, const std::string& source) {
  ArchiveReader r;
  archive_read_support_filter_gzip(r.a);
  archive_read_support_format_tar(r.a);
  if (archive_read_open_memory(r.a, bytes.data(), bytes.size()) != ARCHIVE_OK)
    fail(ErrorKind::invalid, "'" + source + "' is not a gzip-compressed tar archive", "package it with 'tar -czf'");
  std::vector<std::string> names;
  archive_entry* e = nullptr;
  size_t total = 0;
  for (;;) {
    int rc = archive_read_next_header(r.a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
      fail(ErrorKind::invalid, "'" + source + "' is not a valid gzip tar archive: " + error_of(r.a));
    std::string name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
    while (starts_with(name, "./")) name = name.substr(2);
    if (starts_with(name, "/") || name == ".." || starts_with(name, "../") || name.find("/../") != std::string::npos)
      fail(ErrorKind::invalid, "'" + source + "' has an unsafe entry '" + name + "' (absolute path or '..')");
    total += static_cast<size_t>(archive_entry_size(e));
    if (total > k_max_unpacked_bytes) fail(ErrorKind::invalid, "'" + source + "' unpacks to more than 2 GiB");
    if (!name.empty()) names.push_back(name);
    // Read through the data so a truncated archive is detected here.
    const void* buf;
    size_t size;
    la_int64_t offset;
    int d;
    while ((d = archive_read_data_block(r.a, &buf, &size, &offset)) == ARCHIVE_OK) {
    }
    if (d != ARCHIVE_EOF)
      fail(ErrorKind::invalid, "'" + source + "' is truncated or corrupt: " + error_of(r.a));
  }
  return names;
}

// Packs directory `dir` into a gzip tar whose entries start with `prefix/`
// (or sit at the root when prefix is empty), in sorted order for stable bytes.
std::string pack_directory(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (std::error_code ec; e.is_regular_file(ec)) files.push_back(e.path());  // links that lead nowhere are left out
  std::sort(files.begin(), files.end());
  std::string out;
  ArchiveWriter w;
  archive_write_set_format_pax_restricted(w.a);
  archive_write_add_filter_gzip(w.a);
  // No time in the gzip header: the same directory must pack to the same
  // bytes, or re-applying an unchanged chart reports it 'configured'.
  archive_write_set_filter_option(w.a, "gzip", "timestamp", nullptr);
  archive_write_open(
      w.a, &out, nullptr,
      [](archive*, void* user, const void* buf, size_t n) -> la_ssize_t {
        static_cast<std::string*>(user)->append(static_cast<const char*>(buf), n);
        return static_cast<la_ssize_t>(n);
      },
      nullptr);
  for (const auto& f : files) {
    std::string rel = fs::relative(f, dir).generic_string();
    std::string data = read_file(f.string());
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(e.get(), (prefix.empty() ? rel : prefix + "/" + rel).c_str());
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(data.size()));
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_write_header(w.a, e.get());
    archive_write_data(w.a, data.data(), data.size());
  }
  archive_write_close(w.a);
  return out;
}

}  // namespace

void check_chart_package(const std::string& bytes, const std::string& app, const std::string& source) {
  auto names = list_entries(bytes, source);
  for (const auto& n : names)
    if (n == app + "/Chart.yaml") return;
  std::string top = names.empty() ? "" : split(names.front(), '/').front();
  fail(ErrorKind::invalid, "'" + source + "' has no '" + app + "/Chart.yaml'",
       top.empty() ? "the archive is empty"
                   : "the chart's top-level directory must be named like the app ('" + app + "'), not '" + top + "'");
}

std::string load_chart_package(const std::string& path, const std::string& app) {
  if (std::error_code ec; fs::is_directory(path, ec)) {
    fs::path dir(path);
    if (fs::exists(dir / "Chart.yaml")) return pack_directory(dir, app);
    if (fs::exists(dir / app / "Chart.yaml")) return pack_directory(dir / app, app);
    fail(ErrorKind::invalid, "'" + path + "' is not a chart directory (no Chart.yaml)");
  }
  std::string bytes = read_file(path);
  check_chart_package(bytes, app, path);
  return bytes;
}

std::string load_profile_package(const std::string& path) {
  if (std::error_code ec; fs::is_directory(path, ec)) {
    if (!fs::exists(fs::path(path) / "manifest.yaml"))
      fail(ErrorKind::invalid, "profile directory '" + path + "' has no manifest.yaml");
    return pack_directory(path, "");
  }
  std::string bytes = read_file(path);
  auto names = list_entries(bytes, path);
  for (const auto& n : names)
    if (n == "manifest.yaml" || ends_with(n, "/manifest.yaml")) return bytes;
  fail(ErrorKind::invalid, "profile package '" + path + "' has no manifest.yaml",
       "a profile holds manifest.yaml and override_values.yaml at its root");
}

}  // namespace emco::manifest
