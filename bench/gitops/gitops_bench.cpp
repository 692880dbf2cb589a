// GitOps delivery benchmark: N apps x M clusters sharing one repository,
// first push then an update of one value in one app, emco's library
// (plan_commits + GitDelivery) against the git CLI (files written, then
// `git add -A`, `git commit`, `git push`, via git_cli.sh). Both push to their
// own bare repository with the same seed, over file:// or git daemon; the
// resulting `clusters/` trees must be identical.
//
// usage: gitops_bench [--clusters N] [--apps N] [--resources N]
//                     [--remote file|daemon] --work DIR --script git_cli.sh

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/util/error.hpp"
#include "plugins/targets/gitops/git_delivery.hpp"
#include "plugins/targets/gitops/gitops_layout.hpp"

namespace fs = std::filesystem;
using namespace emco::gitops;
using nlohmann::json;

namespace {

struct Options {
  int clusters = 1000;
  int apps = 10;
  int resources = 10;
  std::string remote = "file";
  fs::path work;
  fs::path script;
};

// Runs argv without a shell; returns stdout; exits the benchmark on failure.
std::string run(const std::vector<std::string>& argv_in, const fs::path& cwd = {}) {
  int out[2];
  if (::pipe(out) != 0) throw std::runtime_error("pipe");
  std::vector<std::string> argv = argv_in;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    ::setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
    ::setenv("GIT_AUTHOR_NAME", "bench", 1);
    ::setenv("GIT_AUTHOR_EMAIL", "bench@example.invalid", 1);
    ::setenv("GIT_COMMITTER_NAME", "bench", 1);
    ::setenv("GIT_COMMITTER_EMAIL", "bench@example.invalid", 1);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "gitops_bench: command failed: " << argv_in[0] << " " << (argv_in.size() > 1 ? argv_in[1] : "") << "\n";
    std::exit(1);
  }
  return text;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool port_open(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

class Daemon {
public:
  Daemon(const fs::path& root) : m_port(free_port()) {
    m_pid = ::fork();
    if (m_pid == 0) {
      int log = ::open((root / "daemon.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      ::dup2(log, 1);
      ::dup2(log, 2);
      std::vector<std::string> argv{"/usr/lib/git-core/git-daemon", "--reuseaddr", "--listen=127.0.0.1",
                                    "--port=" + std::to_string(m_port), "--base-path=" + root.string(),
                                    "--export-all", "--enable=receive-pack", root.string()};
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    for (int i = 0; i < 500 && !port_open(m_port); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!port_open(m_port)) {
      std::cerr << "gitops_bench: git daemon did not start\n";
      std::exit(1);
    }
  }
  ~Daemon() {
    ::kill(m_pid, SIGTERM);
    int status;
    ::waitpid(m_pid, &status, 0);
  }
  std::string url(const std::string& repo) const { return "git://127.0.0.1:" + std::to_string(m_port) + "/" + repo; }

private:
  int m_port;
  pid_t m_pid;
};

// One DIG operation: `apps` apps of `resources` small manifests on every
// cluster. Every app has one per-cluster ConfigMap; the rest is shared, as
// Helm output of one DIG usually is. `version` goes into app0's labels.
// A ResourceChange views its names: the bench's few distinct names live
// as long as the process.
std::string_view kept_name(std::string name) {
  static std::set<std::string> names;
  return *names.insert(std::move(name)).first;
}

GitOpsOperation make_operation(const Options& o, const std::string& url, GitOpsOperationKind kind,
                               const std::string& version) {
  GitOpsOperation op;
  op.kind = kind;
  op.project = "proj1";
  op.composite_app = "bench";
  op.composite_app_version = "v1";
  op.dig = "dig1";
  op.revision = kind == GitOpsOperationKind::instantiate ? 1 : 2;
  op.context.app_context_id = "5772429642747222531";
  op.context.namespace_name = "default";
  std::vector<std::vector<std::shared_ptr<const json>>> shared(static_cast<size_t>(o.apps));
  std::vector<std::shared_ptr<const json>> status;
  for (int a = 0; a < o.apps; ++a) {
    std::string app = "app" + std::to_string(a);
    std::string v = a == 0 ? version : "1";
    for (int r = 1; r < o.resources; ++r) {
      json obj = {{"apiVersion", "apps/v1"},
                  {"kind", "Deployment"},
                  {"metadata",
                   {{"name", app + "-d" + std::to_string(r)},
                    {"labels", {{"app", app}, {"version", v}, {"emco/deployment-id", op.context.app_context_id + "-" + app}}}}},
                  {"spec",
                   {{"replicas", 1},
                    {"selector", {{"matchLabels", {{"app", app}}}}},
                    {"template",
                     {{"metadata", {{"labels", {{"app", app}}}}},
                      {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "nginx:1.25." + v}}})}}}}}}}};
      shared[static_cast<size_t>(a)].push_back(std::make_shared<const json>(std::move(obj)));
    }
    status.push_back(std::make_shared<const json>(
        json{{"apiVersion", "k8splugin.io/v1alpha1"},
             {"kind", "ResourceBundleState"},
             {"metadata", {{"name", app + "-" + op.context.app_context_id}, {"labels", {{"emco/deployment-id", op.context.app_context_id + "-" + app}}}}},
             {"spec", {{"selector", {{"matchLabels", {{"emco/deployment-id", op.context.app_context_id + "-" + app}}}}}}}}));
  }
  for (int c = 0; c < o.clusters; ++c) {
    ClusterWork work;
    work.cluster.provider = "provider1";
    work.cluster.cluster = "cluster" + std::to_string(c);
    work.cluster.remote.url = url;
    work.cluster.remote.branch = "main";
    for (int a = 0; a < o.apps; ++a) {
      if (kind == GitOpsOperationKind::update && a != 0) continue;
      std::string app = "app" + std::to_string(a);
      std::string v = a == 0 ? version : "1";
      for (int r = 1; r < o.resources; ++r) {
        const auto& obj = shared[static_cast<size_t>(a)][static_cast<size_t>(r - 1)];
        work.resources.push_back({kept_name(app), kept_name((*obj)["metadata"]["name"]), "Deployment", obj});
      }
      auto cm = std::make_shared<const json>(json{
          {"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", app + "-cluster"}, {"labels", {{"app", app}, {"version", v}}}}},
          {"data", {{"cluster", work.cluster.id()}}}});
      work.resources.push_back({kept_name(app), kept_name(app + "-cluster"), "ConfigMap", cm});
      if (kind == GitOpsOperationKind::instantiate) work.status[app] = status[static_cast<size_t>(a)];
    }
    op.clusters.push_back(std::move(work));
  }
  return op;
}

void materialize(const ChangeSet& changes, const fs::path& dir) {
  fs::remove_all(dir);
  for (const auto& [path, content] : changes) {
    if (!content) continue;
    fs::path file = dir / path;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << content->str();
  }
}

long long dir_kib(const fs::path& dir) {
  long long bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) bytes += static_cast<long long>(e.file_size());
  return (bytes + 1023) / 1024;
}

void make_bare(const fs::path& bare, const fs::path& seed) {
  run({"git", "init", "-q", "--bare", "-b", "main", bare.string()});
  run({"git", "-C", seed.string(), "push", "-q", bare.string(), "main"});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--clusters") o.clusters = std::stoi(value);
    else if (flag == "--apps") o.apps = std::stoi(value);
    else if (flag == "--resources") o.resources = std::stoi(value);
    else if (flag == "--remote") o.remote = value;
    else if (flag == "--work") o.work = value;
    else if (flag == "--script") o.script = value;
    else {
      std::cerr << "gitops_bench: unknown flag " << flag << "\n";
      return 64;
    }
  }
  if (o.work.empty() || o.script.empty() || (o.remote != "file" && o.remote != "daemon")) {
    std::cerr << "usage: gitops_bench [--clusters N] [--apps N] [--resources N] [--remote file|daemon] --work DIR --script git_cli.sh\n";
    return 64;
  }
  try {
    fs::remove_all(o.work);
    fs::create_directories(o.work / "srv");
    fs::path seed = o.work / "seed";
    run({"git", "init", "-q", "-b", "main", seed.string()});
    std::ofstream(seed / "README") << "fleet\n";
    run({"git", "-C", seed.string(), "add", "README"});
    run({"git", "-C", seed.string(), "commit", "-q", "-m", "seed"});
    fs::path emco_bare = o.work / "srv" / "emco.git", cli_bare = o.work / "srv" / "cli.git";
    make_bare(emco_bare, seed);
    make_bare(cli_bare, seed);
    std::unique_ptr<Daemon> daemon;
    std::string emco_url = "file://" + emco_bare.string(), cli_url = "file://" + cli_bare.string();
    if (o.remote == "daemon") {
      daemon = std::make_unique<Daemon>(o.work / "srv");
      emco_url = daemon->url("emco.git");
      cli_url = daemon->url("cli.git");
    }
    fs::path clone = o.work / "cli-clone";
    run({"git", "clone", "-q", cli_url, clone.string()});

    const std::string cache = (o.work / "ws" / ".emco" / "git").string();
    auto op1 = make_operation(o, emco_url, GitOpsOperationKind::instantiate, "1");
    auto op2 = make_operation(o, emco_url, GitOpsOperationKind::update, "2");

    // emco: plan + deliver (the cache starts empty: init + fetch are timed).
    GitDelivery delivery(cache);
    auto t0 = std::chrono::steady_clock::now();
    auto plan1 = plan_commits(op1);
    auto r1 = delivery.deliver(plan1.at(0).remote, plan1.at(0).request);
    double emco_first = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    auto plan2 = plan_commits(op2);
    auto r2 = delivery.deliver(plan2.at(0).remote, plan2.at(0).request);
    double emco_update = seconds_since(t0);

    // git CLI: same files (taken from the same plan), written by the script.
    fs::path staging1 = o.work / "staging-first", staging2 = o.work / "staging-update";
    materialize(plan1.at(0).request.changes, staging1);
    materialize(plan2.at(0).request.changes, staging2);
    t0 = std::chrono::steady_clock::now();
    run({"bash", o.script.string(), staging1.string(), clone.string(), plan1.at(0).request.message});
    double cli_first = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    run({"bash", o.script.string(), staging2.string(), clone.string(), plan2.at(0).request.message});
    double cli_update = seconds_since(t0);

    std::string emco_tree = run({"git", "-C", emco_bare.string(), "rev-parse", "main:clusters"});
    std::string cli_tree = run({"git", "-C", cli_bare.string(), "rev-parse", "main:clusters"});
    std::string diff = run({"git", "-C", emco_bare.string(), "diff", "--name-only", r1.commit_id, r2.commit_id});
    size_t update_files = static_cast<size_t>(std::count(diff.begin(), diff.end(), '\n'));
    size_t files = 0;
    for (const auto& [p, c] : plan1.at(0).request.changes) files += c.has_value();
    bool same = emco_tree == cli_tree && r1.changed && r2.changed;

    std::printf("gitops bench: %d apps x %d clusters x %d resources (+ status, Flux objects) over %s\n", o.apps,
                o.clusters, o.resources, o.remote == "file" ? "file://" : "git daemon");
    std::printf("  files in first commit        %zu\n", files);
    std::printf("  files changed by the update  %zu (%zu written by emco)\n", update_files, r2.files_written);
    std::printf("  %-14s %12s %12s\n", "", "first push", "update");
    std::printf("  %-14s %11.3fs %11.3fs\n", "emco (libgit2)", emco_first, emco_update);
    std::printf("  %-14s %11.3fs %11.3fs\n", "git CLI script", cli_first, cli_update);
    std::printf("  %-14s %11.1fx %11.1fx   (goal: 3x and 10x)\n", "speed-up", cli_first / emco_first, cli_update / emco_update);
    std::printf("  repository size (bare, as pushed): emco %lld KiB, git CLI %lld KiB; emco cache %lld KiB\n",
                dir_kib(emco_bare), dir_kib(cli_bare), dir_kib(cache));
    std::printf("  trees identical: %s\n", same ? "yes" : "NO");
    return same ? 0 : 1;
  } catch (const emco::Error& e) {
    std::cerr << "gitops_bench: error: " << e.message() << "\n";
    return 1;
  }
}
