// `emco dig diff --live`, `emco dig status --drift` and `emco dig sync
// --repair` on examples/quickstart delivered to three simulated clusters,
// the drift made with the real kubectl (kubectl edit, patch, delete, label,
// create) and `emco sim fault`; and lifecycle::drift::compare on objects the
// way the API server keeps them (managedFields, server defaults).

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/lifecycle/drift.hpp"
#include "sim/sim.hpp"
#include "tests/example_fleet.hpp"
#include "tests/shell.hpp"

using nlohmann::json;
namespace fs = std::filesystem;
namespace drift = emco::lifecycle::drift;

namespace {

using emco::test::find_kubectl;
using emco::test::Ran;
using emco::test::sh;

const std::string k_dig = "quickstart/hello-app/v1/hello-dig";

struct Fleet : emco::test::ExampleFleet {
  Fleet() : ExampleFleet("quickstart", "drift", emco::test::edge_clusters(3)) {
    use_sim_clusters();
    init_and_apply({"01-clusters.yaml", "02-project.yaml", "03-app.yaml", "04-deploy.yaml"});
  }
  Ran kubectl(const std::string& bin, const std::string& cluster, const std::string& args) {
    return sh(dir, "HOME='" + dir.string() + "' " + bin + " --kubeconfig " + sim->kubeconfig_path(cluster) + " " + args);
  }
  json diff_json(const std::string& flags, int expect) {
    auto r = run("dig diff --live " + k_dig + " -o json " + flags + " 2>/dev/null");
    INFO(r.out);
    REQUIRE(r.code == expect);
    return json::parse(r.out);
  }
};

const json* find_object(const json& report, const std::string& cluster, const std::string& resource) {
  for (const auto& o : report["objects"])
    if (o["cluster"] == cluster && o["resource"] == resource) return &o;
  return nullptr;
}

const json* find_field(const json& object, const std::string& path) {
  for (const auto& f : object["fields"])
    if (f["path"] == path) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("dig diff --live: kubectl's edits and deletes are drift, its own labels and server defaults are not, "
          "and dig sync --repair restores the plan",
          "[drift][sim][kubectl]") {
  const std::string kubectl = find_kubectl();
  if (kubectl.empty()) {
    WARN("SKIPPED: no kubectl binary");
    return;
  }
  Fleet f;
  // Just delivered: nothing drifted, although the server added defaults
  // (the Service's clusterIP and type, the port's protocol) emco never set.
  json live_svc = f.sim->get("edge1", "v1", "Service", "default", "r1-hello");
  REQUIRE(live_svc.is_object());
  CHECK(live_svc["spec"].contains("clusterIP"));
  CHECK(live_svc["spec"]["ports"][0]["protocol"] == "TCP");
  auto clean = f.run("dig diff --live " + k_dig);
  INFO(clean.out);
  CHECK(clean.code == 0);
  CHECK(clean.out.find("No drift: 9 objects on 3 clusters match the plan.") != std::string::npos);

  // edge1: kubectl edit changes the ConfigMap's message, kubectl patch the replicas.
  auto edit = f.kubectl("EDITOR=\"sed -i 's/^  message: .*/  message: edited by hand/'\" " + kubectl, "edge1",
                        "edit configmap r1-hello -n default");
  INFO(edit.out);
  REQUIRE(edit.code == 0);
  REQUIRE(f.kubectl(kubectl, "edge1", "patch deployment r1-hello -n default --type merge -p '{\"spec\":{\"replicas\":5}}'").code == 0);
  // edge2: the Service deleted behind emco's back.
  REQUIRE(f.kubectl(kubectl, "edge2", "delete service r1-hello -n default").code == 0);
  // edge3: a label emco does not manage, and a stray object with this DIG's label.
  REQUIRE(f.kubectl(kubectl, "edge3", "label configmap r1-hello -n default team=payments").code == 0);
  json cm = f.sim->get("edge3", "v1", "ConfigMap", "default", "r1-hello");
  const std::string deployment_id = cm["metadata"]["labels"]["emco/deployment-id"];
  REQUIRE(f.kubectl(kubectl, "edge3", "create configmap stray -n default --from-literal=a=b").code == 0);
  REQUIRE(f.kubectl(kubectl, "edge3", "label configmap stray -n default emco/deployment-id=" + deployment_id).code == 0);

  json report = f.diff_json("", 2);
  CHECK(report["drift"] == true);
  CHECK(report["clusters"].size() == 3);
  for (const auto& c : report["clusters"]) CHECK(c["reachable"] == true);
  CHECK(report["objects"].size() == 3);
  const json* dep = find_object(report, "edge+edge1", "r1-hello+Deployment");
  REQUIRE(dep);
  CHECK((*dep)["drift"] == "changed");
  const json* replicas = find_field(*dep, ".spec.replicas");
  REQUIRE(replicas);
  CHECK((*replicas)["manager"] == "kubectl-patch");
  CHECK((*replicas)["operation"] == "Update");
  CHECK((*replicas)["planned"] == 2);
  CHECK((*replicas)["live"] == 5);
  CHECK((*dep)["fields"].size() == 1);
  const json* cmd = find_object(report, "edge+edge1", "r1-hello+ConfigMap");
  REQUIRE(cmd);
  const json* message = find_field(*cmd, ".data.message");
  REQUIRE(message);
  CHECK((*message)["manager"] == "kubectl-edit");
  CHECK((*message)["live"] == "edited by hand");
  CHECK((*message)["planned"] == "hello from the emco quickstart profile");
  const json* svc = find_object(report, "edge+edge2", "r1-hello+Service");
  REQUIRE(svc);
  CHECK((*svc)["drift"] == "deleted");
  CHECK_FALSE(find_object(report, "edge+edge3", "r1-hello+ConfigMap"));  // a label of its own: no drift

  // The table names who changed what.
  auto table = f.run("dig diff --live " + k_dig);
  INFO(table.out);
  CHECK(table.code == 2);
  CHECK(table.out.find(".spec.replicas: planned 2, live 5 (kubectl-patch)") != std::string::npos);
  CHECK(table.out.find("- deleted r1-hello+Service") != std::string::npos);
  CHECK(table.out.find("Drift: 2 changed, 1 deleted, 0 extra on 2 of 3 clusters.") != std::string::npos);

  // --extra finds the stray object on edge3.
  json with_extra = f.diff_json("--extra", 2);
  const json* stray = find_object(with_extra, "edge+edge3", "stray+ConfigMap");
  REQUIRE(stray);
  CHECK((*stray)["drift"] == "extra");
  CHECK((*stray)["app"] == "hello");

  // dig status --drift: per cluster and resource.
  auto status = f.run("dig status " + k_dig + " --drift -o json");
  INFO(status.out);
  REQUIRE(status.code == 0);
  json s = json::parse(status.out);
  CHECK(s["driftStatus"] == "Drifted");
  CHECK(s["driftCounts"] == json{{"changed", 2}, {"deleted", 1}});
  std::map<std::string, std::string> by_cluster;
  for (const auto& c : s["apps"][0]["clusters"]) by_cluster[c["cluster"]] = c["drift"];
  CHECK(by_cluster == std::map<std::string, std::string>{{"edge1", "Drifted"}, {"edge2", "Drifted"}, {"edge3", "InSync"}});
  auto status_table = f.run("dig status " + k_dig + " --drift");
  INFO(status_table.out);
  CHECK(status_table.out.find("DRIFT") != std::string::npos);
  CHECK(status_table.out.find("drift: Drifted  changed 2  deleted 1") != std::string::npos);

  // Repair: only the drifted objects are written; the stray one goes with --prune-extra.
  auto writes_before = f.sim->writes_served("edge3");
  auto repair = f.run("dig sync --repair --prune-extra " + k_dig);
  INFO(repair.out);
  CHECK(repair.code == 0);
  CHECK(repair.out.find("Repaired: 2 re-applied, 1 recreated, 1 extra deleted.") != std::string::npos);
  CHECK(f.sim->writes_served("edge3") == writes_before);  // a delete is not a write; nothing re-applied there
  CHECK(f.sim->get("edge1", "apps/v1", "Deployment", "default", "r1-hello")["spec"]["replicas"] == 2);
  CHECK(f.sim->get("edge1", "v1", "ConfigMap", "default", "r1-hello")["data"]["message"] == "hello from the emco quickstart profile");
  CHECK(f.sim->get("edge2", "v1", "Service", "default", "r1-hello").is_object());
  CHECK(f.sim->get("edge3", "v1", "ConfigMap", "default", "stray").is_null());
  CHECK(f.sim->get("edge3", "v1", "ConfigMap", "default", "r1-hello")["metadata"]["labels"]["team"] == "payments");
  json after = f.diff_json("--extra", 0);
  CHECK(after["objects"].empty());
  // The repair is recorded with the running revision.
  json s2 = json::parse(f.run("dig status " + k_dig + " -o json").out);
  REQUIRE(s2["driftRepairs"].size() == 1);
  CHECK(s2["driftRepairs"][0]["repaired"].size() == 4);
}

TEST_CASE("dig diff --live: an unreachable cluster is reported and exits 7", "[drift][sim]") {
  Fleet f;
  auto fault = f.run("sim fault edge2 --refuse --dir sim");
  INFO(fault.out);
  REQUIRE(fault.code == 0);
  ::usleep(1200 * 1000);  // the simulator re-reads faults.json within half a second
  json report = f.diff_json("", 7);
  CHECK(report["drift"] == false);
  for (const auto& c : report["clusters"]) {
    INFO(c.dump());
    CHECK(c["reachable"] == (c["cluster"] != "edge+edge2"));
    if (c["cluster"] == "edge+edge2") CHECK(c["unreachable"] == true);
  }
  auto table = f.run("dig diff --live " + k_dig);
  INFO(table.out);
  CHECK(table.code == 7);
  CHECK(table.out.find("not read: edge+edge2: ") != std::string::npos);
  CHECK(table.out.find("No drift: 6 objects on 2 clusters match the plan (1 cluster not read).") != std::string::npos);
  auto status = f.run("dig status " + k_dig + " --drift -o json");
  REQUIRE(status.code == 0);
  json s = json::parse(status.out);
  CHECK(s["driftStatus"] == "Unknown");
  // A repair reaches what it can and keeps the unreachable exit status.
  auto repair = f.run("dig sync --repair " + k_dig);
  INFO(repair.out);
  CHECK(repair.code == 7);
  auto no_flag = f.run("dig sync " + k_dig);
  INFO(no_flag.out);
  CHECK(no_flag.code == 64);
  CHECK(no_flag.out.find("'emco dig sync' needs --repair") != std::string::npos);
  for (const auto& c : s["apps"][0]["clusters"])
    if (c["cluster"] == "edge2") CHECK(c["drift"] == "Unreachable");
}

TEST_CASE("drift::compare: only the plan's fields count, and the manager owning a field now is named", "[drift]") {
  const std::string planned = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 80
)";
  json live = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata",
       {{"name", "web"},
        {"namespace", "default"},
        {"resourceVersion", "7"},
        {"labels", {{"app", "web"}, {"team", "x"}}},
        {"managedFields",
         json::array({{{"manager", "emco"}, {"operation", "Apply"}, {"apiVersion", "apps/v1"},
                       {"fieldsV1",
                        {{"f:metadata", {{"f:labels", {{"f:app", json::object()}}}}},
                         {"f:spec",
                          {{"f:selector", json::object()},
                           {"f:template",
                            {{"f:metadata", {{"f:labels", {{"f:app", json::object()}}}}},
                             {"f:spec",
                              {{"f:containers",
                                {{"k:{\"name\":\"web\"}",
                                  {{".", json::object()},
                                   {"f:name", json::object()},
                                   {"f:ports",
                                    {{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}",
                                      {{".", json::object()}, {"f:containerPort", json::object()}}}}}}}}}}}}}}}}}},
                      {{"manager", "kubectl-set"}, {"operation", "Update"}, {"apiVersion", "apps/v1"},
                       {"time", "2026-11-25T03:00:00Z"},
                       {"fieldsV1",
                        {{"f:spec",
                          {{"f:replicas", json::object()},
                           {"f:template",
                            {{"f:spec", {{"f:containers", {{"k:{\"name\":\"web\"}", {{"f:image", json::object()}}}}}}}}}}}}}},
                      {{"manager", "kubectl-label"}, {"operation", "Update"}, {"apiVersion", "v1"},
                       {"fieldsV1", {{"f:metadata", {{"f:labels", {{"f:team", json::object()}}}}}}}}})}}},
      {"spec",
       {{"replicas", 3},
        {"progressDeadlineSeconds", 600},  // a server default
        {"selector", {{"matchLabels", {{"app", "web"}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", "web"}}}}},
          {"spec",
           {{"containers",
             json::array({{{"name", "web"},
                           {"image", "nginx:1.28"},
                           {"imagePullPolicy", "IfNotPresent"},
                           {"ports", json::array({{{"containerPort", 80}, {"protocol", "TCP"}}})}}})}}}}}}},
      {"status", {{"replicas", 3}}}};
  auto fields = drift::compare(planned, live.dump());
  REQUIRE(fields.size() == 2);
  CHECK(fields[0].path == ".spec.replicas");
  CHECK(fields[0].manager == "kubectl-set");
  CHECK(fields[0].planned == "2");
  CHECK(fields[0].live == "3");
  CHECK(fields[1].path == ".spec.template.spec.containers[name=\"web\"].image");
  CHECK(fields[1].manager == "kubectl-set");
  CHECK(fields[1].time == "2026-11-25T03:00:00Z");

  // A field removed from the live object: planned against absent.
  live["spec"]["template"]["metadata"]["labels"].erase("app");
  live["spec"]["replicas"] = 2;
  live["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27";
  fields = drift::compare(planned, live.dump());
  REQUIRE(fields.size() == 1);
  CHECK(fields[0].path == ".spec.template.metadata.labels.app");
  CHECK(fields[0].manager == "emco");  // its entry still lists the field it applied
  CHECK(fields[0].live.empty());

  // A missing container is one drift, not one per field.
  live["spec"]["template"]["metadata"]["labels"]["app"] = "web";
  live["spec"]["template"]["spec"]["containers"] = json::array();
  fields = drift::compare(planned, live.dump());
  REQUIRE(fields.size() == 1);
  CHECK(fields[0].path == ".spec.template.spec.containers[name=\"web\"]");

  // A Secret's stringData is compared as the data the server keeps.
  const std::string secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: hunter2}\n";
  json live_secret = {{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "s"}}},
                      {"data", {{"password", "aHVudGVyMg=="}}}, {"type", "Opaque"}};
  CHECK(drift::compare(secret, live_secret.dump()).empty());
}
