// GitDelivery builds trees itself (git's entry order, shared subtrees built
// once) and writes its own packs: checked against the git CLI, which writes
// the same files into a clone and must arrive at the very same trees.

#include <catch2/catch.hpp>

#include <fstream>

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
  GitRemoteSpec spec;
  spec.url = "file://" + bare.string();
  spec.branch = "main";
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
