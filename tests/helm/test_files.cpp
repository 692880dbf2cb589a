// Chart file reading: Go glob matching, .helmignore, directories and hostile archives.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <fstream>

#include "core/helm/files.hpp"
#include "core/util/error.hpp"

using namespace emco::helm;
namespace fs = std::filesystem;

namespace {

struct Entry {
  std::string name;
  std::string data;
  bool symlink = false;
};

// Builds a .tgz in memory; `declared_size` lets a test lie about sizes.
std::string make_tgz(const std::vector<Entry>& entries) {
  std::string out(1 << 22, '\0');
  size_t used = 0;
  archive* a = archive_write_new();
  archive_write_add_filter_gzip(a);
  archive_write_set_format_pax_restricted(a);
  archive_write_open_memory(a, out.data(), out.size(), &used);
  for (const auto& e : entries) {
    archive_entry* en = archive_entry_new();
    archive_entry_set_pathname(en, e.name.c_str());
    if (e.symlink) {
      archive_entry_set_filetype(en, AE_IFLNK);
      archive_entry_set_symlink(en, e.data.c_str());
      archive_entry_set_size(en, 0);
    } else {
      archive_entry_set_filetype(en, AE_IFREG);
      archive_entry_set_size(en, static_cast<la_int64_t>(e.data.size()));
    }
    archive_entry_set_perm(en, 0644);
    archive_write_header(a, en);
    if (!e.symlink) archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(en);
  }
  archive_write_close(a);
  archive_write_free(a);
  out.resize(used);
  return out;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const emco::Error& e) {
    return e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("go_path_match follows Go's filepath.Match", "[helm][files]") {
  CHECK(go_path_match("*.yaml", "a.yaml"));
  CHECK_FALSE(go_path_match("*.yaml", "dir/a.yaml"));
  CHECK(go_path_match("*/a.yaml", "dir/a.yaml"));
  CHECK(go_path_match("a?c", "abc"));
  CHECK_FALSE(go_path_match("a?c", "a/c"));
  CHECK(go_path_match("[a-c]x", "bx"));
  CHECK_FALSE(go_path_match("[^a-c]x", "bx"));
  CHECK(go_path_match("\\*", "*"));
  CHECK(go_path_match("*", ""));
  CHECK(go_path_match("templates/.?*", "templates/.hidden"));
  CHECK_FALSE(go_path_match("templates/.?*", "templates/."));
  CHECK_THROWS_AS(go_path_match("[", "x"), emco::Error);
  CHECK_THROWS_AS(go_path_match("a\\", "a"), emco::Error);
}

TEST_CASE(".helmignore rules match Helm's", "[helm][files]") {
  auto rules = IgnoreRules::parse("# comment\n\n*.swp\n.git/\n/top.txt\nci/*.yaml\n");
  rules.add_defaults();
  CHECK(rules.ignored("x.swp", false));
  CHECK(rules.ignored("templates/x.swp", false));
  CHECK(rules.ignored(".git", true));
  CHECK_FALSE(rules.ignored(".git", false));  // trailing '/' only matches directories
  CHECK(rules.ignored("top.txt", false));
  CHECK_FALSE(rules.ignored("sub/top.txt", false));
  CHECK(rules.ignored("ci/a.yaml", false));
  CHECK(rules.ignored("templates/.hidden.yaml", false));
  CHECK_FALSE(rules.ignored("templates/deploy.yaml", false));
  CHECK_FALSE(rules.ignored(".", true));
  CHECK_THROWS_WITH(IgnoreRules::parse("a/**/b"), Catch::Contains("double-star"));
  // Helm's negation ignores whatever the negated pattern does NOT match.
  auto neg = IgnoreRules::parse("!keep.txt\n");
  CHECK(neg.ignored("other.txt", false));
  CHECK_FALSE(neg.ignored("keep.txt", false));
}

TEST_CASE(".helmignore's literal and '*suffix' rules answer as go_path_match does", "[helm][files]") {
  // IgnoreRules matches these without the glob matcher; the answers must not change.
  const std::vector<std::string> rules = {"OWNERS", "*.swp", "*~", "*.", "*x*", "a?", "top.txt", "ci/a.yaml", "*.tgz"};
  const std::vector<std::string> subjects = {"OWNERS",  "x/OWNERS", "OWNERS.bak", "a.swp", ".swp",    "swp",
                                             "d/a.swp", "a.swp/b",  "a~",         "~",     "d/a~",    "a.",
                                             "x",       "ax",       "ci/a.yaml",  "a.yaml", "b/ci/a.yaml", "",
                                             "top.txt", "a/top.txt", "c.tgz",     "d/c.tgz"};
  for (const auto& rule : rules) {
    auto one = IgnoreRules::parse(rule + "\n");
    bool base = rule.find('/') == std::string::npos;
    for (const auto& subject : subjects) {
      if (subject.empty()) continue;  // ignored() never matches the chart's top
      std::string_view matched_part = subject;
      if (base && subject.rfind('/') != std::string::npos) matched_part.remove_prefix(subject.rfind('/') + 1);
      INFO(rule << " vs " << subject);
      CHECK(one.ignored(subject, false) == go_path_match(rule, matched_part));
    }
  }
}

TEST_CASE("chart directories are read in lexical order with .helmignore", "[helm][files]") {
  fs::path dir = fs::temp_directory_path() / ("emco-helm-dir-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "templates");
  fs::create_directories(dir / "ci");
  std::ofstream(dir / "Chart.yaml") << "name: x\n";
  std::ofstream(dir / ".helmignore") << "ci/\n*.bak\n";
  std::ofstream(dir / "templates" / "b.yaml") << "\xEF\xBB\xBFkind: B\n";
  std::ofstream(dir / "templates" / "a.yaml") << "kind: A\n";
  std::ofstream(dir / "templates" / ".hidden") << "x";
  std::ofstream(dir / "ci" / "values.yaml") << "x";
  std::ofstream(dir / "old.bak") << "x";
  auto files = read_chart_dir(dir);
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{".helmignore", "Chart.yaml", "templates/a.yaml", "templates/b.yaml"});
  CHECK(files[3].data == "kind: B\n");  // BOM stripped
  fs::remove_all(dir);
  CHECK_THROWS_AS(read_chart_dir(dir), emco::Error);
}

TEST_CASE("chart directories refuse FIFOs and oversized files without hanging", "[helm][files]") {
  fs::path dir = fs::temp_directory_path() / ("emco-helm-irregular-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "templates");
  std::ofstream(dir / "Chart.yaml") << "name: x\n";
  REQUIRE(::mkfifo((dir / "templates" / "pipe.yaml").c_str(), 0600) == 0);
  try {
    read_chart_dir(dir);
    FAIL("a FIFO was read");
  } catch (const emco::Error& e) {
    CHECK_THAT(e.message(), Catch::Contains("cannot load irregular file") && Catch::Contains("pipe.yaml"));
  }
  fs::remove(dir / "templates" / "pipe.yaml");
  std::ofstream(dir / "templates" / "big.yaml") << std::string(2048, 'x');
  ArchiveLimits small;
  small.max_file_bytes = 1024;
  try {
    read_chart_dir(dir, small);
    FAIL("an oversized file was read");
  } catch (const emco::Error& e) {
    CHECK_THAT(e.message(), Catch::Contains("'big.yaml' is larger than the maximum file size 1024"));
  }
  fs::remove_all(dir);
}

TEST_CASE("a chart directory's deferred files are checked when read and read on first use", "[helm][files]") {
  fs::path dir = fs::temp_directory_path() / ("emco-helm-deferred-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "files");
  std::ofstream(dir / "Chart.yaml") << "name: x\n";
  std::ofstream(dir / "files" / "a.txt") << "\xEF\xBB\xBF" "first\n";
  std::ofstream(dir / "files" / "b.txt") << "second\n";
  auto under_files = [](std::string_view name) { return name.rfind("files/", 0) == 0; };
  auto files = read_chart_dir(dir, {}, under_files);
  REQUIRE(files.size() == 3);
  CHECK(files[0].name == "Chart.yaml");
  CHECK(!files[0].deferred);
  CHECK(files[0].contents() == "name: x\n");
  REQUIRE(files[1].deferred);
  CHECK(files[1].data.empty());
  // Read when first asked for (a change made before that is seen), then kept.
  std::ofstream(dir / "files" / "a.txt") << "\xEF\xBB\xBF" "changed\n";
  CHECK(files[1].contents() == "changed\n");  // BOM stripped
  fs::remove(dir / "files" / "a.txt");
  CHECK(files[1].contents() == "changed\n");
  // A file gone before its first read is an error then, naming it.
  fs::remove(dir / "files" / "b.txt");
  CHECK_THROWS_WITH(files[2].contents(), Catch::Contains("cannot read '") && Catch::Contains("b.txt"));
  // Checked at load as a read file is: a FIFO or an oversized file is refused there.
  REQUIRE(::mkfifo((dir / "files" / "pipe").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(read_chart_dir(dir, {}, under_files), Catch::Contains("cannot load irregular file"));
  fs::remove(dir / "files" / "pipe");
  std::ofstream(dir / "files" / "big.txt") << std::string(2048, 'x');
  ArchiveLimits small;
  small.max_file_bytes = 1024;
  CHECK_THROWS_WITH(read_chart_dir(dir, small, under_files),
                    Catch::Contains("'big.txt' is larger than the maximum file size 1024"));
  small.max_file_bytes = 4096;
  small.max_total_bytes = 2048;
  CHECK_THROWS_WITH(read_chart_dir(dir, small, under_files), Catch::Contains("is larger than the maximum size 2048"));
  fs::remove_all(dir);
}

TEST_CASE("chart directories follow symlinks to files and directories and stop a loop", "[helm][files]") {
  fs::path base = fs::temp_directory_path() / ("emco-helm-links-" + std::to_string(::getpid()));
  fs::remove_all(base);
  fs::path dir = base / "chart", shared = base / "shared";
  fs::create_directories(dir / "templates");
  fs::create_directories(shared / "more");
  std::ofstream(dir / "Chart.yaml") << "name: x\n";
  std::ofstream(shared / "cm.yaml") << "kind: ConfigMap\n";
  std::ofstream(shared / "more" / "s.yaml") << "kind: Secret\n";
  fs::create_symlink(shared / "cm.yaml", dir / "templates" / "cm.yaml");
  fs::create_symlink(shared / "more", dir / "templates" / "more");
  auto files = read_chart_dir(dir);
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{"Chart.yaml", "templates/cm.yaml", "templates/more/s.yaml"});
  CHECK(files[2].data == "kind: Secret\n");
  fs::create_symlink(dir / "templates", dir / "templates" / "loop");
  try {
    read_chart_dir(dir);
    FAIL("a symlink loop was walked");
  } catch (const emco::Error& e) {
    CHECK_THAT(e.message(), Catch::Contains("nested too deeply"));
  }
  fs::remove(dir / "templates" / "loop");
  fs::create_symlink(base / "missing.yaml", dir / "templates" / "dangling.yaml");
  try {
    read_chart_dir(dir);
    FAIL("a dangling symlink was read");
  } catch (const emco::Error& e) {
    CHECK_THAT(e.message(), Catch::Contains("dangling.yaml") && Catch::Contains("No such file or directory"));
  }
  fs::remove_all(base);
}

TEST_CASE("chart archives drop the top directory", "[helm][files]") {
  auto tgz = make_tgz({{"mychart/Chart.yaml", "name: mychart\n"},
                       {"mychart/templates/a.yaml", "kind: A\n"},
                       {"./mychart/values.yaml", "x: 1\n"}});
  auto files = read_chart_archive(tgz);
  REQUIRE(files.size() == 3);
  CHECK(files[0].name == "Chart.yaml");
  CHECK(files[1].name == "templates/a.yaml");
  CHECK(files[2].name == "values.yaml");
  CHECK(files[2].data == "x: 1\n");
}

TEST_CASE("hostile chart archives are rejected", "[helm][files]") {
  CHECK_THAT(error_of([] { read_chart_archive(make_tgz({{"/etc/passwd", "x"}})); }),
             Catch::Contains("absolute paths"));
  CHECK_THAT(error_of([] { read_chart_archive(make_tgz({{"c/../../evil", "x"}})); }),
             Catch::Contains("parent directory"));
  CHECK_THAT(error_of([] { read_chart_archive(make_tgz({{"Chart.yaml", "x"}})); }),
             Catch::Contains("chart yaml not in base directory"));
  CHECK_THAT(error_of([] { read_chart_archive(make_tgz({{"c/link", "/etc/passwd", true}})); }),
             Catch::Contains("not a regular file"));
  CHECK_THAT(error_of([] { read_chart_archive("not a gzip"); }), Catch::Contains("not gzip"));
  auto good = make_tgz({{"c/Chart.yaml", std::string(100000, 'a')}});
  CHECK_THAT(error_of([&] { read_chart_archive(good.substr(0, good.size() / 2)); }),
             Catch::Contains("corrupt or truncated"));
  std::string garbage = good.substr(0, 10) + std::string(200, 'x');
  CHECK_THAT(error_of([&] { read_chart_archive(garbage); }), Catch::Contains("chart archive"));
  // A decompression bomb: 3 MiB of zeros compresses to a few KiB.
  ArchiveLimits small;
  small.max_file_bytes = 1 << 20;
  small.max_total_bytes = 2 << 20;
  auto bomb = make_tgz({{"c/zeros", std::string(3 << 20, '\0')}});
  CHECK(bomb.size() < 64 * 1024);
  CHECK_THAT(error_of([&] { read_chart_archive(bomb, small); }), Catch::Contains("larger than the maximum"));
  auto many = make_tgz({{"c/a", std::string(900000, 'a')}, {"c/b", std::string(900000, 'b')},
                        {"c/c", std::string(900000, 'c')}});
  CHECK_THAT(error_of([&] { read_chart_archive(many, small); }), Catch::Contains("maximum size"));
  CHECK_THAT(error_of([] { read_chart_archive(make_tgz({})); }), Catch::Contains("no files"));
}

// Found by tests/fuzz/chart_archive_fuzz: for this gzip stream libarchive fails
// to open the archive and leaves its error string null, which the message
// concatenated (strlen(NULL): a crash of `emco apply` on a bad package).
TEST_CASE("a chart archive libarchive cannot open without saying why is an error", "[helm][files][fuzz]") {
  std::ifstream in(std::string(EMCO_SOURCE_DIR) + "/tests/fuzz/seeds/chart_archive_fuzz/open-error-without-message.tgz",
                   std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() == 322);
  CHECK_THAT(error_of([&] { read_chart_archive(bytes); }), Catch::StartsWith("corrupt or truncated chart archive: "));
}
