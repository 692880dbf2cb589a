#pragma once
// emco sim: a fleet of simulated Kubernetes API servers in one process.
//
// Every cluster serves the Kubernetes API surface kubectl and emco's kube
// target use (version, aggregated and legacy discovery, OpenAPI v3, CRUD,
// server-side apply with managedFields, JSON/merge/strategic patch, watch,
// CRDs, CSRs signed by the simulator's CA, workload readiness after a delay,
// RBAC and impersonation) over HTTPS. The admin kubeconfigs it writes are
// system:masters; any other user (e.g. one whose certificate an approved
// CSR issued) gets what the cluster's Roles and bindings grant (rbac.hpp). All clusters share one port and are told apart by a path
// prefix, https://127.0.0.1:PORT/clusters/<name>; with `own_ports` each one
// also listens on a port of its own. One event-loop thread serves them all.
//
// Files written in `dir` (directories 0700, files 0600):
//   ca.crt, ca.key            the CA (server certificate, client certificates,
//                             approved CSRs); reused when present
//   secret                    seed of the per-cluster bearer tokens
//   kubeconfigs/<name>.yaml   one kubeconfig per cluster (context <name>)
//   state/<name>.json         object snapshots, with `persist`
//   sim.pid, sim.json         written by run_sim_start (port, cluster names)
//   faults.json               run-time faults; `emco sim fault` writes it and
//                             the simulator re-reads it within half a second
//
// Thread safety: start/stop from one thread; every other member may be
// called from any thread while the simulator runs.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace emco::sim {

enum class AuthMode { token, client_cert };

// Faults of one cluster. A default Fault is a healthy cluster.
struct Fault {
  int latency_ms = 0;           // added before each answer
  double error_rate = 0;        // fraction of requests answered with error_code
  int error_code = 503;         // 500, 503 or 429 (429 and 503 carry Retry-After)
  int retry_after_s = 1;
  bool refuse = false;          // connections are closed without an answer; an own port is closed
  int64_t down_until_ms = 0;    // unix ms: refused until then (down for a period)
  int64_t flap_period_ms = 0;   // flapping: refused for flap_down_ms of every flap_period_ms
  int64_t flap_down_ms = 0;
  bool expired_credentials = false;  // every authenticated request gets 401

  bool operator==(const Fault&) const = default;
  // Whether the cluster refuses connections at `now_ms` (unix ms).
  bool refusing(int64_t now_ms) const;
};

// Fault <-> JSON (the faults.json format):
// {"latencyMs":..,"errorRate":..,"errorCode":..,"retryAfterSeconds":..,
//  "refuse":..,"downUntilMs":..,"flapPeriodMs":..,"flapDownMs":..,"expiredCredentials":..}
nlohmann::json fault_to_json(const Fault& fault);
Fault fault_from_json(const nlohmann::json& j);  // throws emco::Error(invalid)

struct SimOptions {
  int clusters = 1;
  std::vector<std::string> names;  // explicit cluster names; default cluster-1..N (zero-padded)
  std::string dir;                 // empty: a private temporary directory, removed by stop()
  std::string host = "127.0.0.1";
  int port = 0;                    // the shared port; 0 = ephemeral
  bool own_ports = false;          // each cluster also listens on its own port
  int base_port = 0;               // own port of cluster i = base_port + i; 0 = ephemeral
  bool tls = true;                 // plain HTTP only for debugging: kubectl sends no credentials then
  AuthMode auth = AuthMode::token; // what the kubeconfigs carry; the server accepts both
  int ready_delay_ms = 1000;       // workloads become ready this long after a spec change
  int crd_establish_delay_ms = 0;  // CRDs become Established (and served) after this
  // A deleted Namespace (CRD) stays Terminating this long; then its contents
  // (custom resources) and itself go. 0: at once, within the DELETE.
  int finalize_delay_ms = 500;
  // The Kubernetes release posed as, 1.22..1.32: /version and the APIs served
  // (e.g. policy/v1beta1 PodSecurityPolicy up to 1.24). kubectl's version
  // dispatcher picks its own version from /version: call a fixed kubectl
  // binary against releases older than 1.29.
  int version_minor = 32;
  // Node objects per cluster (<cluster>-node-<i>, Ready, 4 CPUs, 16Gi,
  // zone labels); Pods are spread over them and DaemonSets run one Pod on
  // each. 0: none listed (Pods run on an unlisted <cluster>-node-1).
  int nodes = 0;
  // LoadBalancer Services get an ingress IP from lb_ip_range (a CIDR or
  // FIRST-LAST, unique per cluster) this long after they are created.
  int lb_delay_ms = 1000;
  std::string lb_ip_range = "198.51.100.0/24";
  // Components every cluster starts with, as if installed before ("istio":
  // the istio-system namespace and Istio's CRDs; "ovn4nfv": the Nodus and
  // Multus CRDs); Error(invalid) at start
  // for an unknown name.
  std::vector<std::string> preinstall;
  bool persist = false;            // load state/<name>.json at start, write on stop and periodically
  int persist_interval_s = 30;
  std::map<std::string, Fault> faults;  // initial faults by cluster name ("*" = every cluster)
};

class Simulator {
public:
  explicit Simulator(SimOptions options);
  ~Simulator();  // stops
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Generates or loads the CA, writes the kubeconfigs, binds the ports and
  // starts the event loop thread. Throws emco::Error(unreachable) when a port
  // is taken, emco::Error(invalid) for bad options.
  void start();
  // Persists (with `persist`), closes every connection and joins the thread.
  void stop();

  int port() const;  // the shared port
  const std::string& dir() const;
  std::vector<std::string> cluster_names() const;
  std::string server_url(const std::string& cluster) const;
  std::string kubeconfig_path(const std::string& cluster) const;
  std::string ca_path() const;

  // Object store inspection for tests. `api_version` "apps/v1", `kind`
  // "Deployment"; `ns` empty for cluster-scoped kinds. get() returns null
  // when absent; list() returns objects sorted by namespace and name.
  nlohmann::json get(const std::string& cluster, const std::string& api_version, const std::string& kind,
                     const std::string& ns, const std::string& name) const;
  std::vector<nlohmann::json> list(const std::string& cluster, const std::string& api_version,
                                   const std::string& kind, const std::string& ns = {}) const;
  size_t object_count(const std::string& cluster) const;
  uint64_t requests_served(const std::string& cluster) const;
  // The write requests (POST, PUT, PATCH) a cluster served, per request
  // path ("/api/v1/namespaces/default/configmaps/x"): how often each object
  // was applied.
  std::map<std::string, uint64_t> writes_served(const std::string& cluster) const;

  void set_fault(const std::string& cluster, const Fault& fault);
  Fault fault(const std::string& cluster) const;

  struct Impl;

private:
  std::unique_ptr<Impl> m_impl;
};

// ---- the commands `emco sim start|stop|fault` (cli/ parses the flags) ----

// The minor version of a `--kube-version` value: "1.24" or "v1.24" -> 24.
// Throws emco::Error(usage) for anything else and releases outside 1.22..1.32.
int parse_kube_version(const std::string& text);

struct SimStartArgs {
  SimOptions options;  // options.dir is required
};
// Starts the fleet, writes dir/sim.pid and dir/sim.json, prints the
// kubeconfig directory on stdout and serves until SIGTERM or SIGINT.
// Returns the exit code.
int run_sim_start(const SimStartArgs& args);

// Sends SIGTERM to the pid in dir/sim.pid and waits (up to timeout_s) for it
// to exit. Throws emco::Error(not_found) without a running simulator.
int run_sim_stop(const std::string& dir, int timeout_s = 10);

struct SimFaultArgs {
  std::string dir;
  std::vector<std::string> clusters;  // names; "*" = every cluster
  Fault fault;                        // ignored with clear
  bool clear = false;                 // remove the clusters' faults
};
// Records the faults in dir/faults.json (under a lock); a running simulator
// applies them within half a second.
int run_sim_fault(const SimFaultArgs& args);

struct SimNodeArgs {
  std::string dir;
  std::string action;                  // "add", "label" or "set"
  std::string cluster;                 // a name, or "*" for every cluster
  std::string node;                    // the Node's name
  std::vector<std::string> settings;   // label: KEY=VALUE or KEY- (removes); set: cpu=8, memory=32Gi, pods=110,
                                       // capacity:cpu=8, allocatable:cpu=7500m, ...
};
// Records the Node in dir/nodes.json (under a lock): {"clusters": {CLUSTER:
// {NODE: {"labels": {KEY: VALUE|null}, "resources": {NAME: QUANTITY},
// "capacity": {NAME: QUANTITY}, "allocatable": {NAME: QUANTITY}}}}}.
// A running simulator applies it within half a second, one starting in dir
// at start: the Node is created when missing, labels merged (null removes),
// resources set as capacity and allocatable, then capacity and allocatable
// alone (a later plain setting of a resource replaces both). Throws
// emco::Error(usage) for a bad action or setting.
int run_sim_node(const SimNodeArgs& args);

}  // namespace emco::sim
