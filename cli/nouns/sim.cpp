// `emco sim`: simulated Kubernetes clusters on this machine (start, stop,
// fault injection), for trying emco and for its tests.

#include <chrono>

#include "cli/table.hpp"
#include "core/util/error.hpp"
#include "sim/sim.hpp"

namespace emco::cli {

namespace {

std::string sim_dir(const Invocation& inv) { return inv.get("dir", ".emco-sim"); }

sim::Fault fault_from_flags(const Invocation& inv) {
  sim::Fault f;
  f.latency_ms = inv.get_int32("latency-ms", 0);
  f.error_rate = inv.get_double("error-rate", 0);
  if (f.error_rate < 0 || f.error_rate > 1) fail(ErrorKind::usage, "'--error-rate' must be between 0 and 1");
  f.error_code = inv.get_int32("error-code", 503);
  f.refuse = inv.has("refuse");
  f.expired_credentials = inv.has("expired-credentials");
  if (inv.has("down-for-ms"))
    f.down_until_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count() + inv.get_int32("down-for-ms", 0);
  f.flap_period_ms = inv.get_int32("flap-period-ms", 0);
  f.flap_down_ms = inv.get_int32("flap-down-ms", 0);
  return f;
}

int run_sim_start_cmd(Context&, const Invocation& inv) {
  sim::SimStartArgs a;
  a.options.clusters = inv.get_int32("clusters", 3);
  if (a.options.clusters < 1) fail(ErrorKind::usage, "'--clusters' must be at least 1");
  a.options.dir = sim_dir(inv);
  a.options.port = inv.get_int32("port", 0);
  a.options.own_ports = inv.has("own-ports");
  a.options.ready_delay_ms = inv.get_int32("ready-delay-ms", 1000);
  a.options.persist = inv.has("persist");
  if (inv.has("kube-version")) a.options.version_minor = sim::parse_kube_version(inv.get("kube-version"));
  a.options.nodes = inv.get_int32("nodes", 1);
  if (a.options.nodes < 0) fail(ErrorKind::usage, "'--nodes' must not be negative");
  a.options.lb_delay_ms = inv.get_int32("lb-delay-ms", 1000);
  if (inv.has("lb-ip-range")) a.options.lb_ip_range = inv.get("lb-ip-range");
  a.options.preinstall = inv.all("preinstall");
  if (inv.get("auth") == "client-cert") a.options.auth = sim::AuthMode::client_cert;
  for (const auto& n : inv.all("name")) a.options.names.push_back(n);
  // Any fault flag at start applies to every cluster ('emco sim fault' sets them per cluster later).
  sim::Fault start_fault = fault_from_flags(inv);
  if (!(start_fault == sim::Fault{})) a.options.faults["*"] = start_fault;
  return sim::run_sim_start(a);
}

int run_sim_stop_cmd(Context&, const Invocation& inv) { return sim::run_sim_stop(sim_dir(inv), inv.get_int32("timeout", 10)); }

int run_sim_fault_cmd(Context&, const Invocation& inv) {
  sim::SimFaultArgs a;
  a.dir = sim_dir(inv);
  a.clusters = inv.args;
  a.clear = inv.has("clear");
  a.fault = fault_from_flags(inv);
  return sim::run_sim_fault(a);
}

int run_sim_node_cmd(Context&, const Invocation& inv) {
  if (inv.args.size() < 3) fail(ErrorKind::usage, "emco sim node needs an action, a cluster and a node");
  sim::SimNodeArgs a;
  a.dir = sim_dir(inv);
  a.action = inv.args.at(0);
  a.cluster = inv.args.at(1);
  a.node = inv.args.at(2);
  a.settings.assign(inv.args.begin() + 3, inv.args.end());
  return sim::run_sim_node(a);
}

std::vector<FlagSpec> fault_flags() {
  return {{.name = "latency-ms", .value = "MS", .help = "added latency per request"},
          {.name = "error-rate", .value = "FRACTION", .help = "fraction of requests answered with --error-code"},
          {.name = "error-code", .value = "CODE", .help = "HTTP status of injected errors", .choices = {"500", "503", "429"}},
          {.name = "refuse", .help = "refuse connections"},
          {.name = "down-for-ms", .value = "MS", .help = "refuse connections for this long"},
          {.name = "flap-period-ms", .value = "MS", .help = "flap: every period, be down for --flap-down-ms"},
          {.name = "flap-down-ms", .value = "MS", .help = "flap: down time within each period"},
          {.name = "expired-credentials", .help = "answer every authenticated request with 401"}};
}

}  // namespace

std::vector<CommandSpec> sim_commands() {
  std::vector<CommandSpec> v;
  v.push_back({.path = {"sim", "start"},
               .summary = "run simulated Kubernetes clusters until stopped",
               .description = "Serves N simulated clusters over HTTPS on loopback (path prefix /clusters/<name> on one\n"
                              "port), writes DIR/kubeconfigs/<name>.yaml and DIR/ca.crt, and runs until 'emco sim stop'\n"
                              "or SIGTERM. kubectl and helm work against them: Deployments own ReplicaSets, which own\n"
                              "Pods; StatefulSets, DaemonSets and Jobs own Pods; Pods become ready (Job Pods complete)\n"
                              "after --ready-delay-ms, and deletes cascade by ownerReferences. --kube-version serves an\n"
                              "older release's /version and discovery (e.g. policy/v1beta1 PodSecurityPolicy and\n"
                              "batch/v1beta1 CronJob up to 1.24, autoscaling/v2beta2 up to 1.25). Services get cluster\n"
                              "IPs, node ports (30000-32767) and, after --lb-delay-ms, load-balancer ingress IPs.\n"
                              "--preinstall istio starts every cluster with Istio's CRDs (Gateway, ServiceEntry,\n"
                              "DestinationRule, VirtualService, ProxyConfig, AuthorizationPolicy) and the istio-system\n"
                              "namespace; --preinstall cert-manager with cert-manager's CRDs and namespace, its CA issuer\n"
                              "signing CertificateRequests with the CA in the issuer's Secret (tls.crt, tls.key);\n"
                              "--preinstall kncc with KNCC's ConfigCtrl CRD; --preinstall ovn4nfv with the CRDs of the\n"
                              "network controllers' objects (Nodus Network, ProviderNetwork, NetworkChaining; Multus\n"
                              "NetworkAttachmentDefinition).",
               .flags = [] {
                 std::vector<FlagSpec> f = {
                     {.name = "clusters", .value = "N", .help = "number of clusters", .default_value = "3"},
                     {.name = "name", .value = "NAME", .help = "cluster name (instead of cluster-1..N)", .repeatable = true},
                     {.name = "dir", .value = "DIR", .help = "state directory", .complete = Complete::directory,
                      .default_value = ".emco-sim"},
                     {.name = "port", .value = "PORT", .help = "shared HTTPS port (0 = any free port)"},
                     {.name = "own-ports", .help = "also give every cluster a port of its own"},
                     {.name = "auth", .value = "MODE", .help = "credentials in the kubeconfigs", .choices = {"token", "client-cert"}},
                     {.name = "ready-delay-ms", .value = "MS", .help = "Pods become ready this long after creation"},
                     {.name = "kube-version", .value = "1.MINOR", .help = "Kubernetes release to serve (1.22 to 1.32)",
                      .default_value = "1.32"},
                     {.name = "nodes", .value = "N", .help = "Node objects per cluster", .default_value = "1"},
                     {.name = "lb-delay-ms", .value = "MS", .help = "LoadBalancer ingress IPs come after this",
                      .default_value = "1000"},
                     {.name = "lb-ip-range", .value = "RANGE", .help = "LoadBalancer ingress IPs (CIDR or FIRST-LAST)",
                      .default_value = "198.51.100.0/24"},
                     {.name = "preinstall", .value = "COMPONENT",
                      .help = "start every cluster with a component installed (its namespace and CRDs)",
                      .repeatable = true, .choices = {"istio", "cert-manager", "kncc", "ovn4nfv"}},
                     {.name = "persist", .help = "keep cluster state in DIR across restarts"}};
                 for (auto& x : fault_flags()) f.push_back(x);
                 return f;
               }(),
               .needs_workspace = false,
               .examples = {"emco sim start --clusters 100 --dir /tmp/fleet &", "kubectl --kubeconfig /tmp/fleet/kubeconfigs/cluster-001.yaml get ns"},
               .handler = run_sim_start_cmd});
  v.push_back({.path = {"sim", "stop"},
               .summary = "stop a running simulator",
               .flags = {{.name = "dir", .value = "DIR", .help = "state directory", .complete = Complete::directory,
                          .default_value = ".emco-sim"},
                         {.name = "timeout", .value = "SECONDS", .help = "how long to wait for it to exit"}},
               .needs_workspace = false,
               .handler = run_sim_stop_cmd});
  v.push_back({.path = {"sim", "fault"},
               .summary = "inject faults into running simulated clusters",
               .args = {{.name = "CLUSTER", .help = "cluster names, or * for all", .variadic = true}},
               .flags = [] {
                 std::vector<FlagSpec> f = {{.name = "dir", .value = "DIR", .help = "state directory",
                                             .complete = Complete::directory, .default_value = ".emco-sim"},
                                            {.name = "clear", .help = "remove the clusters' faults"}};
                 for (auto& x : fault_flags()) f.push_back(x);
                 return f;
               }(),
               .needs_workspace = false,
               .examples = {"emco sim fault cluster-002 --flap-period-ms 4000 --flap-down-ms 1000", "emco sim fault '*' --clear"},
               .handler = run_sim_fault_cmd});
  v.push_back({.path = {"sim", "node"},
               .summary = "add, label or resize Nodes of simulated clusters",
               .description = "Records the Node in DIR/nodes.json; a running simulator applies it within half a second,\n"
                              "one started later at start. add creates the Node (Ready, 4 CPUs, 16Gi); label merges\n"
                              "KEY=VALUE labels and removes KEY- ones; set gives capacity and allocatable (cpu=8,\n"
                              "memory=32Gi, pods=110, nvidia.com/gpu=2), or one of them (capacity:cpu=8,\n"
                              "allocatable:cpu=7500m). Recorded before 'emco sim start' in the same DIR, it applies to\n"
                              "the Nodes --nodes makes (CLUSTER-node-1, ...). DaemonSets follow the Nodes; hpa\n"
                              "placement reads the labels and allocatable resources.",
               .args = {{.name = "ACTION", .help = "add, label or set"},
                        {.name = "CLUSTER", .help = "cluster name, or * for all"},
                        {.name = "NODE", .help = "node name"},
                        {.name = "SETTING", .help = "KEY=VALUE, KEY- (label) or [capacity:|allocatable:]RESOURCE=QUANTITY (set)", .optional = true,
                         .variadic = true}},
               .flags = {{.name = "dir", .value = "DIR", .help = "state directory", .complete = Complete::directory,
                          .default_value = ".emco-sim"}},
               .needs_workspace = false,
               .examples = {"emco sim node add cluster-1 gpu-1", "emco sim node label cluster-1 gpu-1 accelerator=nvidia",
                            "emco sim node set '*' gpu-1 cpu=16 memory=64Gi",
                            "emco sim node set cluster-1 cluster-1-node-1 capacity:cpu=8 allocatable:cpu=7500m"},
               .handler = run_sim_node_cmd});
  return v;
}

}  // namespace emco::cli
