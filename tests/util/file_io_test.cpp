// read_whole_file: sizes from fstat are a hint, errors are errno values.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "core/util/file_io.hpp"

namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("emco-file-io-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};
void write(const fs::path& p, const std::string& data) { std::ofstream(p, std::ios::binary) << data; }
}  // namespace

TEST_CASE("read_whole_file reads regular files whole, with capacity equal to size", "[util][file_io]") {
  TempDir t;
  std::string big(100000, 'x');
  big[54321] = '\0';
  write(t.path / "big", big);
  write(t.path / "empty", "");
  std::string out = "previous";
  REQUIRE(emco::read_whole_file((t.path / "big").string(), out) == 0);
  CHECK(out == big);
  CHECK(out.capacity() < big.size() + 4096);
  REQUIRE(emco::read_whole_file((t.path / "empty").string(), out) == 0);
  CHECK(out.empty());
}

TEST_CASE("read_whole_file reads files whose size is not known in advance", "[util][file_io]") {
  // procfs reports size 0 for files that have content.
  std::string out;
  REQUIRE(emco::read_whole_file("/proc/self/status", out) == 0);
  CHECK(out.find("Name:") != std::string::npos);
  CHECK(emco::read_whole_file("/proc/self/status", out, 8) == EFBIG);
}

TEST_CASE("read_whole_file reports errno values", "[util][file_io]") {
  TempDir t;
  write(t.path / "ten", "0123456789");
  std::string out;
  CHECK(emco::read_whole_file((t.path / "missing").string(), out) == ENOENT);
  CHECK(emco::read_whole_file(t.path.string(), out) == EISDIR);
  CHECK(emco::read_whole_file((t.path / "ten").string(), out, 9) == EFBIG);
  REQUIRE(emco::read_whole_file((t.path / "ten").string(), out, 10) == 0);
  CHECK(out == "0123456789");
  REQUIRE(::mkfifo((t.path / "fifo").c_str(), 0600) == 0);
  CHECK(emco::read_whole_file((t.path / "fifo").string(), out) == EINVAL);
}
