#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "core/manifest/packages.hpp"

namespace fs = std::filesystem;

TEST_CASE("a chart directory packs to the same bytes every time (no time in the gzip header)", "[packages]") {
  std::string tmpl = (fs::temp_directory_path() / "emco-pack-XXXXXX").string();
  REQUIRE(mkdtemp(tmpl.data()));
  const fs::path dir = fs::path(tmpl) / "web";
  fs::create_directories(dir / "templates");
  std::ofstream(dir / "Chart.yaml") << "apiVersion: v2\nname: web\nversion: 0.1.0\n";
  std::ofstream(dir / "templates" / "cm.yaml") << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n";
  const std::string first = emco::manifest::load_chart_package(dir.string(), "web");
  REQUIRE(first.size() > 10);
  // gzip header: ID1 ID2 CM FLG, then MTIME (4 bytes, little endian); 0 = none.
  CHECK(static_cast<unsigned char>(first[0]) == 0x1f);
  CHECK(static_cast<unsigned char>(first[1]) == 0x8b);
  CHECK(first.substr(4, 4) == std::string(4, '\0'));
  CHECK(emco::manifest::load_chart_package(dir.string(), "web") == first);
  fs::remove_all(tmpl);
}
