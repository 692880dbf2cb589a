#pragma once
// A workspace and a simulated fleet for end-to-end reliability tests: the
// built emco binary runs as child processes (so a test can SIGKILL it at any
// moment) against an in-process `emco sim` fleet whose object stores the test
// reads directly, and whose faults.json `emco sim fault` drives.
//
// Shape: clusters c00..cNN (provider p, label edge) in an admin logical cloud
// lc of project proj; composite app ca/v1 with apps a00..aMM, each a chart
// rendering one ConfigMap "<release>-aNN" whose data.v is the chart value
// `v` ("v1"); DIGs dig1 and dig2 place every app on every cluster (all
// approved once set up).
//
// With `Shape::gitops`, a GitOps cluster g00 (label edge, Flux, pushing to
// the local bare repository <root>/fleet.git) joins the provider, the
// logical cloud and so every placement. With `Shape::level1_cloud`, a
// level-1 logical cloud lc1 (namespace lc1-ns, user lc1-user) over every
// cluster exists too, not instantiated. Shape::refused_object: see there.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/sim.hpp"

namespace emco::test {

namespace fs = std::filesystem;

// How hard a process-killing test tries (a stride over crash points, a
// number of trials): the environment variable `name` when set; else `full`
// in a plain build on SQLite, and `reduced` where every emco process costs
// several times more: under ASan, and on a PostgreSQL workspace, where each
// process opens a server connection and checks the schema (the SQLite run of
// the same test keeps `full`; EMCO_CRASH_STRIDE=1 etc. ask for all).
int effort(const char* name, int full, int reduced);

// Polls `done` every 50 ms until it holds or `limit` passes.
template <class F>
bool eventually(F done, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

struct Exit {
  int code = -1;       // exit status, or 128 + signal
  std::string out, err;
};

// A child emco process.
class Proc {
public:
  Proc(pid_t pid, fs::path out, fs::path err) : m_pid(pid), m_out(std::move(out)), m_err(std::move(err)) {}
  pid_t pid() const { return m_pid; }
  // Waits for the exit (reaping the child) and collects its output.
  Exit wait();
  // The exit if it has ended by `deadline`, else nothing (polls waitpid).
  bool wait_until(std::chrono::steady_clock::time_point deadline, Exit& exit);
  void kill9();

private:
  pid_t m_pid;
  fs::path m_out, m_err;
  bool m_reaped = false;
  int m_status = 0;
};

struct Shape {
  bool gitops = false;
  bool level1_cloud = false;
  // Chart a00 also renders a Widget (example.com/v1), a kind the simulated
  // clusters do not serve: the cluster refuses it (404).
  bool refused_object = false;
};

class Fleet {
public:
  Fleet(int clusters, int apps, Shape shape = {});
  ~Fleet();
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  const fs::path& root() const { return m_root; }
  sim::Simulator& sim() { return *m_sim; }
  int clusters() const { return m_clusters; }
  int apps() const { return m_apps; }

  // Starts `emco ARGS...` in the workspace (EMCO_WORKSPACE set, stdin
  // /dev/null) and returns at once.
  Proc start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});
  // Runs it to the end.
  Exit emco(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});
  // Runs it to the end without a background resume, and REQUIREs exit 0.
  void run_ok(const std::vector<std::string>& args);
  // The environment of an emco run under the fault shim
  // (tests/reliability/shim/fault_shim.cpp): `mode` count | kill | enospc |
  // eio | erofs at step `at` (`sticky`: from then on), the number of steps
  // written to <root>/steps; no background resume.
  std::map<std::string, std::string> fault_env(const std::string& mode, long at, bool sticky = false) const;

  // The address of DIG `name` of ca/v1; a full address (with '/') is kept.
  static std::string dig(const std::string& name) {
    return name.find('/') == std::string::npos ? "proj/ca/v1/" + name : name;
  }
  // What a cluster holds from emco: "<name>=<data.v>" of every ConfigMap
  // labelled emco/deployment-id.
  std::set<std::string> held(const std::string& cluster) const;
  // Everything the fleet holds, per cluster.
  std::map<std::string, std::set<std::string>> snapshot() const;
  // `emco dig status DIG -o json -o summary`, parsed: deployedStatus and deployedCounts as "Applied=40 ...".
  std::string status_line(const std::string& dig);
  // `emco dig status DIG -o json -o summary`, parsed.
  nlohmann::json status(const std::string& dig);
  // The DIG's lifecycle state (last stateInfo action).
  std::string state(const std::string& dig);
  // The GitOps repository's main branch as "path\ncontent" per file ("" before
  // the first push), with AppContext ids (runs of 12 or more digits) as
  // "<id>": two runs that delivered the same thing under different context
  // ids read the same.
  std::string git_tree() const;
  // The objects a logical cloud leaves on the simulated clusters:
  // "<cluster> <kind> <namespace>/<name>" of Namespaces, Roles,
  // RoleBindings, ResourceQuotas and CertificateSigningRequests.
  std::set<std::string> cloud_objects() const;
  // PRAGMA integrity_check of the workspace database ("ok" when sound).
  std::string integrity();
  // Contexts with queued work (`emco status -o json` .queued, with
  // EMCO_AUTO_RESUME=0 so that looking starts no background sync).
  size_t queued();

private:
  void write(const fs::path& rel, const std::string& text) const;
  fs::path m_root;
  int m_clusters, m_apps;
  Shape m_shape;
  std::unique_ptr<sim::Simulator> m_sim;
  int m_runs = 0;
};

// The environment that preloads the fault shim into a process (with the
// ASan build's link-order check off: the shim comes before the sanitizer
// runtime); the shim's own variables are the caller's.
std::map<std::string, std::string> shim_preload_env();

}  // namespace emco::test
