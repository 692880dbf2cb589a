// GitDelivery against bare repositories over file://, checked with the git CLI.

#include <catch2/catch.hpp>
#include <thread>

#include "core/util/error.hpp"
#include "plugins/targets/gitops/git_delivery.hpp"
#include "support.hpp"

using namespace emco::gitops;
using namespace gitops_test;

TEST_CASE("file remote: first delivery builds one commit on top of the seed", "[gitops][file]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "srv" / "repo.git";
  make_bare_repo(bare, true);
  GitDelivery delivery(tmp.path() / "ws" / ".emco" / "git");
  auto spec = file_remote(bare);

  auto result = delivery.deliver(spec, commit_request({{"clusters/p+c1/a.yaml", "{\"a\":1}"},
                                                {"clusters/p+c1/sub/b.yaml", "b\n"},
                                                {"clusters/p+c2/c.yaml", "c\n"}},
                                               "emco: instantiate p/ca/v1/dig revision 1"));
  REQUIRE(result.changed);
  CHECK(result.commit_id.size() == 40);
  CHECK(result.attempts == 1);
  CHECK(result.files_written == 3);

  fs::path work = clone(spec.url, "main", tmp.path() / "clone");
  CHECK(git(work, {"rev-parse", "HEAD"}) == result.commit_id + "\n");
  CHECK(commit_count(work, "HEAD") == 2);
  CHECK(git(work, {"log", "-1", "--format=%s|%an|%ae"}) ==
        "emco: instantiate p/ca/v1/dig revision 1|emco test|emco@example.invalid\n");
  CHECK(read_file(work / "clusters/p+c1/a.yaml") == "{\"a\":1}");
  CHECK(read_file(work / "clusters/p+c1/sub/b.yaml") == "b\n");
  CHECK(read_file(work / "README") == "seed\n");
  CHECK(git(work, {"ls-tree", "-r", "--name-only", "HEAD"}) ==
        "README\nclusters/p+c1/a.yaml\nclusters/p+c1/sub/b.yaml\nclusters/p+c2/c.yaml\n");
  CHECK(delivery.cached_head(spec) == result.commit_id);

  // The cache is a healthy bare repository with private permissions.
  fs::path cache = delivery.cache_path(spec);
  CHECK(git(cache, {"fsck", "--no-progress"}).empty());
  CHECK((fs::status(cache).permissions() & fs::perms::others_all) == fs::perms::none);
  CHECK(git(cache, {"config", "--list"}).find("remote.") == std::string::npos);
}

TEST_CASE("file remote: no commit when nothing changed, one commit per change", "[gitops][file]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "repo.git";
  make_bare_repo(bare, true);
  GitDelivery delivery(tmp.path() / "cache");
  auto spec = file_remote(bare);

  auto first = delivery.deliver(spec, commit_request({{"x/a", "1"}, {"x/b", "2"}}));
  REQUIRE(first.changed);
  auto again = delivery.deliver(spec, commit_request({{"x/a", "1"}, {"x/b", "2"}}));
  CHECK_FALSE(again.changed);
  CHECK(again.summary() == "unchanged");
  CHECK(again.commit_id == first.commit_id);
  CHECK(commit_count(bare, "main") == 2);

  // Deleting a file that is not there changes nothing either.
  CHECK_FALSE(delivery.deliver(spec, commit_request({{"x/missing", std::nullopt}})).changed);

  auto update = delivery.deliver(spec, commit_request({{"x/a", "1"}, {"x/b", "3"}}));
  REQUIRE(update.changed);
  CHECK(update.files_written == 1);
  CHECK(commit_count(bare, "main") == 3);
  CHECK(git(bare, {"diff", "--name-only", first.commit_id, update.commit_id}) == "x/b\n");
  CHECK(show(bare, "main", "x/b") == "3");
}

TEST_CASE("file remote: deletes files and whole directories, empty directories vanish", "[gitops][file]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "repo.git";
  make_bare_repo(bare, true);
  GitDelivery delivery(tmp.path() / "cache");
  auto spec = file_remote(bare);
  delivery.deliver(spec, commit_request({{"c/1/ctx/app/a.yaml", "a"},
                                  {"c/1/ctx/app/b.yaml", "b"},
                                  {"c/1/keep.yaml", "k"},
                                  {"c/2/ctx/app/a.yaml", "a"}}));

  auto del = delivery.deliver(spec, commit_request({{"c/1/ctx/app/a.yaml", std::nullopt},
                                             {"c/1/ctx/app/b.yaml", std::nullopt},
                                             {"c/2/ctx/", std::nullopt}}));
  REQUIRE(del.changed);
  CHECK(del.files_deleted == 3);
  CHECK(git(bare, {"ls-tree", "-r", "--name-only", "main"}) == "README\nc/1/keep.yaml\n");
}

TEST_CASE("file remote: a branch that does not exist yet is created", "[gitops][file]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "repo.git";
  make_bare_repo(bare, true);

  SECTION("from an empty tree") {
    GitDelivery delivery(tmp.path() / "cache");
    auto result = delivery.deliver(file_remote(bare, "gitops/edge"), commit_request({{"a.yaml", "a"}}));
    REQUIRE(result.changed);
    CHECK(commit_count(bare, "gitops/edge") == 1);
    CHECK(git(bare, {"ls-tree", "-r", "--name-only", "gitops/edge"}) == "a.yaml\n");
    CHECK(commit_count(bare, "main") == 1);
  }
  SECTION("from the remote's default branch") {
    DeliveryOptions options;
    options.new_branch_base = NewBranchBase::remote_default;
    GitDelivery delivery(tmp.path() / "cache", options);
    auto result = delivery.deliver(file_remote(bare, "edge"), commit_request({{"a.yaml", "a"}}));
    REQUIRE(result.changed);
    CHECK(commit_count(bare, "edge") == 2);
    CHECK(git(bare, {"ls-tree", "-r", "--name-only", "edge"}) == "README\na.yaml\n");
  }
  SECTION("in a repository without any commit") {
    fs::path empty = tmp.path() / "empty.git";
    make_bare_repo(empty, false);
    GitDelivery delivery(tmp.path() / "cache");
    auto spec = file_remote(empty);
    CHECK_FALSE(delivery.deliver(spec, commit_request({{"gone", std::nullopt}})).changed);
    CHECK(delivery.deliver(spec, commit_request({{"a.yaml", "a"}})).changed);
    CHECK(show(empty, "main", "a.yaml") == "a");
  }
}

TEST_CASE("file remote: a missing repository is unreachable and records nothing", "[gitops][file]") {
  TempDir tmp;
  GitDelivery delivery(tmp.path() / "cache");
  auto spec = file_remote(tmp.path() / "nope.git");
  try {
    delivery.deliver(spec, commit_request({{"a", "a"}}));
    FAIL("expected an error");
  } catch (const emco::Error& e) {
    CHECK(e.kind() == emco::ErrorKind::unreachable);
    CHECK_THAT(e.message(), Catch::Contains("nope.git"));
  }
  CHECK(delivery.cached_head(spec).empty());
}

TEST_CASE("file remote: history unrelated to what was delivered is refused", "[gitops][file]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "repo.git";
  make_bare_repo(bare, true);
  GitDelivery delivery(tmp.path() / "cache");
  auto spec = file_remote(bare);
  auto first = delivery.deliver(spec, commit_request({{"a", "1"}}));
  REQUIRE(first.changed);

  // Someone re-creates the repository with a new root commit.
  fs::remove_all(bare);
  make_bare_repo(bare, false);
  TempDir other;
  git(other.path(), {"init", "-q", "-b", "main"});
  write_file(other.path() / "OTHER", "unrelated\n");
  git(other.path(), {"add", "OTHER"});
  git(other.path(), {"commit", "-q", "-m", "unrelated root"});
  git(other.path(), {"push", "-q", bare.string(), "main"});
  std::string replaced = git(bare, {"rev-parse", "main"});
  try {
    delivery.deliver(spec, commit_request({{"a", "2"}}));
    FAIL("expected an error");
  } catch (const emco::Error& e) {
    CHECK(e.kind() == emco::ErrorKind::conflict);
    CHECK_THAT(e.message(), Catch::Contains("unrelated"));
    CHECK_THAT(e.hint(), Catch::Contains(delivery.cache_path(spec).string()));
  }
  CHECK(git(bare, {"rev-parse", "main"}) == replaced);
  CHECK(delivery.cached_head(spec) == first.commit_id);
}

TEST_CASE("file remote: a push that loses the race is rebuilt on the new head", "[gitops][file][race]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "repo.git";
  make_bare_repo(bare, true);
  auto spec = file_remote(bare);
  GitDelivery other(tmp.path() / "other-ws");

  DeliveryOptions options;
  int competing = 0;
  options.before_push = [&](int attempt) {
    // Another workspace pushes between our fetch and our push, twice.
    if (attempt <= 2) other.deliver(spec, commit_request({{"other/" + std::to_string(++competing), "o"}}));
  };
  GitDelivery delivery(tmp.path() / "ws", options);
  auto result = delivery.deliver(spec, commit_request({{"mine/a", "m"}}, "emco: mine"));
  REQUIRE(result.changed);
  CHECK(result.attempts == 3);
  CHECK(git(bare, {"ls-tree", "-r", "--name-only", "main"}) == "README\nmine/a\nother/1\nother/2\n");
  CHECK(commit_count(bare, "main") == 4);
  CHECK(git(bare, {"log", "-1", "--format=%s", "main"}) == "emco: mine\n");

  SECTION("and gives up after max_attempts") {
    DeliveryOptions stubborn;
    stubborn.max_attempts = 2;
    stubborn.before_push = [&](int) { other.deliver(spec, commit_request({{"other/" + std::to_string(++competing), "o"}})); };
    GitDelivery loser(tmp.path() / "loser", stubborn);
    try {
      loser.deliver(spec, commit_request({{"lost", "x"}}));
      FAIL("expected an error");
    } catch (const emco::Error& e) {
      CHECK(e.kind() == emco::ErrorKind::conflict);
      CHECK_THAT(e.message(), Catch::Contains("non-fast-forward after 2 attempts"));
    }
    CHECK(git(bare, {"ls-tree", "-r", "--name-only", "main"}).find("lost") == std::string::npos);
  }
}

TEST_CASE("file remote: concurrent pushes from two workspaces lose nothing", "[gitops][file][race]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "repo.git";
  make_bare_repo(bare, true);
  auto spec = file_remote(bare);
  constexpr int k_rounds = 8;
  auto worker = [&](const std::string& name, std::vector<int>& changed) {
    DeliveryOptions options;
    options.max_attempts = 50;
    GitDelivery delivery(tmp.path() / name, options);
    for (int i = 0; i < k_rounds; ++i)
      changed.push_back(delivery.deliver(spec, commit_request({{name + "/" + std::to_string(i), name}})).changed);
  };
  std::vector<int> a, b;
  std::thread ta(worker, "a", std::ref(a));
  std::thread tb(worker, "b", std::ref(b));
  ta.join();
  tb.join();
  CHECK(commit_count(bare, "main") == 1 + 2 * k_rounds);
  std::string files = git(bare, {"ls-tree", "-r", "--name-only", "main"});
  for (int i = 0; i < k_rounds; ++i) {
    CHECK_THAT(files, Catch::Contains("a/" + std::to_string(i) + "\n"));
    CHECK_THAT(files, Catch::Contains("b/" + std::to_string(i) + "\n"));
  }
}

TEST_CASE("change sets with bad paths are refused before any network access", "[gitops]") {
  TempDir tmp;
  GitDelivery delivery(tmp.path() / "cache");
  auto spec = file_remote(tmp.path() / "does-not-matter.git");
  for (const char* bad : {"../x", "a//b", "/abs", "a/./b", ".git/config", "a/.."}) {
    INFO(bad);
    CHECK_THROWS_AS(delivery.deliver(spec, commit_request({{bad, "x"}})), emco::Error);
  }
  CHECK_THROWS_AS(delivery.deliver(spec, commit_request({{"dir/", "content"}})), emco::Error);
  CHECK_THROWS_AS(delivery.deliver(spec, commit_request({{"a", "x"}}, "  ")), emco::Error);
  CHECK_FALSE(fs::exists(delivery.cache_path(spec)));
}
