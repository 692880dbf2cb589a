#pragma once
// One simulated cluster's API (internal to sim): requests in,
// responses out, no sockets. The server (server.cpp) authenticates, applies
// faults and calls handle() on its event-loop thread; tests and inspection
// call the other members under the same lock.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/k8s/managed_fields.hpp"
#include "core/k8s/resources.hpp"
#include "core/k8s/schema.hpp"
#include "sim/rbac.hpp"
#include "sim/selectors.hpp"

namespace emco::sim::detail {

class CertAuthority;

struct Request {
  std::string method;  // "GET", "PATCH", ...
  std::string path;    // below the cluster prefix, percent-decoded: "/api/v1/namespaces"
  std::map<std::string, std::string> query;
  std::string content_type;
  std::string accept;
  std::string user_agent;
  std::string body;
  Identity identity;
  // Impersonate-User / Impersonate-Group headers (kubectl --as, --as-group).
  std::string impersonate_user;
  std::vector<std::string> impersonate_groups;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool watch = false;        // a watch stream was opened; body holds its first events
  uint64_t watch_id = 0;
  int watch_timeout_s = 0;   // 0: until the client goes away
};

// What every cluster shares.
struct ClusterEnv {
  const CertAuthority* ca = nullptr;
  int ready_delay_ms = 0;
  int crd_establish_delay_ms = 0;
  int finalize_delay_ms = 0;
  int version_minor = 32;
  int nodes = 0;            // Node objects per cluster
  int lb_delay_ms = 0;      // LoadBalancer Services get their ingress IP after this
  uint32_t lb_first = 0;    // the ingress IPs, host byte order, inclusive
  uint32_t lb_last = 0;
  std::vector<std::string> preinstall;  // components every cluster starts with (preinstall.cpp)
  // Called when the cluster has timed work (readiness, CRD establishment)
  // due at `due_ms`; the server calls tick() then.
  std::function<void(size_t cluster_index, int64_t due_ms)> schedule;
};

// The components a cluster can start with ("istio", "ovn4nfv").
const std::vector<std::string>& preinstall_components();
// The objects (Namespaces, CRDs) component `component` puts into a new
// cluster; Error(invalid) naming the known components for any other name.
std::vector<nlohmann::json> preinstalled_objects(const std::string& component);

struct TypeInfo {
  k8s::ResourceType type;
  const k8s::Schema* schema = nullptr;
  std::shared_ptr<k8s::Schema> own_schema;  // custom resources
  bool custom = false;
  bool served = true;  // custom resources: once their CRD is Established
  std::string store_key() const { return type.group + "/" + type.resource; }
};

class Cluster {
public:
  using WatchSend = std::function<void(const std::string& chunk)>;

  Cluster(size_t index, std::string name, std::string url_prefix, const ClusterEnv& env);

  const std::string& name() const { return m_name; }
  size_t index() const { return m_index; }

  // `send` receives later events of a watch this request opens.
  Response handle(const Request& request, const WatchSend& send);
  void close_watch(uint64_t id);

  // Runs due timed work; returns the next due time (0: none).
  int64_t tick(int64_t now_ms);

  // Nodes as `emco sim node` records them (sim.hpp, SimNodeArgs): {NODE:
  // {"labels": {K: V|null}, "resources": {R: Q}}}; missing ones are created.
  void apply_nodes(const nlohmann::json& wanted);

  // Inspection (the caller holds the simulator lock).
  nlohmann::json get(const std::string& api_version, const std::string& kind, const std::string& ns,
                     const std::string& name);
  std::vector<nlohmann::json> list(const std::string& api_version, const std::string& kind, const std::string& ns);
  size_t object_count();
  uint64_t requests() const { return m_requests; }
  // Writes (POST, PUT, PATCH) served, per request path.
  const std::map<std::string, uint64_t>& writes() const { return m_writes; }

  // Certificates this cluster accepts for client-certificate auth.
  void trust_certificate(const std::string& fingerprint) { m_cert_fingerprints.insert(fingerprint); }
  bool trusts_certificate(const std::string& fingerprint) const { return m_cert_fingerprints.count(fingerprint) != 0; }

  nlohmann::json snapshot();
  void restore(const nlohmann::json& snapshot);
  bool dirty() const { return m_dirty; }
  void clear_dirty() { m_dirty = false; }

private:
  struct Target {  // a parsed resource URL
    const TypeInfo* info = nullptr;
    std::string version;  // of the request
    std::string ns;
    std::string name;
    std::string subresource;
  };
  struct Watch {
    std::string store_key;
    std::string ns;
    std::string api_version;
    std::string kind;
    LabelSelector labels;
    FieldSelector fields;
    WatchSend send;
  };
  struct Pending {
    int64_t due_ms;
    enum Kind { ready, establish, finalize, load_balancer } kind;
    std::string store_key;
    std::string object_key;
    std::string uid;  // ready: the Pod's (a Pod recreated under the same name waits anew)
  };

  void ensure_seeded();
  Response route(const Request& r, const WatchSend& send);
  // The identity a request acts as: its own, or the one it impersonates
  // (which needs "impersonate" on users and groups, as the API checks it).
  Response impersonate(Request& r);
  Response resource(const Request& r, const Target& t, const WatchSend& send);
  Response get_object(const Request& r, const Target& t);
  nlohmann::json scale_of(const nlohmann::json& obj, const Target& t) const;
  Response list_objects(const Request& r, const Target& t);
  Response watch_objects(const Request& r, const Target& t, const WatchSend& send);
  Response create_object(const Request& r, const Target& t);
  Response update_object(const Request& r, const Target& t);
  Response patch_object(const Request& r, const Target& t);
  Response apply_object(const Request& r, const Target& t, const nlohmann::json& intent);
  Response delete_object(const Request& r, const Target& t);
  Response delete_collection(const Request& r, const Target& t);
  Response approve_csr(const Request& r, const Target& t);
  Response review(const Request& r, const Target& t);
  // RBAC over this cluster's stored roles and bindings (rbac.hpp).
  Decision authorize(const Identity& who, const Attributes& what) const;
  Response forbidden(const Identity& who, const Attributes& what, const k8s::ResourceType* type) const;
  RbacObjects rbac_objects() const;

  // Stores `obj` (after server-side bookkeeping) and notifies watchers.
  // Returns the response for a successful write.
  // `who` is checked as the RBAC storage checks writes of roles and bindings.
  Response commit(const Identity& who, const Target& t, const nlohmann::json* old, nlohmann::json obj, bool dry_run);
  void store_put(const TypeInfo& info, const std::string& key, nlohmann::json obj, const char* event);
  void store_erase(const TypeInfo& info, const std::string& key);
  void remove_object(const TypeInfo& info, const std::string& key, bool cascade);
  void notify(const TypeInfo& info, const char* type, const nlohmann::json& obj);
  static bool is_cluster_role(const TypeInfo& info);
  void aggregate_cluster_roles();
  nlohmann::json* find(const TypeInfo& info, const std::string& key);
  bool namespace_exists(const std::string& ns);
  bool namespace_terminating(const std::string& ns);
  nlohmann::json output(const TypeInfo& info, const std::string& version, const nlohmann::json& obj) const;

  void on_write(const TypeInfo& info, const nlohmann::json* old, nlohmann::json& obj);
  // cert-manager's CA issuer (cert_manager.cpp): signs a CertificateRequest
  // whose Issuer/ClusterIssuer has spec.ca.secretName naming a Secret with
  // tls.crt and tls.key, filling status as cert-manager does.
  void issue_certificate_request(const nlohmann::json* old, nlohmann::json& obj);
  // A write of an Issuer, ClusterIssuer or Secret queues the requests still
  // waiting for an issuer; reconciling one signs it when it now can.
  void requeue_certificate_requests();
  void reconcile_certificate_request(const TypeInfo& info, const std::string& key);

  // The controllers (controllers.cpp). Controller kinds: Deployment,
  // ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job.
  static bool is_controller(const k8s::ResourceType& t);
  // Server-side defaults of controller kinds (replicas, strategies, a Job's
  // selector and limits), as the API server fills them in on writes.
  void defaults(const TypeInfo& info, const nlohmann::json* old, nlohmann::json& obj);
  // A Pod's status: Pending, or once `done` Running and Ready (Succeeded
  // with restartPolicy Never/OnFailure).
  void pod_status(nlohmann::json& pod, bool done);
  void enqueue(const TypeInfo& info, const std::string& key);
  void enqueue_owner(const nlohmann::json& obj);  // its controller, if that exists
  // Runs queued controllers until nothing changes.
  void settle();
  // Stores `updated` as kube-controller-manager's write when it differs;
  // returns whether it did.
  bool controller_write(const TypeInfo& info, const std::string& key, nlohmann::json updated, k8s::Scope scope);
  std::string create_child(const TypeInfo& info, nlohmann::json obj);  // returns its key
  std::vector<std::string> owned(const TypeInfo& info, const std::string& ns, const std::string& uid);
  // A Pod from the owner's spec.template, with `extra_labels` added and
  // `extra_spec` fields set, on `node`.
  void create_pod(const TypeInfo& owner_info, const nlohmann::json& owner, const std::string& name,
                  const nlohmann::json& extra_labels, const std::string& node,
                  const nlohmann::json& extra_spec = nlohmann::json::object());
  // The Nodes of a new cluster (ClusterEnv::nodes): <cluster>-node-<i>,
  // Ready, with capacity, allocatable, zone labels and the release's kubelet.
  void seed_nodes();
  nlohmann::json node_object(const std::string& name, int index);  // a Ready Node, the index-th

  // Where Pods run: the listed Nodes, else one unlisted <cluster>-node-1.
  std::vector<std::string> node_names();

  // Services (services.cpp): cluster IP, node ports and load balancer of a
  // Service about to be stored; a refusal (422) when what it asks for is taken.
  Response allocate_service(const nlohmann::json* old, nlohmann::json& obj);
  void assign_load_balancer(const TypeInfo& info, const std::string& key);
  void reconcile_deployment(const TypeInfo& info, const std::string& key);
  void reconcile_replica_set(const TypeInfo& info, const std::string& key);  // and ReplicationController
  void reconcile_stateful_set(const TypeInfo& info, const std::string& key);
  void reconcile_daemon_set(const TypeInfo& info, const std::string& key);
  void reconcile_job(const TypeInfo& info, const std::string& key);

  void register_crd(const nlohmann::json& crd, bool established);
  void unregister_crd(const nlohmann::json& crd);
  void schedule(Pending p);

  const TypeInfo* find_type(const std::string& group, const std::string& version, const std::string& resource) const;
  const TypeInfo* find_kind(const std::string& group, const std::string& version, const std::string& kind) const;
  std::vector<const TypeInfo*> all_types() const;

  // Discovery and OpenAPI (discovery.cpp).
  Response version() const;
  Response discovery_root(const Request& r, bool core) const;
  Response discovery_group(const std::string& group) const;
  Response discovery_resources(const std::string& group, const std::string& version) const;
  Response openapi_index() const;
  Response openapi_v2() const;
  Response openapi_document(const std::string& gv_path) const;
  std::string openapi_hash(const std::string& group, const std::string& version) const;

  std::string next_rv();
  std::string now() const;

  size_t m_index;
  std::string m_name;
  std::string m_prefix;  // "/clusters/<name>" or "" on an own port
  const ClusterEnv& m_env;
  const std::vector<TypeInfo>* m_builtin;  // the built-in types of the release posed as
  bool m_seeded = false;
  bool m_dirty = false;
  bool m_aggregating = false;  // aggregate_cluster_roles() is running
  uint64_t m_rv = 1;
  uint64_t m_requests = 0;
  std::map<std::string, uint64_t> m_writes;
  uint64_t m_next_watch = 1;
  uint32_t m_next_ip = 10;
  std::map<std::string, std::map<std::string, nlohmann::json>> m_objects;  // store key -> ns/name -> object
  std::map<std::string, TypeInfo> m_custom_types;                          // group/version/resource
  std::map<uint64_t, Watch> m_watches;
  std::vector<Pending> m_pending;  // a heap on due_ms
  std::vector<std::pair<const TypeInfo*, std::string>> m_queue;  // controllers to run
  bool m_settling = false;
  std::set<std::string> m_cert_fingerprints;
};

// Whether an Accept header asks for a meta.k8s.io Table (kubectl get).
bool wants_table(const std::string& accept);
// A meta.k8s.io/v1 Table of `items` with the columns a real server prints
// for `type` (tables.cpp); rows carry PartialObjectMetadata.
nlohmann::json table(const k8s::ResourceType& type, const std::vector<const nlohmann::json*>& items,
                     const std::string& resource_version, int64_t now_s);

// An inclusive IPv4 range in host byte order.
struct IpRange {
  uint32_t first = 0;
  uint32_t last = 0;
};
// "198.51.100.0/24" (network and broadcast left out) or "A.B.C.D-E.F.G.H".
// Throws emco::Error(invalid) otherwise.
IpRange parse_ip_range(const std::string& text);

// Milliseconds since the Unix epoch.
int64_t unix_ms();

// A random RFC 4122 version 4 UID, as metadata.uid.
std::string new_uid();

// A Kubernetes Status error body.
Response status_error(int code, const std::string& reason, const std::string& message,
                      const nlohmann::json& details = nullptr);

}  // namespace emco::sim::detail
