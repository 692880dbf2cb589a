// Upstream EMCO's inputs through the emco binary on simulated clusters
// (issue 16): what upstream's services accept, emco accepts (warning where
// the input looks wrong), and a feature emco stores but cannot run says so
// at apply time, in `emco dig plan` and with exit code 9 (501 in emcoctl
// mode, document by document).

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/lifecycle/runtime.hpp"
#include "plugins/builtin.hpp"
#include "sim/sim.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Ran {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string doc(const std::string& anchor, const std::string& body = "") {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body + (body.empty() ? "" : "\n");
}

// A workspace directory for the binary, and simulated clusters edge1, edge2.
struct Bench {
  emco::sim::Simulator sim{[] {
    emco::sim::SimOptions o;
    o.names = {"edge1", "edge2"};
    o.clusters = 2;
    o.ready_delay_ms = 0;
    return o;
  }()};
  fs::path dir;

  Bench() {
    sim.start();
    dir = fs::temp_directory_path() / ("emco-compat-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    // Under ASan the binary's LSan must not fail it for the system libgit2's leaks.
    write("lsan.supp", "leak:libgit2.so\nleak:libpcre2-8.so\nleak:libssh2.so\nleak:libcrypto.so\n");
    REQUIRE(emco("init").code == 0);
  }
  ~Bench() {
    sim.stop();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }

  // Runs `emco ARGS` (ARGS as shell words) in the workspace directory.
  Ran run(const std::string& program, const std::string& args) const {
    const std::string cmd = "cd '" + dir.string() + "' && LSAN_OPTIONS=suppressions=lsan.supp EMCO_AUTO_RESUME=0 " +
                            program + " " + args + " > out.txt 2> err.txt";
    int status = std::system(cmd.c_str());
    Ran r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir / "out.txt");
    r.err = slurp(dir / "err.txt");
    return r;
  }
  Ran emco(const std::string& args) const { return run(std::string(EMCO_BINARY_DIR) + "/emco", args); }
  Ran emcoctl(const std::string& args) const { return run(std::string(EMCO_BINARY_DIR) + "/emco ctl", args); }
  Ran apply(const std::string& name, const std::string& text) const {
    write(name, text);
    return emco("apply -f " + name);
  }
};

#define REQUIRE_RAN(run, c)                                                        \
  do {                                                                             \
    const Ran ran_ = (run);                                                        \
    INFO("exit " << ran_.code << "\nstdout:\n" << ran_.out << "stderr:\n" << ran_.err); \
    REQUIRE(ran_.code == (c));                                                     \
  } while (0)

// Provider edge with both simulated clusters; project proj with admin cloud
// lc0 (instantiated) on them; composite app ca/v1 with a chart `app` when
// `with_app`; controller gac; generic placement intent gpi placing `app` on
// edge1.
std::string base_flow(const Bench& b, bool with_app) {
  std::string y = doc("cluster-providers", "metadata:\n  name: edge");
  for (const char* c : {"edge1", "edge2"})
    y += doc("cluster-providers/edge/clusters", std::string("metadata:\n  name: ") + c + "\nfile: " + b.sim.kubeconfig_path(c));
  y += doc("controllers", "metadata:\n  name: gac\nspec:\n  host: gac\n  port: 9033\n  type: action\n  priority: 1");
  y += doc("projects", "metadata:\n  name: proj");
  y += doc("projects/proj/logical-clouds", "metadata:\n  name: lc0\nspec:\n  level: \"0\"");
  for (const char* c : {"edge1", "edge2"})
    y += doc("projects/proj/logical-clouds/lc0/cluster-references",
             std::string("metadata:\n  name: ") + c + "\nspec:\n  clusterProvider: edge\n  cluster: " + c);
  y += doc("projects/proj/logical-clouds/lc0/instantiate");
  y += doc("projects/proj/composite-apps", "metadata:\n  name: ca\nspec:\n  compositeAppVersion: v1");
  if (with_app)
    y += doc("projects/proj/composite-apps/ca/v1/apps",
             "metadata:\n  name: hello\nfile: " + std::string(EMCO_SOURCE_DIR) + "/examples/quickstart/charts/hello");
  return y;
}

const std::string k_ca = "projects/proj/composite-apps/ca/v1";

std::string dig_docs(const std::string& dig, const std::string& profile, const std::string& extra_intent = "") {
  const std::string d = k_ca + "/deployment-intent-groups/" + dig;
  return doc(k_ca + "/deployment-intent-groups",
             "metadata:\n  name: " + dig + "\nspec:\n  compositeProfile: " + profile + "\n  version: r1\n  logicalCloud: lc0") +
         doc(d + "/intents", "metadata:\n  name: intent\nspec:\n  intent:\n    genericPlacementIntent: gpi" + extra_intent) +
         doc(d + "/generic-placement-intents", "metadata:\n  name: gpi");
}

// A plugin emco stores the intents of but cannot run, from the runtime (so
// this keeps testing something as controllers land); nullptr when none is left.
const emco::lifecycle::PluginInfo* some_stored_only_plugin() {
  for (const auto& p : emco::plugins::builtin_runtime().plugins)
    if (!p.runs) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("a GitOps cluster with upstream's placeholder file is registered", "[compat][gitops]") {
  Bench b;
  b.write("values.yaml", "ProjectName: proj\nClusterProvider: edge\n");
  std::string y = doc("cluster-providers", "metadata:\n  name: edge") +
                  doc("cluster-providers/edge/cluster-sync-objects",
                      "metadata:\n  name: gitrepo\nspec:\n  kv:\n  - url: file:///nowhere\n  - branch: main\n"
                      "  - userName: emco\n  - gitToken: t\n  - repoName: fleet") +
                  doc("cluster-providers/edge/clusters",
                      "metadata:\n  name: git1\nspec:\n  gitOps:\n    gitOpsType: fluxcd\n    gitOpsReferenceObject: gitrepo\n"
                      "    gitOpsResourceObject: gitrepo\nfile: values.yaml");
  auto r = b.apply("clusters.yaml", y);
  REQUIRE_RAN(r, 0);
  CHECK(has(r.out, "cluster-providers/edge/clusters/git1 created"));
  // Stored without the placeholder: delivered by git, nothing to read back with.
  auto check = b.emco("cluster check edge/git1");
  CHECK(has(check.err, "skipping edge+git1: a GitOps cluster has no kubeconfig"));
  // The same placeholder on a cluster without spec.gitOps is still a bad kubeconfig.
  auto bad = b.apply("bad.yaml", doc("cluster-providers/edge/clusters", "metadata:\n  name: direct\nfile: values.yaml"));
  REQUIRE_RAN(bad, 3);
  CHECK(has(bad.err, "bad.yaml:"));
  CHECK(has(bad.err, "defines no contexts"));
}

TEST_CASE("a level-1 logical cloud without a user is stored and refused at instantiate", "[compat][logical_cloud]") {
  Bench b;
  std::string y = doc("cluster-providers", "metadata:\n  name: edge") +
                  doc("cluster-providers/edge/clusters", "metadata:\n  name: edge1\nfile: " + b.sim.kubeconfig_path("edge1")) +
                  doc("projects", "metadata:\n  name: proj") +
                  doc("projects/proj/logical-clouds", "metadata:\n  name: lc1\nspec:\n  namespace: team") +
                  doc("projects/proj/logical-clouds/lc1/cluster-references",
                      "metadata:\n  name: edge1\nspec:\n  clusterProvider: edge\n  cluster: edge1") +
                  doc("projects/proj/logical-clouds/lc1/user-permissions",
                      "metadata:\n  name: perm\nspec:\n  namespace: team\n  apiGroups: ['']\n  resources: [pods]\n  verbs: [get]");
  auto r = b.apply("lc.yaml", y);
  REQUIRE_RAN(r, 0);
  CHECK(has(r.err, "emco: warning: lc.yaml:"));
  CHECK(has(r.err, "level-1 logical cloud 'lc1' has no spec.user.userName"));
  auto inst = b.apply("inst.yaml", doc("projects/proj/logical-clouds/lc1/instantiate"));
  REQUIRE_RAN(inst, 3);
  CHECK(has(inst.err, "has no spec.user.userName"));
  // Nothing reached the cluster and the cloud is still Created.
  CHECK(b.sim.get("edge1", "v1", "Namespace", "", "team").is_null());
  auto st = b.emco("get projects/proj/logical-clouds/lc1/status");
  CHECK(has(st.out + st.err, "Created"));
  // With the user it instantiates.
  auto fixed = b.apply("lc2.yaml", doc("projects/proj/logical-clouds",
                                       "metadata:\n  name: lc1\nspec:\n  namespace: team\n  user:\n    userName: alice") +
                                       doc("projects/proj/logical-clouds/lc1/instantiate"));
  REQUIRE_RAN(fixed, 0);
  CHECK_FALSE(b.sim.get("edge1", "v1", "Namespace", "", "team").is_null());
}

TEST_CASE("a group intent value rendered as <no value> is stored with a warning naming the key", "[compat][template]") {
  Bench b;
  REQUIRE_RAN(b.apply("base.yaml", base_flow(b, false)), 0);
  b.write("values.yaml", "PlacementIntent: gpi\n");
  const std::string dig = k_ca + "/deployment-intent-groups/dig";
  b.write("intents.yaml",
          doc(k_ca + "/composite-profiles", "metadata:\n  name: prof") +
              doc(k_ca + "/deployment-intent-groups",
                  "metadata:\n  name: dig\nspec:\n  compositeProfile: prof\n  version: r1\n  logicalCloud: lc0") +
              doc(dig + "/intents",
                  "metadata:\n  name: intent\nspec:\n  intent:\n    genericPlacementIntent: {{ .PlacementIntent }}\n"
                  "    gac: {{ .GacIntent }}"));
  auto r = b.emco("apply -f intents.yaml -v values.yaml");
  REQUIRE_RAN(r, 0);
  CHECK(has(r.err, "emco: warning: intents.yaml:"));
  CHECK(has(r.err, "spec.intent.gac rendered as '<no value>': the values have no 'GacIntent'"));
  auto got = b.emco("get " + dig + "/intents/intent -o json");
  REQUIRE_RAN(got, 0);
  CHECK(json::parse(got.out)["spec"]["intent"]["gac"] == "<no value>");
}

TEST_CASE("a DIG without composite profile or apps instantiates, as upstream's does", "[compat][dig]") {
  Bench b;
  REQUIRE_RAN(b.apply("base.yaml", base_flow(b, false)), 0);
  const std::string dig = k_ca + "/deployment-intent-groups/dig";
  auto r = b.apply("dig.yaml", dig_docs("dig", "nosuch"));
  REQUIRE_RAN(r, 0);
  CHECK(has(r.err, "composite profile 'proj/ca/v1/nosuch'"));
  CHECK(has(r.err, "does not exist; stored anyway"));
  auto plan = b.emco("dig plan proj/ca/v1/dig");
  CHECK(plan.code == 0);
  auto inst = b.apply("inst.yaml", doc(dig + "/approve") + doc(dig + "/instantiate"));
  REQUIRE_RAN(inst, 0);
  auto st = b.emco("dig status proj/ca/v1/dig -o json");
  REQUIRE_RAN(st, 0);
  CHECK(has(st.out, "Instantiated"));
  auto term = b.apply("term.yaml", doc(dig + "/terminate"));
  REQUIRE_RAN(term, 0);
}

TEST_CASE("a DIG whose composite profile is missing fails at instantiate when an app needs it", "[compat][dig]") {
  Bench b;
  REQUIRE_RAN(b.apply("base.yaml", base_flow(b, true)), 0);
  const std::string dig = k_ca + "/deployment-intent-groups/dig";
  REQUIRE_RAN(b.apply("dig.yaml", dig_docs("dig", "nosuch") +
                                      doc(dig + "/generic-placement-intents/gpi/app-intents",
                                          "metadata:\n  name: hello\nspec:\n  app: hello\n  intent:\n    allOf:\n"
                                          "    - clusterProvider: edge\n      cluster: edge1")),
              0);
  auto inst = b.apply("inst.yaml", doc(dig + "/approve") + doc(dig + "/instantiate"));
  REQUIRE_RAN(inst, 4);
  CHECK(has(inst.err, "composite profile 'projects/proj/composite-apps/ca/v1/composite-profiles/nosuch' does not exist; app 'hello' needs its app profile from it"));
  CHECK(b.sim.list("edge1", "v1", "ConfigMap", "default").empty());
}

TEST_CASE("the list of features emco stores but cannot run is what really has no controller", "[compat][unsupported]") {
  const auto& rt = emco::plugins::builtin_runtime();
  auto stored_only = emco::lifecycle::stored_only_features(rt);
  for (const auto& p : rt.plugins) {
    // Plugins with intent kinds: runs exactly when a controller of theirs is
    // registered, a planner of the lifecycle of the resources its kinds hang
    // under (ncm), an owner of their lifecycle operations (ca-certs), or
    // hooks around DIG operations (tac, hooks), or the runtime's rollout
    // strategies (rollout).
    bool has_kinds = false;
    for (const auto& k : emco::resource::all_kinds())
      for (const auto& s : p.services) has_kinds = has_kinds || k.service == s;
    if (!has_kinds) continue;
    // Registered under its name, a name starting with it (hpa-placement-controller-1) or a service's.
    bool implemented = false;
    for (const auto& name : rt.controllers.names())
      implemented = implemented || name == p.name || name.rfind(p.name + "-", 0) == 0 ||
                    std::find(p.services.begin(), p.services.end(), name) != p.services.end();
    for (const auto& planner : rt.resource_planners)
      for (const auto& input : planner->inputs())
        for (const auto& s : p.services)
          implemented = implemented || emco::resource::kind(input).service == s;
    for (const auto& owner : rt.operation_owners) implemented = implemented || owner->name() == p.name;
    for (const auto& hooks : rt.hooks) implemented = implemented || hooks->name() == p.name;
    implemented = implemented || (rt.rollouts && p.name == "rollout");
    INFO("plugin " << p.name);
    CHECK(p.runs == implemented);
    CHECK((std::find(stored_only.begin(), stored_only.end(), p.name) != stored_only.end()) == !p.runs);
  }
}

TEST_CASE("intents of a feature emco cannot run warn at apply, fail the plan with exit 9, 501 in emcoctl mode",
          "[compat][unsupported]") {
  const emco::lifecycle::PluginInfo* p = some_stored_only_plugin();
  if (!p) {
    WARN("every plugin runs: nothing is stored without a controller");
    return;
  }
  // One of its kinds directly under a DIG whose spec needs nothing.
  const emco::resource::Kind* kind = nullptr;
  for (const auto& k : emco::resource::all_kinds()) {
    if (k.parent != "deploymentIntentGroup" || emco::lifecycle::stored_only_plugin(emco::plugins::builtin_runtime(), k) != p)
      continue;
    bool required = false;
    for (const auto& f : k.spec.fields) required = required || f.required;
    if (!required) kind = &k;
  }
  Bench b;
  REQUIRE_RAN(b.apply("base.yaml", base_flow(b, false)), 0);
  const std::string dig = k_ca + "/deployment-intent-groups/dig";
  std::string y = doc("controllers", "metadata:\n  name: " + p->name + "\nspec:\n  host: x\n  port: 9000\n  type: action\n  priority: 2") +
                  doc(k_ca + "/composite-profiles", "metadata:\n  name: prof") +
                  dig_docs("dig", "prof", "\n    " + p->name + ": its-intent");
  if (kind) y += doc(dig + "/" + kind->collection, "metadata:\n  name: its-intent");
  auto r = b.apply("intents.yaml", y);
  REQUIRE_RAN(r, 0);
  CHECK(has(r.err, "emco: warning: intents.yaml:"));
  CHECK(has(r.err, "controller '" + p->name + "' is registered, but emco has no " + p->name + " controller yet"));
  if (kind) CHECK(has(r.err, "emco: warning: " + p->name + " intents are stored, but emco has no " + p->name +
                                 " controller yet; instantiate will fail\n"));

  // The plan says so before anything is delivered, with its own exit code.
  auto plan = b.emco("dig plan proj/ca/v1/dig");
  REQUIRE_RAN(plan, 9);
  CHECK(has(plan.err, "emco has no " + p->name + " controller yet"));
  if (kind) CHECK(has(plan.err, "emco: warning: " + p->name + " intents are stored"));
  auto inst = b.apply("inst.yaml", doc(dig + "/approve") + doc(dig + "/instantiate"));
  REQUIRE_RAN(inst, 9);

  // emcoctl mode: each document on its own; the operation emco cannot run is
  // 501, an anchor emco does not know 404, and the documents after them run.
  b.write("ctl.yaml", doc(dig + "/instantiate") + doc("projects/proj/workflow-intents", "metadata:\n  name: w") +
                          doc("projects", "metadata:\n  name: after"));
  auto ctl = b.emcoctl("apply -f ctl.yaml");
  REQUIRE_RAN(ctl, 0);
  CHECK(has(ctl.out, "deployment-intent-groups/dig/instantiate\nResponse Code: 501\n"));
  CHECK(has(ctl.out, "projects/proj/workflow-intents\nResponse Code: 404\n"));
  CHECK(has(ctl.out, "projects\nResponse Code: 201\n"));
  REQUIRE_RAN(b.emco("get projects/after"), 0);
}

TEST_CASE("lifecycle anchors emco does not implement exit 9 natively and 501 in emcoctl mode", "[compat][unsupported]") {
  Bench b;
  REQUIRE_RAN(b.apply("base.yaml", base_flow(b, false)), 0);
  // A service's instantiate: an upstream anchor emco stores the resource of
  // but does not run.
  REQUIRE_RAN(b.apply("service.yaml", doc("projects/proj/services", "metadata:\n  name: s1\nspec:\n  digs: []")), 0);
  auto r = b.apply("apply.yaml", doc("projects/proj/services/s1/instantiate"));
  REQUIRE_RAN(r, 9);
  CHECK(has(r.err, "apply.yaml:"));
  CHECK(has(r.err, "is not implemented in emco yet"));
  auto ctl = b.emcoctl("apply -f apply.yaml");
  REQUIRE_RAN(ctl, 0);
  CHECK(has(ctl.out, "Response Code: 501\n"));
}

TEST_CASE("upstream's status scripts poll emcoctl get .../status with sed and jq", "[compat][emcoctl]") {
  Bench b;
  REQUIRE_RAN(b.apply("base.yaml", base_flow(b, true)), 0);
  const std::string dig = k_ca + "/deployment-intent-groups/dig";
  REQUIRE(std::system(("mkdir -p '" + (b.dir / "profile").string() + "' && printf 'version: v1\\ntype:\\n  values: "
                       "\"override_values.yaml\"\\n' > '" + (b.dir / "profile/manifest.yaml").string() + "' && : > '" +
                       (b.dir / "profile/override_values.yaml").string() + "'")
                          .c_str()) == 0);
  std::string y = doc(k_ca + "/composite-profiles", "metadata:\n  name: prof") +
                  doc(k_ca + "/composite-profiles/prof/profiles", "metadata:\n  name: hello-profile\nspec:\n  app: hello\nfile: profile") +
                  dig_docs("dig", "prof") +
                  doc(dig + "/generic-placement-intents/gpi/app-intents",
                      "metadata:\n  name: hello\nspec:\n  app: hello\n  intent:\n    allOf:\n    - clusterProvider: edge\n"
                      "      cluster: edge1") +
                  doc(dig + "/approve") + doc(dig + "/instantiate");
  b.write("deploy.yaml", y);
  auto applied = b.emcoctl("apply -f deploy.yaml");
  REQUIRE_RAN(applied, 0);
  CHECK_FALSE(has(applied.out, "Response Code: 4"));
  CHECK_FALSE(has(applied.out, "Response Code: 5"));
  // _status.sh, verbatim but for the binary's name.
  const std::string emcoctl = std::string(EMCO_BINARY_DIR) + "/emco ctl";
  auto status_of = [&](const std::string& anchor) {
    return b.run("", emcoctl + " get " + anchor + " | sed -z 's/.*Response://' | jq -r .deployedStatus").out;
  };
  CHECK(status_of("projects/proj/logical-clouds/lc0/status") == "Instantiated\n");
  CHECK(status_of(dig + "/status?status=deployed") == "Instantiated\n");
  // emcoctl get -f GETs a status anchor in a file like any other anchor.
  b.write("status.yaml", "---\nversion: emco/v2\nresourceContext:\n  anchor: " + dig + "/status?status=deployed\n");
  auto got = b.emcoctl("get -f status.yaml");
  REQUIRE_RAN(got, 0);
  CHECK(has(got.out, "GET  --> URL: http://localhost:9015/v2/" + dig + "/status?status=deployed\nResponse Code: 200\n"));
  CHECK(b.run("", emcoctl + " get -f status.yaml | sed -z 's/.*Response://' | jq -r .deployedStatus").out == "Instantiated\n");
  // delete.sh: the same files deleted in reverse, the DIG terminated first.
  auto deleted = b.emcoctl("delete -f deploy.yaml");
  REQUIRE_RAN(deleted, 0);
  CHECK(has(deleted.out, "POST  --> URL: http://localhost:9015/v2/" + dig + "/terminate\nResponse Code: 202\n"));
  CHECK(has(deleted.out, "DELETE  --> URL: http://localhost:9015/v2/" + dig + "\nResponse Code: 204\n"));
  auto gone = b.emcoctl("get " + dig);
  CHECK(has(gone.out, "Response Code: 404"));
  // An anchor outside emcoctl's roots has no service: emcoctl stops there.
  b.write("roots.yaml", doc("projects", "metadata:\n  name: before") + doc("nonsense/things", "metadata:\n  name: x") +
                            doc("projects", "metadata:\n  name: after"));
  auto stopped = b.emcoctl("apply -f roots.yaml");
  REQUIRE_RAN(stopped, 0);
  CHECK(has(stopped.out, "projects\nResponse Code: 201\n"));
  CHECK(has(stopped.out, "Apply:  nonsense/things Error:  Invalid baseUrl: \n"));
  CHECK(b.emco("get projects/before").code == 0);
  CHECK(b.emco("get projects/after").code == 4);
}
