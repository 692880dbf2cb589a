// The sync engine's executor over fake targets: ordering, parallelism bound,
// retry with backoff, permanent failures, dependencies, hooks, stop and
// interruption.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/sync/engine.hpp"
#include "fake_target.hpp"

using namespace emco;
using namespace emco::sync;
using namespace std::chrono_literals;
using namespace emco::sync::testing;

namespace {

Options fast() {
  Options o;
  o.backoff_initial = 5ms;
  o.backoff_max = 20ms;
  o.poll = 10ms;
  o.ready_poll = 5ms;
  return o;
}

Job job(const std::string& app, const std::string& cluster, std::vector<std::string> names,
        StepAction action = StepAction::apply) {
  Job j{app, cluster, {}};
  for (auto& n : names) j.steps.push_back({action, n + "+ConfigMap", n, true});
  return j;
}

struct Recorder {
  std::vector<Update> updates;
  Hooks hooks() {
    Hooks h;
    h.flush = [this](std::vector<Update>&& batch) {
      for (auto& u : batch) updates.push_back(std::move(u));
    };
    return h;
  }
  // The last recorded status of a resource.
  std::string last(const std::string& cluster, const std::string& resource) const {
    std::string s = "none";
    for (const auto& u : updates)
      if (!u.connectivity && u.cluster == cluster && u.resource == resource) s = status_name(u.status);
    return s;
  }
  std::vector<std::string> connectivity(const std::string& cluster) const {
    std::vector<std::string> v;
    for (const auto& u : updates)
      if (u.connectivity && u.cluster == cluster) v.push_back(connectivity_name(u.conn));
    return v;
  }
};

}  // namespace

TEST_CASE("resources are applied in order within a cluster and statuses recorded", "[sync][engine]") {
  Fleet fleet;
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "p+c1", {"a", "b", "c"}), job("app1", "p+c2", {"a", "b", "c"})};
  Recorder rec;
  auto r = run(w, fleet.factory(), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  CHECK(r.progress.done == 2);
  CHECK(r.progress.steps_done == 6);
  for (auto c : {"p+c1", "p+c2"}) {
    CHECK(fleet.clusters[c].log == std::vector<std::string>{"apply a", "apply b", "apply c"});
    CHECK(rec.last(c, "b+ConfigMap") == "Applied");
    CHECK(rec.connectivity(c) == std::vector<std::string>{"Available"});
  }
}

TEST_CASE("parallel workers stay within the bound", "[sync][engine]") {
  Fleet fleet;
  std::atomic<int> active{0}, peak{0};
  Work w;
  w.apps = {{"app1", {}}};
  for (int i = 0; i < 24; ++i) {
    std::string c = "p+c" + std::to_string(i);
    fleet.clusters[c].global_active = &active;
    fleet.clusters[c].global_peak = &peak;
    w.jobs.push_back(job("app1", c, {"a", "b"}));
  }
  Options o = fast();
  o.parallel = 4;
  Recorder rec;
  auto r = run(w, fleet.factory(), o, rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  CHECK(peak.load() <= 4);
  CHECK(peak.load() >= 2);  // it did run in parallel
}

TEST_CASE("an unreachable cluster is retried with backoff and shows Retrying", "[sync][engine]") {
  Fleet fleet;
  fleet.clusters["p+c1"].unreachable_calls = 3;
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "p+c1", {"a", "b"})};
  Recorder rec;
  auto r = run(w, fleet.factory(), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  auto conn = rec.connectivity("p+c1");
  REQUIRE(conn.size() == 2);
  CHECK(conn[0] == "Retrying");
  CHECK(conn[1] == "Available");
  bool saw_retrying = false;
  for (const auto& u : rec.updates)
    if (!u.connectivity && u.status == ResourceStatus::retrying) saw_retrying = true;
  CHECK(saw_retrying);
  CHECK(rec.last("p+c1", "a+ConfigMap") == "Applied");
  CHECK(fleet.clusters["p+c1"].objects == std::set<std::string>{"a", "b"});
}

TEST_CASE("max_retries gives up and marks the resource Failed", "[sync][engine]") {
  Fleet fleet;
  fleet.clusters["p+c1"].always_unreachable = true;
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "p+c1", {"a"}), job("app1", "p+c2", {"a"})};
  Options o = fast();
  o.max_retries = 2;
  Recorder rec;
  auto r = run(w, fleet.factory(), o, rec.hooks());
  CHECK(r.outcome == Outcome::failed);
  CHECK(r.progress.failed == 1);
  CHECK(r.progress.done == 1);
  CHECK(rec.last("p+c1", "a+ConfigMap") == "Failed");
  CHECK(rec.last("p+c2", "a+ConfigMap") == "Applied");
  REQUIRE(r.failures.size() == 1);
  CHECK(r.failures[0].find("p+c1") != std::string::npos);
}

TEST_CASE("a permanent apply failure stops that cluster only", "[sync][engine]") {
  Fleet fleet;
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "p+c1", {"a", "fail:b", "c"}), job("app1", "p+c2", {"a", "b", "c"})};
  Recorder rec;
  auto r = run(w, fleet.factory(), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::failed);
  CHECK(fleet.clusters["p+c1"].log == std::vector<std::string>{"apply a"});
  CHECK(rec.last("p+c1", "fail:b+ConfigMap") == "Failed");
  // Not attempted, and says why.
  CHECK(rec.last("p+c1", "c+ConfigMap") == "Skipped");
  CHECK(fleet.clusters["p+c2"].objects.size() == 3);
}

TEST_CASE("a delete that finds nothing on the cluster is Absent, not Deleted", "[sync][engine]") {
  Fleet fleet;
  fleet.clusters["p+c1"].objects = {"a"};
  Work w;
  w.apps = {{"app1", {}}};
  Job j{"app1", "p+c1", {{StepAction::remove, "a+ConfigMap", "a", true}, {StepAction::remove, "b+ConfigMap", "b", true}}};
  w.jobs = {j};
  Recorder rec;
  auto r = run(w, fleet.factory(), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  CHECK(rec.last("p+c1", "a+ConfigMap") == "Deleted");
  CHECK(rec.last("p+c1", "b+ConfigMap") == "Absent");
  CHECK(fleet.clusters["p+c1"].objects.empty());
}

TEST_CASE("a failed delete marks the resource and the job goes on", "[sync][engine]") {
  Fleet fleet;
  fleet.clusters["p+c1"].objects = {"a", "c"};
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "p+c1", {"a", "fail:b", "c"}, StepAction::remove)};
  Recorder rec;
  auto r = run(w, fleet.factory(), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  CHECK(fleet.clusters["p+c1"].objects.empty());
  CHECK(rec.last("p+c1", "fail:b+ConfigMap") == "Failed");
  CHECK(rec.last("p+c1", "c+ConfigMap") == "Deleted");
}

TEST_CASE("an app starts after the apps it depends on", "[sync][engine]") {
  Fleet fleet;
  Work w;
  w.apps = {{"db", {}}, {"web", {{"db", false, 0}}}, {"cache", {}}};
  // Jobs listed in an order that would run web first without the gate.
  w.jobs = {job("web", "p+c2", {"web"}), job("cache", "p+c1", {"cache"}), job("db", "p+c1", {"db"})};
  Options o = fast();
  o.parallel = 1;
  Recorder rec;
  auto r = run(w, fleet.factory(), o, rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  // The order of Applied updates: db before web.
  size_t db_at = 0, web_at = 0;
  for (size_t i = 0; i < rec.updates.size(); ++i) {
    if (rec.updates[i].resource == "db+ConfigMap") db_at = i;
    if (rec.updates[i].resource == "web+ConfigMap") web_at = i;
  }
  CHECK(db_at < web_at);
}

TEST_CASE("a Ready dependency waits until the objects are ready", "[sync][engine]") {
  Fleet fleet;
  fleet.clusters["p+c1"].not_ready_reads["db"] = 3;
  Work w;
  w.apps = {{"db", {}}, {"web", {{"db", true, 0}}}};
  w.jobs = {job("db", "p+c1", {"db"}), job("web", "p+c2", {"web"})};
  Recorder rec;
  auto r = run(w, fleet.factory(), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  CHECK(fleet.clusters["p+c1"].not_ready_reads["db"] == 0);  // all three not-ready reads were consumed
  CHECK(fleet.clusters["p+c2"].objects.count("web") == 1);
}

TEST_CASE("a failed dependency fails its dependents without running them", "[sync][engine]") {
  Fleet fleet;
  Work w;
  w.apps = {{"db", {}}, {"web", {{"db", false, 0}}}};
  w.jobs = {job("db", "p+c1", {"fail:db"}), job("web", "p+c2", {"web"})};
  Recorder rec;
  auto r = run(w, fleet.factory(), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::failed);
  CHECK(r.progress.failed == 2);
  CHECK(fleet.clusters["p+c2"].log.empty());
  CHECK(rec.last("p+c2", "web+ConfigMap") == "Skipped");
}

TEST_CASE("a dependency cycle fails instead of hanging", "[sync][engine]") {
  Fleet fleet;
  Work w;
  w.apps = {{"a", {{"b", false, 0}}}, {"b", {{"a", false, 0}}}};
  w.jobs = {job("a", "p+c1", {"a"}), job("b", "p+c1", {"b"})};
  Recorder rec;
  auto r = run(w, fleet.factory(), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::failed);
  CHECK(r.progress.failed == 2);
}

TEST_CASE("hooks wait until ready, CRDs are created if absent", "[sync][engine]") {
  Fleet fleet;
  fleet.clusters["p+c1"].not_ready_reads["job"] = 2;
  Work w;
  w.apps = {{"app1", {}}};
  Job j{"app1", "p+c1", {}};
  j.steps.push_back({StepAction::create, "crd+CustomResourceDefinition", "crd", true});
  j.steps.push_back({StepAction::apply_wait, "job+Job", "job", true});
  j.steps.push_back({StepAction::apply, "a+ConfigMap", "a", true});
  w.jobs = {j};
  Recorder rec;
  auto r = run(w, fleet.factory(), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  CHECK(fleet.clusters["p+c1"].log == std::vector<std::string>{"create crd", "apply job", "apply a"});
  CHECK(fleet.clusters["p+c1"].not_ready_reads["job"] == 0);
}

TEST_CASE("a hook that never becomes ready fails after the hook timeout", "[sync][engine]") {
  Fleet fleet;
  fleet.clusters["p+c1"].not_ready_reads["job"] = 1000000;
  Work w;
  w.apps = {{"app1", {}}};
  Job j{"app1", "p+c1", {{StepAction::apply_wait, "job+Job", "job", true}, {StepAction::apply, "a+ConfigMap", "a", true}}};
  w.jobs = {j};
  Options o = fast();
  o.hook_timeout = 50ms;
  Recorder rec;
  auto r = run(w, fleet.factory(), o, rec.hooks());
  CHECK(r.outcome == Outcome::failed);
  CHECK(rec.last("p+c1", "job+Job") == "Failed");
  CHECK(rec.last("p+c1", "a+ConfigMap") == "Skipped");
}

TEST_CASE("stop during a retry ends the run within a second", "[sync][engine]") {
  Fleet fleet;
  fleet.clusters["p+c1"].always_unreachable = true;
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "p+c1", {"a"})};
  Options o = fast();
  o.backoff_initial = 10s;  // the worker sits in a long backoff
  o.backoff_max = 10s;
  o.poll = 200ms;
  std::atomic<bool> stop{false};
  Recorder rec;
  Hooks h = rec.hooks();
  h.stop_requested = [&] { return stop.load(); };
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  auto r = run(w, fleet.factory(), o, h);
  auto took = std::chrono::steady_clock::now() - t0;
  stopper.join();
  CHECK(r.outcome == Outcome::stopped);
  CHECK(took < 300ms + 1s);
  CHECK(rec.last("p+c1", "a+ConfigMap") == "Retrying");
}

TEST_CASE("an interrupt or a deadline leaves the work unfinished", "[sync][engine]") {
  Fleet fleet;
  fleet.clusters["p+c1"].always_unreachable = true;
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "p+c1", {"a"}), job("app1", "p+c2", {"a"})};
  Options o = fast();
  SECTION("deadline") {
    o.deadline = std::chrono::steady_clock::now() + 100ms;
    Recorder rec;
    auto r = run(w, fleet.factory(), o, rec.hooks());
    CHECK(r.outcome == Outcome::interrupted);
    CHECK(r.progress.done == 1);
  }
  SECTION("interrupt flag") {
    std::atomic<bool> flag{false};
    o.interrupt = &flag;
    Recorder rec;
    Hooks h = rec.hooks();
    int polls = 0;
    h.progress = [&](const Progress& p) {
      if (++polls == 5) flag = true;
      CHECK(p.jobs == 2);
    };
    auto r = run(w, fleet.factory(), o, h);
    CHECK(r.outcome == Outcome::interrupted);
  }
}

TEST_CASE("a cluster without a usable target fails its jobs", "[sync][engine]") {
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "p+c1", {"a"})};
  TargetFactory factory = [](const std::string& c, const std::string&) -> std::shared_ptr<Target> {
    throw Error(ErrorKind::not_found, "cluster '" + c + "' has no kubeconfig");
  };
  Recorder rec;
  auto r = run(w, factory, fast(), rec.hooks());
  CHECK(r.outcome == Outcome::failed);
  CHECK(rec.last("p+c1", "a+ConfigMap") == "Failed");
}

TEST_CASE("status names round-trip", "[sync][engine]") {
  for (auto s : {ResourceStatus::pending, ResourceStatus::applied, ResourceStatus::failed, ResourceStatus::retrying,
                 ResourceStatus::deleted, ResourceStatus::committed})
    CHECK(parse_status(status_name(s)) == s);
  for (auto c : {Connectivity::unknown, Connectivity::available, Connectivity::retrying})
    CHECK(parse_connectivity(connectivity_name(c)) == c);
}

// ---- batching targets (git) ------------------------------------------------

namespace {

// A repository shared by several clusters: stages steps, commits them all at
// once; commit() can be made to fail transiently or permanently.
class FakeRepo : public Batch {
public:
  void stage(const Staged& s) override {
    std::lock_guard lock(m_mutex);
    staged.push_back((s.remove ? "remove " : "write ") + std::string(s.cluster) + "/" + std::string(s.app) + "/" + s.manifest.str());
  }
  std::string commit(std::chrono::steady_clock::time_point) override {
    ++commits;
    if (transient_failures > 0) {
      --transient_failures;
      throw TargetError(true, true, "cannot reach the remote");
    }
    if (permanent_failure) throw TargetError(false, false, "pre-receive hook declined");
    return "commit c" + std::to_string(commits);
  }
  std::mutex m_mutex;
  std::vector<std::string> staged;
  int commits = 0;
  int transient_failures = 0;
  bool permanent_failure = false;
};

class RepoTarget : public Target {
public:
  explicit RepoTarget(FakeRepo& repo) : m_repo(repo) {}
  void probe() override {}
  void apply(std::string_view, bool) override { FAIL("a batching target is never applied to"); }
  bool remove(std::string_view) override {
    FAIL("a batching target is never removed from");
    return false;
  }
  ObjectState state(std::string_view) override { return {}; }
  std::string read(std::string_view) override { return {}; }
  Batch* batch() override { return &m_repo; }

private:
  FakeRepo& m_repo;
};

// Clusters named "git+..." deliver into `repo`, the others to `fleet`.
TargetFactory mixed(Fleet& fleet, FakeRepo& repo) {
  auto direct = fleet.factory();
  return [direct, &repo](const std::string& cluster, const std::string& ns) -> std::shared_ptr<Target> {
    if (cluster.rfind("git+", 0) == 0) return std::make_shared<RepoTarget>(repo);
    return direct(cluster, ns);
  };
}

size_t count_status(const Recorder& rec, ResourceStatus s) {
  size_t n = 0;
  for (const auto& u : rec.updates)
    if (!u.connectivity && u.status == s) ++n;
  return n;
}

}  // namespace

TEST_CASE("a batching target gets one commit for every cluster and app of the run", "[sync][engine][batch]") {
  Fleet fleet;
  FakeRepo repo;
  Work w;
  w.apps = {{"app1", {}}, {"app2", {{"app1", true, 0}}}};
  w.jobs = {job("app1", "git+c1", {"a", "b"}), job("app1", "git+c2", {"a"}), job("app1", "p+c3", {"a"}),
            job("app2", "git+c1", {"x"}), job("app2", "p+c3", {"x"})};
  w.jobs.push_back(job("app2", "git+c2", {"old"}, StepAction::remove));
  Recorder rec;
  auto r = run(w, mixed(fleet, repo), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  CHECK(repo.commits == 1);
  std::sort(repo.staged.begin(), repo.staged.end());
  CHECK(repo.staged == std::vector<std::string>{"remove git+c2/app2/old", "write git+c1/app1/a", "write git+c1/app1/b",
                                                "write git+c1/app2/x", "write git+c2/app1/a"});
  // Direct clusters are applied as before; git resources record the commit.
  CHECK(fleet.clusters["p+c3"].log == std::vector<std::string>{"apply a", "apply x"});
  CHECK(rec.last("p+c3", "a+ConfigMap") == "Applied");
  CHECK(rec.last("git+c1", "b+ConfigMap") == "Committed");
  CHECK(rec.last("git+c2", "old+ConfigMap") == "Deleted");
  for (const auto& u : rec.updates)
    if (!u.connectivity && u.cluster.rfind("git+", 0) == 0) CHECK(u.message == "commit c1");
  CHECK(rec.connectivity("git+c1") == std::vector<std::string>{"Available", "Available"});
}

TEST_CASE("a batch is staged by one thread at a time and each job of a large fleet once", "[sync][engine][batch]") {
  // 16 threads, 2,000 git jobs and 200 direct ones: staging is serialized
  // (threads queue jobs for whichever thread is staging), direct jobs still
  // run in parallel, and no job is lost or staged twice.
  class CountingRepo : public FakeRepo {
  public:
    void stage(const Staged& s) override {
      int now = ++m_inside;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::yield();  // widen the window another stager would need
      FakeRepo::stage(s);
      --m_inside;
    }
    std::atomic<int> most{0};

  private:
    std::atomic<int> m_inside{0};
  };
  Fleet fleet;
  CountingRepo repo;
  Work w;
  w.apps = {{"app1", {}}};
  for (int i = 0; i < 2000; ++i) w.jobs.push_back(job("app1", "git+c" + std::to_string(i), {"a", "b"}));
  for (int i = 0; i < 200; ++i) w.jobs.push_back(job("app1", "p+d" + std::to_string(i), {"a"}));
  Options o = fast();
  o.parallel = 16;
  Recorder rec;
  auto r = run(w, mixed(fleet, repo), o, rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  CHECK(r.progress.done == 2200);
  CHECK(repo.most.load() == 1);
  CHECK(repo.commits == 1);
  std::set<std::string> distinct(repo.staged.begin(), repo.staged.end());
  CHECK(repo.staged.size() == 4000);
  CHECK(distinct.size() == 4000);
  CHECK(count_status(rec, ResourceStatus::committed) == 4000);
  CHECK(count_status(rec, ResourceStatus::applied) == 200);
}

TEST_CASE("a batch's statuses are recorded in slices, not in one flush", "[sync][engine][batch]") {
  // 3 clusters of 15,000 resources in one repository: 45,000 statuses, more
  // than one slice.
  Fleet fleet;
  FakeRepo repo;
  Work w;
  w.apps = {{"app1", {}}};
  std::vector<std::string> names;
  for (int i = 0; i < 15000; ++i) names.push_back("r" + std::to_string(i));
  for (const char* c : {"git+c1", "git+c2", "git+c3"}) w.jobs.push_back(job("app1", c, names));
  std::vector<size_t> flushed;
  Recorder rec;
  Hooks hooks = rec.hooks();
  hooks.flush = [&](std::vector<Update>&& batch) {
    flushed.push_back(batch.size());
    for (auto& u : batch) rec.updates.push_back(std::move(u));
  };
  auto r = run(w, mixed(fleet, repo), fast(), hooks);
  CHECK(r.outcome == Outcome::succeeded);
  CHECK(repo.commits == 1);
  CHECK(count_status(rec, ResourceStatus::committed) == 45000);
  CHECK(*std::max_element(flushed.begin(), flushed.end()) == kStatusSlice);
  CHECK(std::count(flushed.begin(), flushed.end(), kStatusSlice) == 1);
  CHECK(rec.last("git+c3", "r14999+ConfigMap") == "Committed");
  CHECK(rec.connectivity("git+c2") == std::vector<std::string>{"Available"});

  SECTION("and so are its jobs' connectivity") {
    // 40,000 clusters of one resource: 40,000 connectivity updates.
    Work many;
    many.apps = {{"app1", {}}};
    for (int i = 0; i < 40000; ++i) many.jobs.push_back(job("app1", "git+c" + std::to_string(i), {"a"}));
    flushed.clear();
    rec.updates.clear();
    FakeRepo fleet_repo;
    auto done = run(many, mixed(fleet, fleet_repo), fast(), hooks);
    CHECK(done.outcome == Outcome::succeeded);
    CHECK(*std::max_element(flushed.begin(), flushed.end()) <= kStatusSlice);
    CHECK(rec.connectivity("git+c39999") == std::vector<std::string>{"Available"});
    CHECK(count_status(rec, ResourceStatus::committed) == 40000);
  }
}

TEST_CASE("a transient commit failure records nothing until a retry succeeds", "[sync][engine][batch]") {
  Fleet fleet;
  FakeRepo repo;
  repo.transient_failures = 2;
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "git+c1", {"a"}), job("app1", "git+c2", {"a"})};
  Recorder rec;
  auto r = run(w, mixed(fleet, repo), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::succeeded);
  CHECK(repo.commits == 3);
  // The only resource statuses recorded are the final ones.
  CHECK(count_status(rec, ResourceStatus::committed) == 2);
  CHECK(rec.updates.size() == 2 + 4);  // 2 statuses, Retrying + Available per cluster
  CHECK(rec.connectivity("git+c1") == std::vector<std::string>{"Retrying", "Available"});
  CHECK(rec.last("git+c2", "a+ConfigMap") == "Committed");
}

TEST_CASE("a commit still failing at the deadline leaves the run interrupted and unrecorded", "[sync][engine][batch]") {
  Fleet fleet;
  FakeRepo repo;
  repo.transient_failures = 1000000;
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "git+c1", {"a"}), job("app1", "p+c2", {"a"})};
  Options o = fast();
  o.deadline = std::chrono::steady_clock::now() + 150ms;
  Recorder rec;
  auto r = run(w, mixed(fleet, repo), o, rec.hooks());
  CHECK(r.outcome == Outcome::interrupted);
  CHECK(repo.commits >= 1);
  CHECK(rec.last("git+c1", "a+ConfigMap") == "none");
  CHECK(rec.last("p+c2", "a+ConfigMap") == "Applied");
  CHECK(rec.connectivity("git+c1") == std::vector<std::string>{"Retrying"});
  REQUIRE_FALSE(r.failures.empty());
  CHECK(r.failures.front() == "commit not delivered yet: cannot reach the remote");
}

TEST_CASE("a permanent commit failure marks the staged resources Failed", "[sync][engine][batch]") {
  Fleet fleet;
  FakeRepo repo;
  repo.permanent_failure = true;
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "git+c1", {"a", "b"}), job("app1", "p+c2", {"a"})};
  Recorder rec;
  auto r = run(w, mixed(fleet, repo), fast(), rec.hooks());
  CHECK(r.outcome == Outcome::failed);
  CHECK(repo.commits == 1);
  CHECK(r.progress.failed == 1);
  CHECK(r.progress.done == 1);
  CHECK(rec.last("git+c1", "b+ConfigMap") == "Failed");
  CHECK(rec.last("p+c2", "a+ConfigMap") == "Applied");
  REQUIRE(r.failures.size() == 1);
  CHECK(r.failures[0] == "app1 on git+c1: pre-receive hook declined");
}

TEST_CASE("a stop before the commit leaves the batch uncommitted", "[sync][engine][batch]") {
  Fleet fleet;
  FakeRepo repo;
  fleet.clusters["p+c2"].always_unreachable = true;
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "git+c1", {"a"}), job("app1", "p+c2", {"a"})};
  Recorder rec;
  Hooks h = rec.hooks();
  int polls = 0;
  h.stop_requested = [&] { return ++polls > 3; };
  auto r = run(w, mixed(fleet, repo), fast(), h);
  CHECK(r.outcome == Outcome::stopped);
  CHECK(repo.commits == 0);
  CHECK(rec.last("git+c1", "a+ConfigMap") == "none");
}

namespace {
// A target with a bug: apply throws something that is not a TargetError.
class BuggyTarget : public Target {
public:
  void probe() override {}
  void apply(std::string_view, bool) override { throw std::runtime_error("bug in the target"); }
  bool remove(std::string_view) override { return true; }
  ObjectState state(std::string_view) override { return {true, true, ""}; }
  std::string read(std::string_view) override { return ""; }
};
}  // namespace

TEST_CASE("a target's bug is not reported as a cluster failure: it reaches the caller", "[sync][engine]") {
  Fleet fleet;
  TargetFactory factory = [&](const std::string& cluster, const std::string& ns) -> std::shared_ptr<Target> {
    if (cluster == "p+buggy") return std::make_shared<BuggyTarget>();
    return fleet.factory()(cluster, ns);
  };
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "p+c1", {"a", "b"}), job("app1", "p+buggy", {"a", "b"})};
  Recorder rec;
  auto o = fast();
  o.parallel = 2;
  CHECK_THROWS_WITH(run(w, factory, o, rec.hooks()), "bug in the target");
  CHECK(rec.last("p+buggy", "a+ConfigMap") != "Failed");
}

TEST_CASE("a factory's Error fails that cluster's jobs only", "[sync][engine]") {
  Fleet fleet;
  TargetFactory factory = [&](const std::string& cluster, const std::string& ns) -> std::shared_ptr<Target> {
    if (cluster == "p+nokube") throw Error(ErrorKind::failed, "cluster has no kubeconfig");
    return fleet.factory()(cluster, ns);
  };
  Work w;
  w.apps = {{"app1", {}}};
  w.jobs = {job("app1", "p+c1", {"a"}), job("app1", "p+nokube", {"a"})};
  Recorder rec;
  auto r = run(w, factory, fast(), rec.hooks());
  CHECK(r.outcome == Outcome::failed);
  CHECK(r.progress.failed == 1);
  CHECK(rec.last("p+nokube", "a+ConfigMap") == "Failed");
  CHECK(rec.last("p+c1", "a+ConfigMap") == "Applied");
}
