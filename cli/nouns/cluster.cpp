// `emco cluster`: cluster providers, clusters, their labels, kv pairs and
// sync objects (create, update, get, list, delete), `emco cluster check`
// over the registered kubeconfigs, and `emco cluster network` (apply,
// terminate, stop, status): the cluster's ncm network intents.

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/batch_output.hpp"
#include "cli/context.hpp"
#include "cli/operations.hpp"
#include "cli/progress.hpp"
#include "cli/resource_verbs.hpp"
#include "cli/status_view.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/manifest/batch.hpp"
#include "core/status/status.hpp"
#include "core/store/cluster_checks.hpp"
#include "core/util/clock.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/targets/kube/cluster_check.hpp"
#include "plugins/targets/kube/kubeconfig.hpp"

namespace emco::cli {

using nlohmann::json;

namespace {

int run_cluster_check(Context& ctx, const Invocation& inv) {
  auto& st = ctx.store();
  const auto& cluster_kind = resource::kind("cluster");
  std::vector<store::Resource> clusters;
  if (inv.args.empty()) {
    clusters = st.list(cluster_kind);
  } else {
    for (const auto& a : inv.args) {
      auto parts = split(a, '/');
      if (parts.size() != 2) fail(ErrorKind::usage, "'" + a + "' does not name a cluster", "expected PROVIDER/CLUSTER");
      resource::Key key{{{"clusterProvider", parts[0]}, {"cluster", parts[1]}}};
      auto r = st.get(key);
      if (!r) fail(ErrorKind::not_found, store::describe(cluster_kind, key) + " does not exist");
      clusters.push_back(*r);
    }
  }
  std::vector<kube::ClusterCheckInput> inputs;
  std::vector<resource::Key> checked;  // the cluster of each input
  for (const auto& c : clusters) {
    auto full = st.get(c.key);
    std::string kubeconfig;
    for (const auto& content : full->contents)
      if (content.name == "file") kubeconfig = content.data;
    if (kubeconfig.empty()) {
      ctx.note("skipping " + c.key.parts[0].second + "+" + c.key.parts[1].second + ": a GitOps cluster has no kubeconfig");
      continue;
    }
    inputs.push_back({c.key.parts[0].second + "+" + c.key.parts[1].second, kubeconfig, "", inv.get("namespace")});
    checked.push_back(c.key);
  }
  kube::ClusterCheckOptions opts;
  opts.parallelism = static_cast<size_t>(std::max(1, inv.get_int32("parallel", 16)));
  opts.timeout = std::chrono::milliseconds(inv.get_int32("timeout-ms", 5000));
  auto results = kube::check_clusters(inputs, opts);
  // Each cluster's last check stays in the workspace: the fleet's
  // reachability (status.lastCheck of the cluster's GET, the dashboard).
  const std::string now = system_clock().now_rfc3339();
  st.write([&] {
    for (size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      store::ClusterCheck c{.time = now, .reachable = r.check("reachable").status == kube::CheckStatus::ok, .error = "", .version = r.version};
      for (const auto& item : r.checks)
        if (item.status == kube::CheckStatus::failed) c.error += (c.error.empty() ? "" : "; ") + item.name + ": " + item.detail;
      store::record_cluster_check(st, checked[i], c);
    }
  });
  Format f = parse_format(inv.get("output", "table"));
  if (f == Format::json) ctx.out << kube::check_results_json(results) << "\n";
  else if (f == Format::yaml) print_yaml(ctx.out, json::parse(kube::check_results_json(results)));
  else if (f == Format::name) {
    for (const auto& r : results)
      if (r.failed()) ctx.out << r.cluster << "\n";
  } else ctx.out << kube::format_check_table(results);
  return kube::check_exit_code(results);
}

constexpr char k_cluster_address[] = "PROVIDER/CLUSTER";

int network_status_cmd(Context& ctx, const Invocation& inv) {
  const auto& k = resource::kind("cluster");
  resource::Key key = resolve_address(k, inv.args[0], k_cluster_address);
  Format f;
  auto q = query_of(inv, f);
  auto& st = ctx.store();
  sync::TargetFactory live;
  if (q.ready() || q.output == "detail") live = lifecycle::live_targets(st, &ctx.runtime());
  return watchable(ctx, inv, [&](std::ostream& os) {
    json s = status::owned_status(st, k, key, q, live);
    // Before the first apply there is nothing on the cluster: show the state in its place.
    if (!q.deprecated_names() && !s.contains("deployedStatus")) {
      auto actions = s["states"].value("actions", json::array());
      s["deployedStatus"] = actions.empty() ? "Created" : actions.back().value("state", "");
    }
    if (f == Format::json) print_json(os, s);
    else if (f == Format::yaml) print_yaml(os, s);
    else {
      print_status_heading(os, "network intents of cluster " + s.value("name", ""), s);
      print_status_table(os, s, q);
    }
  });
}

}  // namespace

std::vector<CommandSpec> cluster_commands() {
  std::vector<CommandSpec> v;
  add_verbs(v, {.words = {"cluster", "provider"}, .kind = "clusterProvider", .address = "PROVIDER",
                .examples = {"emco cluster provider create edge-provider"}});
  add_verbs(v, {.words = {"cluster"}, .kind = "cluster", .address = "PROVIDER/CLUSTER",
                .flags = {{.name = "kubeconfig", .value = "FILE", .help = "the cluster's kubeconfig", .complete = Complete::file},
                          {.name = "gitops-type", .value = "TYPE", .help = "deliver through git instead of a kubeconfig",
                           .choices = {"fluxcd", "fluxv2", "anthos"}},
                          {.name = "gitops-reference-object", .value = "NAME", .help = "sync object with the git repository settings"},
                          {.name = "gitops-resource-object", .value = "NAME", .help = "sync object with the Flux timing values"}},
                .build =
                    [](const Invocation& inv, json& spec, manifest::Document& doc) {
                      if (inv.has("kubeconfig")) doc.files.push_back(inv.get("kubeconfig"));
                      if (inv.has("gitops-type")) {
                        spec["gitOps"] = {{"gitOpsType", inv.get("gitops-type")},
                                          {"gitOpsReferenceObject", inv.get("gitops-reference-object")},
                                          {"gitOpsResourceObject", inv.get("gitops-resource-object", inv.get("gitops-reference-object"))}};
                      }
                    },
                .examples = {"emco cluster create edge-provider/edge01 --kubeconfig ~/.kube/edge01.yaml",
                             "emco cluster create edge-provider/edge02 --gitops-type fluxcd --gitops-reference-object git"}});
  add_verbs(v, {.words = {"cluster", "label"}, .kind = "clusterLabel", .address = "PROVIDER/CLUSTER/LABEL", .create_verb = "add",
                .examples = {"emco cluster label add edge-provider/edge01/edge-cluster"}, .updatable = false});
  add_verbs(v, {.words = {"cluster", "kv"}, .kind = "clusterKv", .address = "PROVIDER/CLUSTER/NAME",
                .flags = {kv_flag()},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("kv")) spec["kv"] = kv_list(inv.all("kv"), "kv");
                },
                .examples = {"emco cluster kv create edge-provider/edge01/istio --kv istioIngressGatewayAddress=10.0.0.1"}});
  add_verbs(v, {.words = {"cluster", "sync-object"}, .kind = "clusterSyncObject", .address = "PROVIDER/NAME",
                .flags = {kv_flag()},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("kv")) spec["kv"] = kv_list(inv.all("kv"), "kv");
                },
                .examples = {"emco cluster sync-object create edge-provider/git --kv url=https://git.example/fleet.git "
                             "--kv branch=main --kv userName=bot --kv gitToken=... --kv repoName=fleet",
                             "emco cluster sync-object create edge-provider/git-ssh --spec-file git-ssh.yaml   "
                             "# kv: [{url: ssh://git@host/fleet.git}, {sshKey: |...}, {knownHosts: ...}]"},
                .notes =
                    "A GitOps repository (the cluster's gitOpsReferenceObject): url (file://, git://, http(s):// or\n"
                    "ssh://), branch (default main), userName, and emco's credentials for it: gitToken, or password;\n"
                    "sshKey (an ed25519 or ECDSA private key, OpenSSH or PEM text) with sshPassphrase; knownHosts\n"
                    "(known_hosts lines the server's host key must match); caCert (PEM of the CA of an https server the\n"
                    "system does not trust). sshKeyFile, knownHostsFile and caFile name files read at each delivery\n"
                    "instead; a value and its file together are refused. Inline values are kept in the workspace (up to\n"
                    "64 KiB each; give multi-line ones with --spec-file or emco apply) and shown by get and list only\n"
                    "with --show-secrets. The gitOpsResourceObject holds the Flux timing: syncInterval, retryInterval,\n"
                    "timeOut (seconds)."});
  v.push_back({.path = {"cluster", "check"},
               .summary = "check registered clusters: reachability, TLS, credentials, version, permissions",
               .description = "Checks every named cluster (default: all) in parallel. Exits 1 when any check fails.\n"
                              "Each cluster's result is kept in the workspace as its last check (time, reachable or not,\n"
                              "what failed, the server's version): 'emco cluster get -o yaml' shows it as status.lastCheck,\n"
                              "as does the cluster's GET in 'emco serve', and the dashboard's fleet table.",
               .args = {{.name = "PROVIDER/CLUSTER", .help = "clusters to check", .optional = true, .variadic = true}},
               .flags = {{.name = "namespace", .value = "NS", .help = "namespace whose create/delete permission is checked"},
                         {.name = "parallel", .value = "N", .help = "clusters checked at once", .default_value = "16"},
                         {.name = "timeout-ms", .value = "MS", .help = "per-request time limit", .default_value = "5000"},
                         output_flag()},
               .handler = run_cluster_check});
  add_lifecycle_operations(
      v, {"cluster", "network"}, resource::kind("cluster"), k_cluster_address, "the cluster", "edge-provider/edge01",
      {{"apply", "apply the cluster's networks and provider networks (ncm)",
        "Delivers the cluster's virtual networks (Network), provider networks (ProviderNetwork) and, when its kv pair\n"
        "CNI-Networking-Multi-VM-CNI-Wrapper is multus, their NetworkAttachmentDefinitions, as the context of app\n"
        "network-intents; waits up to --timeout like 'emco dig instantiate'. While they are applied the cluster's\n"
        "networks cannot change and the cluster cannot be deleted. Same as the .../clusters/C/apply anchor."},
       {"terminate", "remove the cluster's networks from it",
        "Deletes what apply created, in reverse order. Same as the .../clusters/C/terminate anchor."},
       {"stop", "stop a network apply or terminate in progress",
        "Sets the stop flag: a process delivering the networks ends its waits within a second."}});
  v.push_back({.path = {"cluster", "network", "status"},
               .summary = "show what was applied of the cluster's network intents",
               .description = "EMCO's status of the network-intents context (upstream's cluster status): the state\n"
                              "history, the deployed status and counts, per resource with -o all, read back from the\n"
                              "cluster with --status ready. Same query flags as 'emco dig status'.",
               .args = {{.name = k_cluster_address, .help = "the cluster (or its anchor)", .complete = Complete::anchor}},
               .flags = status_flags(),
               .examples = {"emco cluster network status edge-provider/edge01 -o all",
                            "emco cluster network status edge-provider/edge01 --status ready -o json"},
               .handler = network_status_cmd});
  return v;
}

}  // namespace emco::cli
