// GitDelivery builds trees itself (git's entry order, shared subtrees built
// once) and writes its own packs: checked against the git CLI, which writes
// the same files into a clone and must arrive at the very same trees.

#include <catch2/catch.hpp>

#include <fstream>
#include <memory>

#include "core/util/error.hpp"
#include "plugins/targets/gitops/git_delivery.hpp"
#include "support.hpp"

using namespace emco::gitops;
using namespace gitops_test;

namespace {

// Applies `changes` to a work tree the way the git CLI user would, then
// returns the tree id git computes for it.
std::string cli_tree(const fs::path& work, const ChangeSet& changes) {
  for (const auto& [path, content] : changes) {
    if (path.back() == '/') {
      fs::remove_all(work / path);
    } else if (!content) {
      fs::remove(work / path);
    } else {
      fs::create_directories((work / path).parent_path());
      std::ofstream(work / path, std::ios::binary) << content->str();
    }
  }
  git(work, {"add", "-A"});
  return git(work, {"write-tree"});
}

}  // namespace

TEST_CASE("trees match git's for shared, differing and tricky subtrees", "[gitops][trees]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "repo.git";
  make_bare_repo(bare, true);
  GitDelivery delivery(tmp.path() / "cache");
  GitRemoteSpec spec = file_remote(bare);
  fs::path work = clone(spec.url, "main", tmp.path() / "work");

  // Fifty clusters: the same app directory on most (one subtree, built
  // once), a different value on every seventh, per-cluster Flux files, and
  // names whose order differs between files and directories ("a.b" sorts
  // before "a/" but after "a" for a file named "a").
  ChangeSet first;
  for (int i = 0; i < 50; ++i) {
    std::string c = "clusters/p+c" + std::to_string(i) + "/";
    first[c + "kust.yaml"] = "path: " + c + "\n";
    for (int a = 0; a < 3; ++a) {
      std::string app = c + "context/9/app/app" + std::to_string(a) + "/";
      first[app + "cm+ConfigMap.yaml"] = i % 7 == 0 ? "{\"v\":\"odd\"}" : "{\"v\":\"same\"}";
      first[app + "d+Deployment.yaml"] = "{\"d\":1}";
    }
  }
  first["x/a"] = "file a";
  first["x/a.b"] = "file a.b";
  first["x/a-"] = "file a-";
  first["x/ab/c"] = "dir ab";
  first["x/a0/c"] = "dir a0";
  // Directories met out of name order in path order ("y/a-b/c" sorts
  // before "y/a/c", "p+c1-x/" before "p+c1/"): each still lands in its place.
  first["x/a-b/c"] = "dir a-b";
  first["y/a/c"] = "dir a";
  first["y/a-b/c"] = "dir a-b";
  first["y/a.d/c"] = "dir a.d";
  first["clusters/p+c1-x/kust.yaml"] = "c1-x";
  first["clusters/p+c1.y/kust.yaml"] = "c1.y";
  auto one = delivery.deliver(spec, commit_request(first));
  REQUIRE(one.changed);
  CHECK(one.files_written == first.size());
  CHECK(git(bare, {"rev-parse", "main^{tree}"}) == cli_tree(work, first));

  // An update: one value on every cluster, a removal on some, a directory
  // deleted on one, a new file on another.
  ChangeSet second;
  for (int i = 0; i < 50; ++i) {
    std::string c = "clusters/p+c" + std::to_string(i) + "/";
    second[c + "context/9/app/app0/cm+ConfigMap.yaml"] = "{\"v\":\"changed\"}";
    if (i % 10 == 3) second[c + "context/9/app/app2/d+Deployment.yaml"] = std::nullopt;
  }
  second["clusters/p+c5/context/9/app/app1/"] = std::nullopt;
  second["clusters/p+c6/extra.yaml"] = "extra";
  second["x/a"] = std::nullopt;
  auto two = delivery.deliver(spec, commit_request(second));
  REQUIRE(two.changed);
  CHECK(two.files_written == 51);
  CHECK(two.files_deleted == 5 + 2 + 1);
  CHECK(git(bare, {"rev-parse", "main^{tree}"}) == cli_tree(work, second));

  // The repository and the cache hold every object, in well-formed packs.
  CHECK(git(bare, {"fsck", "--strict", "--no-progress"}).empty());
  CHECK(git(delivery.cache_path(spec), {"fsck", "--strict", "--no-progress"}).empty());
  CHECK(commit_count(bare, "main") == 3);
}

namespace {

// `changes` split the way a fleet's commit comes: a group per directory
// "clusters/<id>" (paths relative to it); the rest stays in the request.
CommitRequest grouped_request(const ChangeSet& changes) {
  CommitRequest request = commit_request({});
  auto groups = std::make_shared<std::map<std::string, ChangeSet>>();
  for (const auto& [path, content] : changes) {
    const size_t slash = path.find('/', std::string("clusters/").size());
    if (path.rfind("clusters/", 0) == 0 && slash != std::string::npos)
      (*groups)[path.substr(0, slash)][path.substr(slash + 1)] = content;
    else
      request.changes[path] = content;
  }
  request.groups = [groups](const ChangeGroupSink& sink) {
    for (const auto& [dir, group] : *groups) sink(ChangeGroup{dir, {group.begin(), group.end()}});
  };
  return request;
}

}  // namespace

TEST_CASE("changes given in groups make the trees the whole change set makes", "[gitops][trees]") {
  TempDir tmp;
  fs::path whole_repo = tmp.path() / "whole.git", grouped_repo = tmp.path() / "grouped.git";
  make_bare_repo(whole_repo, true);
  make_bare_repo(grouped_repo, true);
  GitDelivery delivery(tmp.path() / "cache");
  GitRemoteSpec whole = file_remote(whole_repo), grouped = file_remote(grouped_repo);

  ChangeSet first;
  for (int i = 0; i < 30; ++i) {
    std::string c = "clusters/p+c" + std::to_string(i) + "/";
    first[c + "kust.yaml"] = "path: " + c + "\n";
    for (int a = 0; a < 3; ++a)
      first[c + "context/9/app/app" + std::to_string(a) + "/cm+ConfigMap.yaml"] = i % 5 ? "{\"v\":1}" : "{\"v\":2}";
  }
  first["clusters/p+c1-x/kust.yaml"] = "out of order";
  first["clusters/top.yaml"] = "a file beside the groups";
  first["README.md"] = "fleet";
  ChangeSet second;
  for (int i = 0; i < 30; i += 3) second["clusters/p+c" + std::to_string(i) + "/context/9/app/app0/cm+ConfigMap.yaml"] = "{\"v\":3}";
  second["clusters/p+c4/context/9/"] = std::nullopt;                    // a directory deleted inside a group
  second["clusters/p+c5/context/9/app/app1/cm+ConfigMap.yaml"] = std::nullopt;
  second["clusters/p+c6/context/9/app/app9/new.yaml"] = "new";
  second["clusters/p+new/kust.yaml"] = "a group for a new directory";
  second["clusters/top.yaml/kust.yaml"] = "a group where a file was";

  for (const ChangeSet* changes : {&first, &second}) {
    auto a = delivery.deliver(whole, commit_request(*changes));
    auto b = delivery.deliver(grouped, grouped_request(*changes));
    REQUIRE(a.changed);
    REQUIRE(b.changed);
    CHECK(b.files_written == a.files_written);
    CHECK(b.files_deleted == a.files_deleted);
    CHECK(git(grouped_repo, {"rev-parse", "main^{tree}"}) == git(whole_repo, {"rev-parse", "main^{tree}"}));
  }
  CHECK(git(grouped_repo, {"fsck", "--strict", "--no-progress"}).empty());

  SECTION("a group that changes nothing makes no commit") {
    CommitRequest again = grouped_request({{"clusters/p+c2/kust.yaml", "path: clusters/p+c2/\n"}});
    CHECK_FALSE(delivery.deliver(grouped, again).changed);
  }
  SECTION("overlapping groups and bad directories are refused, the branch unchanged") {
    const std::string head = git(grouped_repo, {"rev-parse", "main"});
    std::vector<std::vector<ChangeGroup>> bad = {
        {{"clusters/p+c1", {{"a", "1"}}}, {"clusters/p+c1", {{"b", "2"}}}},      // the same directory twice
        {{"clusters/p+c1", {{"a", "1"}}}, {"clusters/p+c1/x", {{"b", "2"}}}},    // one inside another
        {{"clusters/p+c1/x", {{"a", "1"}}}, {"clusters/p+c1", {{"b", "2"}}}},    // and the other way round
        {{"README.md/x", {{"a", "1"}}}, {"", {{"b", "2"}}}},                     // no directory
        {{"clusters/../x", {{"a", "1"}}}},
        {{"clusters/p+c1/", {{"a", "1"}}}},
        {{".git/x", {{"a", "1"}}}},
    };
    for (const auto& groups : bad) {
      CommitRequest request = commit_request({});
      request.groups = [&](const ChangeGroupSink& sink) {
        for (const auto& g : groups) sink(ChangeGroup(g));
      };
      INFO(groups.front().dir);
      try {
        delivery.deliver(grouped, request);
        FAIL("expected an error");
      } catch (const emco::Error& e) {
        CHECK(e.kind() == emco::ErrorKind::invalid);
      }
    }
    CommitRequest overlaps = commit_request({{"clusters/p+c1/kust.yaml", "both"}});
    overlaps.groups = [](const ChangeGroupSink& sink) { sink(ChangeGroup{"clusters/p+c1", {{"a", "1"}}}); };
    CHECK_THROWS_AS(delivery.deliver(grouped, overlaps), emco::Error);
    CHECK(git(grouped_repo, {"rev-parse", "main"}) == head);
  }
}

TEST_CASE("groups are made again for a push that lost the race", "[gitops][trees][race]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "repo.git";
  make_bare_repo(bare, true);
  GitRemoteSpec spec = file_remote(bare);
  GitDelivery other(tmp.path() / "other");
  DeliveryOptions options;
  options.before_push = [&](int attempt) {
    if (attempt == 1) other.deliver(spec, commit_request({{"clusters/p+c1/theirs", "o"}}));
  };
  GitDelivery delivery(tmp.path() / "ws", options);
  int made = 0;
  CommitRequest request = commit_request({});
  request.groups = [&](const ChangeGroupSink& sink) {
    ++made;
    sink(ChangeGroup{"clusters/p+c1", {{"mine", "m"}}});
  };
  auto result = delivery.deliver(spec, request);
  REQUIRE(result.changed);
  CHECK(result.attempts == 2);
  CHECK(made == 2);
  CHECK(git(bare, {"ls-tree", "-r", "--name-only", "main"}) == "README\nclusters/p+c1/mine\nclusters/p+c1/theirs\n");
}

TEST_CASE("a group's changes come in any order and a path given twice keeps its last content",
          "[gitops][trees]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "repo.git";
  make_bare_repo(bare, true);
  GitDelivery delivery(tmp.path() / "cache");
  CommitRequest request = commit_request({});
  request.groups = [](const ChangeGroupSink& sink) {
    sink(ChangeGroup{"clusters/p+c1", {{"z/b", "first"}, {"a", "a"}, {"z-y/c", "c"}, {"z/b", "last"}, {"m/", std::nullopt}}});
  };
  REQUIRE(delivery.deliver(file_remote(bare), request).changed);
  CHECK(git(bare, {"ls-tree", "-r", "--name-only", "main"}) ==
        "README\nclusters/p+c1/a\nclusters/p+c1/z-y/c\nclusters/p+c1/z/b\n");
  CHECK(git(bare, {"show", "main:clusters/p+c1/z/b"}) == "last");
}

TEST_CASE("a name is a file or a directory, never both", "[gitops][trees]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "repo.git";
  make_bare_repo(bare, true);
  GitDelivery delivery(tmp.path() / "cache");
  GitRemoteSpec spec = file_remote(bare);
  REQUIRE(delivery.deliver(spec, commit_request({{"z/d/f", "in d"}, {"z/e", "a file e"}})).changed);
  const std::string head = git(bare, {"rev-parse", "main"});

  // Written as a file and below as a directory: refused, nothing pushed.
  for (const ChangeSet& both : {ChangeSet{{"x/a", "file"}, {"x/a/c", "below"}},
                                ChangeSet{{"z/e/f", "below"}, {"z/e", "file"}}}) {
    try {
      delivery.deliver(spec, commit_request(both));
      FAIL("expected an error");
    } catch (const emco::Error& e) {
      CHECK(e.kind() == emco::ErrorKind::invalid);
      CHECK_THAT(e.message(), Catch::Contains("is both a file and a directory"));
    }
  }
  CHECK(git(bare, {"rev-parse", "main"}) == head);

  // A directory replaced by a file of its name; a directory deletion that
  // names a file leaves the file.
  auto replaced = delivery.deliver(spec, commit_request({{"z/d/", std::nullopt}, {"z/d", "now a file"}, {"z/e/", std::nullopt}}));
  REQUIRE(replaced.changed);
  CHECK(git(bare, {"ls-tree", "-r", "--name-only", "main"}) == "README\nz/d\nz/e\n");
  CHECK(show(bare, "main", "z/d") == "now a file");
  CHECK(show(bare, "main", "z/e") == "a file e");
  CHECK(git(bare, {"fsck", "--strict", "--no-progress"}).empty());
}
