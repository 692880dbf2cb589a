// libFuzzer target: chart packages through libarchive. The input is taken twice, as the
// package bytes themselves and gzip-compressed (so that the fuzzer's mutations reach the tar
// headers and the files instead of dying at the gzip CRC): each is read in memory by
// core/helm's archive reader and chart loader and by the app package check `emco apply`
// runs (core/manifest), and through a temporary file by load_chart. Reading must end (no
// blocking), stay in memory bounds (ArchiveLimits) and never yield a name that leaves the
// chart (absolute, "..", a drive letter). Only emco::Error may leave.
// Built by scripts/fuzz.sh; not part of the CMake build.
#include <unistd.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "core/helm/chart.hpp"
#include "core/helm/files.hpp"
#include "core/manifest/packages.hpp"
#include "core/util/error.hpp"

namespace {

namespace fs = std::filesystem;
using namespace emco;

void check(bool ok) {
  if (!ok) std::abort();
}

std::string gzip(std::string_view in) {
  z_stream z{};
  check(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, in.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  check(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Small limits: a package may not make the loader hold more than this.
const helm::ArchiveLimits k_limits{.max_total_bytes = 8u << 20, .max_file_bytes = 1u << 20, .max_entries = 1000};

void check_names(const std::vector<helm::ChartFile>& files) {
  for (const auto& f : files) {
    check(!f.name.empty() && f.name.front() != '/');
    for (std::string_view rest = f.name; !rest.empty();) {
      auto slash = rest.find('/');
      check(rest.substr(0, slash) != "..");
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    }
  }
}

// The temporary package file, removed when the process ends.
struct TempPackage {
  fs::path path = fs::temp_directory_path() / ("emco-chart-fuzz-" + std::to_string(getpid()) + ".tgz");
  ~TempPackage() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

const fs::path& temp_package() {
  static const TempPackage package;
  return package.path;
}

void one(const std::string& bytes) {
  try {
    auto files = helm::read_chart_archive(bytes, k_limits);
    check_names(files);
    (void)helm::load_chart_files(std::move(files), k_limits);
  } catch (const Error&) {
  }
  try {
    manifest::check_chart_package(bytes, "mychart", "fuzz.tgz");
  } catch (const Error&) {
  }
  {
    std::ofstream out(temp_package(), std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    (void)helm::load_chart(temp_package(), k_limits);
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string raw(reinterpret_cast<const char*>(data), size);
  one(raw);
  one(gzip(raw));
  return 0;
}
