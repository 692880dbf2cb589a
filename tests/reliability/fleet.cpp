#include "tests/reliability/fleet.hpp"
#include "tests/test_store.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

extern char** environ;

namespace emco::test {

using nlohmann::json;
using namespace std::chrono;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string two(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d", i);
  return buf;
}

std::string doc(const std::string& anchor, const std::string& rest = "") {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + rest;
}

}  // namespace

int effort(const char* name, int full, int reduced) {
  const char* v = std::getenv(name);
  if (v && *v) return std::max(1, std::atoi(v));
#ifdef __SANITIZE_ADDRESS__
  constexpr bool slow_processes = true;
#else
  constexpr bool slow_processes = false;
#endif
  return slow_processes || testing_postgresql() ? reduced : full;
}

Exit Proc::wait() {
  if (!m_reaped) {
    while (::waitpid(m_pid, &m_status, 0) < 0 && errno == EINTR) {
    }
    m_reaped = true;
  }
  Exit e;
  e.code = WIFEXITED(m_status) ? WEXITSTATUS(m_status) : 128 + (WIFSIGNALED(m_status) ? WTERMSIG(m_status) : 0);
  e.out = slurp(m_out);
  e.err = slurp(m_err);
  return e;
}

bool Proc::wait_until(steady_clock::time_point deadline, Exit& exit) {
  for (;;) {
    if (!m_reaped && ::waitpid(m_pid, &m_status, WNOHANG) == m_pid) m_reaped = true;
    if (m_reaped) {
      exit = wait();
      return true;
    }
    if (steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
}

void Proc::kill9() {
  if (!m_reaped) ::kill(m_pid, SIGKILL);
}

Fleet::Fleet(int clusters, int apps, Shape shape) : m_clusters(clusters), m_apps(apps), m_shape(shape) {
  std::string pattern = (fs::temp_directory_path() / "emco-rel-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  m_root = fs::canonical(pattern);

  sim::SimOptions so;
  so.clusters = clusters;
  for (int i = 0; i < clusters; ++i) so.names.push_back("c" + two(i));
  so.dir = (m_root / "sim").string();
  so.ready_delay_ms = 50;
  m_sim = std::make_unique<sim::Simulator>(so);
  m_sim->start();

  std::ostringstream y;
  y << doc("cluster-providers", "metadata:\n  name: p\n");
  for (const auto& n : so.names) {
    y << doc("cluster-providers/p/clusters", "metadata:\n  name: " + n + "\nfile: " + m_sim->kubeconfig_path(n) + "\n");
    y << doc("cluster-providers/p/clusters/" + n + "/labels", "clusterLabel: edge\n");
  }
  std::vector<std::string> members = so.names;
  if (shape.gitops) {
    REQUIRE(std::system(("git init -q --bare -b main '" + (m_root / "fleet.git").string() + "'").c_str()) == 0);
    y << doc("cluster-providers/p/cluster-sync-objects", "metadata:\n  name: repo\nspec:\n  kv:\n  - url: file://" +
                                                             (m_root / "fleet.git").string() +
                                                             "\n  - branch: main\n  - userName: emco\n  - repoName: fleet\n");
    y << doc("cluster-providers/p/cluster-sync-objects", "metadata:\n  name: timing\nspec:\n  kv:\n  - timeOut: \"60\"\n");
    y << doc("cluster-providers/p/clusters",
             "metadata:\n  name: g00\nspec:\n  gitOps:\n    gitOpsType: fluxcd\n    gitOpsReferenceObject: repo\n"
             "    gitOpsResourceObject: timing\n");
    y << doc("cluster-providers/p/clusters/g00/labels", "clusterLabel: edge\n");
    members.push_back("g00");
  }
  y << doc("projects", "metadata:\n  name: proj\n");
  y << doc("projects/proj/logical-clouds", "metadata:\n  name: lc\nspec:\n  level: \"0\"\n");
  for (const auto& n : members)
    y << doc("projects/proj/logical-clouds/lc/cluster-references",
             "metadata:\n  name: " + n + "\nspec:\n  clusterProvider: p\n  cluster: " + n + "\n");
  y << doc("projects/proj/logical-clouds/lc/instantiate");
  if (shape.level1_cloud) {
    y << doc("projects/proj/logical-clouds",
             "metadata:\n  name: lc1\nspec:\n  level: \"1\"\n  namespace: lc1-ns\n  user:\n    userName: lc1-user\n"
             "    type: certificate\n");
    y << doc("projects/proj/logical-clouds/lc1/user-permissions",
             "metadata:\n  name: work\nspec:\n  namespace: lc1-ns\n  apiGroups: [\"\"]\n  resources: [configmaps]\n"
             "  verbs: [get, list, create, update, delete]\n");
    y << doc("projects/proj/logical-clouds/lc1/cluster-quotas", "metadata:\n  name: small\nspec:\n  pods: \"20\"\n");
    for (const auto& n : members)
      y << doc("projects/proj/logical-clouds/lc1/cluster-references",
               "metadata:\n  name: " + n + "\nspec:\n  clusterProvider: p\n  cluster: " + n + "\n");
  }
  y << doc("projects/proj/composite-apps", "metadata:\n  name: ca\nspec:\n  compositeAppVersion: v1\n");
  y << doc("projects/proj/composite-apps/ca/v1/composite-profiles", "metadata:\n  name: prof\n");
  for (int a = 0; a < apps; ++a) {
    std::string app = "a" + two(a);
    write("charts/" + app + "/Chart.yaml", "apiVersion: v2\nname: " + app + "\nversion: 0.1.0\n");
    write("charts/" + app + "/values.yaml", "v: v1\n");
    write("charts/" + app + "/templates/cm.yaml",
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-" + app +
              "\ndata:\n  v: {{ .Values.v | quote }}\n");
    if (shape.refused_object && a == 0)
      write("charts/" + app + "/templates/widget.yaml",
            "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: {{ .Release.Name }}-widget\n");
    y << doc("projects/proj/composite-apps/ca/v1/apps", "metadata:\n  name: " + app + "\nfile: charts/" + app + "\n");
    y << doc("projects/proj/composite-apps/ca/v1/composite-profiles/prof/profiles",
             "metadata:\n  name: " + app + "-profile\nspec:\n  app: " + app + "\nfile: profile\n");
  }
  write("profile/manifest.yaml", "version: v1\ntype:\n  values: \"override_values.yaml\"\n");
  write("profile/override_values.yaml", "v: v1\n");
  for (const char* d : {"dig1", "dig2"}) {
    std::string base = "projects/proj/composite-apps/ca/v1/deployment-intent-groups/" + std::string(d);
    y << doc("projects/proj/composite-apps/ca/v1/deployment-intent-groups",
             "metadata:\n  name: " + std::string(d) + "\nspec:\n  compositeProfile: prof\n  version: " + d +
                 "\n  logicalCloud: lc\n");
    y << doc(base + "/intents", "metadata:\n  name: intent\nspec:\n  intent:\n    genericPlacementIntent: gpi\n");
    y << doc(base + "/generic-placement-intents", "metadata:\n  name: gpi\n");
    for (int a = 0; a < apps; ++a)
      y << doc(base + "/generic-placement-intents/gpi/app-intents",
               "metadata:\n  name: a" + two(a) + "-placement\nspec:\n  app: a" + two(a) +
                   "\n  intent:\n    allOf:\n      - clusterProvider: p\n        clusterLabel: edge\n");
    y << doc(base + "/approve");
  }
  write("setup.yaml", y.str());
  const std::string store = fresh_store();
  // Unencrypted on both backends (tests/store/vault_test.cpp covers encryption).
  Exit init = store.empty() ? emco({"init", m_root.string()})
                            : emco({"init", m_root.string(), "--store", store, "--no-encrypt"});
  INFO(init.err);
  REQUIRE(init.code == 0);
  Exit setup = emco({"apply", "-f", "setup.yaml"});
  INFO(setup.err);
  REQUIRE(setup.code == 0);
}

Fleet::~Fleet() {
  m_sim->stop();
  std::error_code ec;
  fs::remove_all(m_root, ec);
}

void Fleet::write(const fs::path& rel, const std::string& text) const {
  fs::path p = m_root / rel;
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

Proc Fleet::start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  std::string tag = std::to_string(++m_runs);
  fs::path out = m_root / ("run-" + tag + ".out"), err = m_root / ("run-" + tag + ".err");
  std::vector<std::string> argv_s = {(fs::path(EMCO_BINARY_DIR) / "emco").string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::map<std::string, std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  vars["EMCO_WORKSPACE"] = m_root.string();
  // The ASan build: the system's libgit2 keeps allocations until exit.
  vars.try_emplace("LSAN_OPTIONS", "suppressions=" EMCO_SOURCE_DIR "/tests/lsan.supp");
  for (const auto& [k, v] : env) vars[k] = v;
  std::vector<std::string> env_s;
  for (const auto& [k, v] : vars) env_s.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addchdir_np(&fa, m_root.c_str());
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0);
  return Proc(pid, out, err);
}

Exit Fleet::emco(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  return start(args, env).wait();
}

void Fleet::run_ok(const std::vector<std::string>& args) {
  Exit e = emco(args, {{"EMCO_AUTO_RESUME", "0"}});
  INFO("emco " << args.at(0) << " " << (args.size() > 1 ? args[1] : "") << ": " << e.out << e.err);
  REQUIRE(e.code == 0);
}

std::map<std::string, std::string> shim_preload_env() {
  std::map<std::string, std::string> env = {{"LD_PRELOAD", EMCO_FAULT_SHIM}};
#ifdef __SANITIZE_ADDRESS__
  // The shim comes before the sanitizer runtime in the preload order.
  const char* asan = std::getenv("ASAN_OPTIONS");
  env["ASAN_OPTIONS"] = std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "verify_asan_link_order=0";
#endif
  return env;
}

std::map<std::string, std::string> Fleet::fault_env(const std::string& mode, long at, bool sticky) const {
  std::map<std::string, std::string> env = shim_preload_env();
  env.insert({{"EMCO_AUTO_RESUME", "0"},
              {"EMCO_FAULT_MODE", mode},
              {"EMCO_FAULT_AT", std::to_string(at)},
              {"EMCO_FAULT_STICKY", sticky ? "1" : "0"},
              {"EMCO_FAULT_STEPS", (m_root / "steps").string()}});
  return env;
}

std::set<std::string> Fleet::held(const std::string& cluster) const {
  std::set<std::string> out;
  for (const auto& o : m_sim->list(cluster, "v1", "ConfigMap"))
    if (o["metadata"].value("labels", json::object()).contains("emco/deployment-id"))
      out.insert(o["metadata"]["name"].get<std::string>() + "=" + o.value("data", json::object()).value("v", ""));
  return out;
}

std::map<std::string, std::set<std::string>> Fleet::snapshot() const {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& c : m_sim->cluster_names()) out[c] = held(c);
  return out;
}

json Fleet::status(const std::string& dig) {
  Exit e = emco({"dig", "status", Fleet::dig(dig), "-o", "json", "-o", "summary"});
  INFO(e.err);
  REQUIRE(e.code == 0);
  return json::parse(e.out);
}

std::string Fleet::status_line(const std::string& dig) {
  json s = status(dig);
  std::string line = s.value("deployedStatus", "");
  if (s.contains("deployedCounts"))
    for (const auto& [k, v] : s["deployedCounts"].items()) line += " " + k + "=" + v.dump();
  return line;
}

std::string Fleet::state(const std::string& dig) {
  Exit e = emco({"dig", "history", Fleet::dig(dig), "-o", "json"});
  INFO(e.err);
  REQUIRE(e.code == 0);
  json si = json::parse(e.out);
  return si.value("actions", json::array()).back().value("state", "");
}

std::string Fleet::integrity() {
  std::string cmd = integrity_command(m_root);
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string Fleet::git_tree() const {
  auto git = [&](const std::string& args) {
    std::string cmd = "git -C '" + (m_root / "fleet.git").string() + "' " + args + " 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    ::pclose(p);
    return out;
  };
  // AppContext ids are random: each becomes "<id>", and the files are
  // sorted again after that (the ids decided their order).
  auto without_ids = [](const std::string& text) {
    std::string out;
    for (size_t i = 0; i < text.size();) {
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      if (j - i >= 12) out += "<id>";
      else if (j > i) out.append(text, i, j - i);
      else out += text[j++];
      i = j;
    }
    return out;
  };
  std::multiset<std::string> files;
  std::istringstream paths(git("ls-tree -r --name-only main"));
  for (std::string path; std::getline(paths, path);)
    files.insert(without_ids(path + "\n" + git("show 'main:" + path + "'")));
  std::string out;
  for (const auto& f : files) out += f + "\n";
  return out;
}

std::set<std::string> Fleet::cloud_objects() const {
  static const std::vector<std::pair<std::string, std::string>> kinds = {
      {"v1", "Namespace"},
      {"rbac.authorization.k8s.io/v1", "Role"},
      {"rbac.authorization.k8s.io/v1", "RoleBinding"},
      {"v1", "ResourceQuota"},
      {"certificates.k8s.io/v1", "CertificateSigningRequest"}};
  std::set<std::string> out;
  for (const auto& c : m_sim->cluster_names())
    for (const auto& [api, kind] : kinds)
      for (const auto& o : m_sim->list(c, api, kind))
        out.insert(c + " " + kind + " " + o["metadata"].value("namespace", "") + "/" +
                   o["metadata"].value("name", ""));
  return out;
}

size_t Fleet::queued() {
  // Without the background resume: looking must not start work.
  Exit e = emco({"status", "-o", "json"}, {{"EMCO_AUTO_RESUME", "0"}});
  INFO(e.err);
  REQUIRE(e.code == 0);
  return json::parse(e.out).value("queued", json::array()).size();
}

}  // namespace emco::test
