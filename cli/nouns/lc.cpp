// `emco lc`: logical clouds, their cluster references, quotas, permissions
// and kv pairs (create, modify, get, list, delete), the lifecycle with
// waiting and progress (instantiate, terminate, update, stop), the cloud's
// status and the kubeconfig issued for its user.

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/context.hpp"
#include "cli/operations.hpp"
#include "cli/output.hpp"
#include "cli/resource_verbs.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/credentials.hpp"
#include "core/lifecycle/lc_dcm.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/util/error.hpp"

namespace emco::cli {

using nlohmann::json;
using resource::Key;

namespace {

constexpr char k_lc_address[] = "PROJECT/LOGICAL-CLOUD";

int status_cmd(Context& ctx, const Invocation& inv) {
  const auto& k = resource::kind("logicalCloud");
  Key key = resolve_address(k, inv.args[0], k_lc_address);
  auto r = ctx.store().get(key);
  if (!r) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
  json si = r->state_info.empty() ? json::object() : json::parse(r->state_info);
  auto s = lifecycle::lc::status(ctx.store(), key);
  Format f = parse_format(inv.get("output", "table"));
  if (f == Format::json || f == Format::yaml) {
    json clusters = json::array();
    for (const auto& c : s.clusters) {
      json objects = json::array();
      for (const auto& o : c.objects) {
        json jo = {{"resource", o.resource}, {"status", o.status}};
        if (!o.message.empty()) jo["message"] = o.message;
        objects.push_back(jo);
      }
      json jc = {{"cluster", c.cluster}, {"resources", objects}};
      if (s.level != "0") jc["credentials"] = c.gitops.empty() ? (c.credentials ? "issued" : "not issued") : "gitops";
      if (!c.gitops.empty()) jc["gitOpsType"] = c.gitops;
      clusters.push_back(jc);
    }
    json out = {{"name", key.parts.back().second},
                {"level", s.level},
                {"states", si},
                {"deployedStatus", s.state},
                {"context", s.context},
                {"contextStatus", s.context_status},
                {"clusters", clusters}};
    if (f == Format::json) print_json(ctx.out, out);
    else print_yaml(ctx.out, out);
    return 0;
  }
  ctx.out << "state: " << (s.state.empty() ? "-" : s.state) << "  level: " << s.level;
  if (!s.context.empty()) ctx.out << "  context: " << s.context << " (" << (s.context_status.empty() ? "-" : s.context_status) << ")";
  ctx.out << "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : s.clusters) {
    size_t applied = 0, failed = 0;
    for (const auto& o : c.objects) {
      if (o.status == "Applied") ++applied;
      if (o.status == "Failed") ++failed;
    }
    std::string creds = s.level == "0" ? "admin" : !c.gitops.empty() ? "gitops" : c.credentials ? "issued" : "not issued";
    rows.push_back({c.cluster, std::to_string(c.objects.size()), std::to_string(applied), std::to_string(failed), creds});
  }
  print_table(ctx.out, {"CLUSTER", "OBJECTS", "APPLIED", "FAILED", "CREDENTIALS"}, rows);
  ctx.out << "\n";
  rows.clear();
  for (const auto& a : si.value("actions", json::array()))
    rows.push_back({a.value("state", ""), a.value("instance", ""), std::to_string(a.value("revision", 0)), a.value("time", "")});
  print_table(ctx.out, {"STATE", "INSTANCE", "REVISION", "TIME"}, rows);
  return 0;
}

int kubeconfig_cmd(Context& ctx, const Invocation& inv) {
  const auto& k = resource::kind("logicalCloud");
  Key key = resolve_address(k, inv.args[0], k_lc_address);
  if (!ctx.store().get(key)) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
  std::string cluster = inv.get("cluster");
  if (cluster.empty()) fail(ErrorKind::usage, "which cluster? --cluster PROVIDER+CLUSTER is required");
  if (auto slash = cluster.find('/'); slash != std::string::npos && cluster.find('+') == std::string::npos)
    cluster[slash] = '+';
  if (cluster.find('+') == std::string::npos)
    fail(ErrorKind::usage, "'--cluster " + cluster + "' is not PROVIDER+CLUSTER", "e.g. --cluster edge+cluster1");
  auto kc = lifecycle::tenant_kubeconfig(ctx.store(), key, cluster);
  if (!kc) {
    auto have = lifecycle::tenant_clusters(ctx.store(), key);
    std::string list;
    for (const auto& c : have) list += (list.empty() ? "" : ", ") + c;
    fail(ErrorKind::not_found, store::describe(k, key) + " has no credentials for cluster '" + cluster + "'",
         have.empty() ? "instantiate the logical cloud first (emco lc instantiate)" : "it has credentials for: " + list);
  }
  if (!inv.has("show-secrets"))
    fail(ErrorKind::usage, "the kubeconfig holds the user's private key; refusing to print it",
         "add --show-secrets to print it (e.g. emco lc kubeconfig ... --show-secrets > user.kubeconfig)");
  ctx.out << *kc;
  return 0;
}

}  // namespace

std::vector<CommandSpec> lc_commands() {
  std::vector<CommandSpec> v;
  Noun lc_noun{.words = {"lc"}, .kind = "logicalCloud", .address = "PROJECT/LOGICAL-CLOUD", .update_verb = "modify",
          .flags = {{.name = "level", .value = "LEVEL", .help = "0 = admin, 1 = standard/privileged", .choices = {"0", "1"}},
                    {.name = "namespace", .value = "NS", .help = "namespace of a level-1 cloud"},
                    {.name = "user", .value = "NAME", .help = "user of a level-1 cloud"},
                    {.name = "label", .value = "KEY=VALUE", .help = "label for the cloud's namespace", .repeatable = true}},
          .build = [](const Invocation& inv, json& spec, manifest::Document&) {
            if (inv.has("level")) spec["level"] = inv.get("level");
            if (inv.has("namespace")) spec["namespace"] = inv.get("namespace");
            if (inv.has("user")) spec["user"] = {{"userName", inv.get("user")}, {"type", "certificate"}};
            for (const auto& [k, val] : key_values(inv.all("label"), "label")) spec["labels"][k] = val;
          },
          .examples = {"emco lc create proj1/lc0 --level 0", "emco lc create proj1/tenant-a --namespace tenant-a --user alice"}};
  add_verbs(v, lc_noun);
  add_verbs(v, {.words = {"lc", "cluster-ref"}, .kind = "clusterReference", .address = "PROJECT/LOGICAL-CLOUD/REFERENCE",
                .flags = {{.name = "cluster", .value = "PROVIDER/CLUSTER", .help = "the cluster referenced"},
                          {.name = "load-balancer-ip", .value = "IP", .help = "the cluster's load balancer address"}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("cluster")) {
                    auto p = split_address(inv.get("cluster"), "cluster", 2);
                    spec["clusterProvider"] = p[0];
                    spec["cluster"] = p[1];
                  }
                  if (inv.has("load-balancer-ip")) spec["loadBalancerIP"] = inv.get("load-balancer-ip");
                },
                .examples = {"emco lc cluster-ref create proj1/lc0/edge01 --cluster edge-provider/edge01"}});
  add_verbs(v, {.words = {"lc", "quota"}, .kind = "clusterQuota", .address = "PROJECT/LOGICAL-CLOUD/QUOTA",
                .flags = {{.name = "set", .value = "RESOURCE=AMOUNT", .help = "a ResourceQuota hard limit", .repeatable = true}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  for (const auto& [k, val] : key_values(inv.all("set"), "set")) spec[k] = val;
                },
                .examples = {"emco lc quota create proj1/tenant-a/q1 --set pods=10 --set limits.cpu=4"}});
  add_verbs(v, {.words = {"lc", "permission"}, .kind = "userPermission", .address = "PROJECT/LOGICAL-CLOUD/PERMISSION",
                .flags = {{.name = "namespace", .value = "NS", .help = "namespace granted (empty = cluster-wide)"},
                          {.name = "api-group", .value = "GROUP", .help = "API group (\"\" = core)", .repeatable = true},
                          {.name = "resource", .value = "RESOURCE", .help = "resource type", .repeatable = true},
                          {.name = "verb", .value = "VERB", .help = "allowed verb", .repeatable = true}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("namespace")) spec["namespace"] = inv.get("namespace");
                  if (inv.has("api-group")) spec["apiGroups"] = inv.all("api-group");
                  if (inv.has("resource")) spec["resources"] = inv.all("resource");
                  if (inv.has("verb")) spec["verbs"] = inv.all("verb");
                }});
  add_verbs(v, {.words = {"lc", "kv"}, .kind = "logicalCloudKv", .address = "PROJECT/LOGICAL-CLOUD/NAME",
                .flags = {kv_flag()},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("kv")) spec["kv"] = kv_list(inv.all("kv"), "kv");
                }});

  add_lifecycle_operations(v, {"lc"}, resource::kind("logicalCloud"), k_lc_address, "the logical cloud", "proj1/tenant-a", {
      {"instantiate", "instantiate a logical cloud on its clusters",
       "Admin (level 0) clouds record the state only. Standard and privileged (level 1) clouds create, in every\n"
       "referenced cluster, the namespace, the user's roles and bindings and the quota, and issue the user's\n"
       "credentials; waits up to --timeout like 'emco dig instantiate'."},
      {"terminate", "remove a logical cloud from its clusters",
       "Deletes what instantiate created, in reverse order. DIGs deployed into the cloud must be terminated first."},
      {"update", "roll out logical-cloud changes (cluster references, quotas, permissions)",
       "Delivers only the difference: clusters added get the cloud, clusters removed lose it."},
      {"stop", "stop a logical cloud's instantiate or terminate in progress",
       "Sets the stop flag: a process delivering the cloud ends its waits within a second."},
  });
  v.push_back({.path = {"lc", "status"},
               .summary = "show the logical cloud's state, per-cluster objects and credentials",
               .description = "Per cluster of the cloud: how many of its objects (namespace, roles, bindings, quotas, "
                              "certificate request) are applied or failed, and whether the user's credentials were "
                              "issued; then the state history. -o json|yaml lists every object with its status.",
               .args = {{.name = k_lc_address, .help = "the logical cloud (or its anchor)", .complete = Complete::anchor}},
               .flags = {output_flag({Format::table, Format::json, Format::yaml})},
               .examples = {"emco lc status proj1/tenant-a", "emco lc status proj1/tenant-a -o json"},
               .handler = status_cmd});
  v.push_back({.path = {"lc", "kubeconfig"},
               .summary = "print the kubeconfig issued to a logical cloud's user on one cluster",
               .description = "Standard and privileged logical clouds get a kubeconfig per cluster for their user "
                              "(a certificate emco had the cluster sign, and the cloud's private key). It is kept in "
                              "the workspace and printed only with --show-secrets.",
               .args = {{.name = k_lc_address, .help = "the logical cloud (or its anchor)", .complete = Complete::anchor}},
               .flags = {{.name = "cluster", .value = "PROVIDER+CLUSTER", .help = "the cluster (required)"},
                         {.name = "show-secrets", .help = "print the kubeconfig (it contains a private key)"}},
               .examples = {"emco lc kubeconfig proj1/tenant-a --cluster edge+cluster1 --show-secrets > tenant-a.kubeconfig"},
               .handler = kubeconfig_cmd});
  return v;
}

}  // namespace emco::cli
