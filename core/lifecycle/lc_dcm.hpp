#pragma once
// What a standard or privileged (level 1) logical cloud puts on its clusters
// (spec/logical-clouds.md "Level 1"): the cloud as read from the workspace,
// the AppContext of per-cluster objects, the user's key, CSR and kubeconfig,
// and the per-cluster status `emco lc status` shows.
//
// Secrets: the key and kubeconfigs these functions make are returned to the
// caller only; nothing here prints or logs them.

#include <map>
#include <string>
#include <vector>

#include "core/appcontext/appcontext.hpp"
#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"

namespace emco::lifecycle::lc {

struct Permission {
  std::string name;  // the userPermission resource's name
  std::string ns;    // "" = cluster-wide (ClusterRole + ClusterRoleBinding)
  std::vector<std::string> api_groups, resources, verbs;
};

struct Quota {
  std::string name;
  std::map<std::string, std::string> hard;
};

struct ClusterRef {
  std::string ref;      // the clusterReference resource's name
  std::string cluster;  // "<provider>+<cluster>"
  std::string gitops;   // the cluster's gitOpsType ("" for a cluster reached with its kubeconfig)
};

struct Cloud {
  resource::Key key;
  std::string project, name;
  std::string level;  // "0" or "1"
  std::string ns;     // spec.namespace
  std::string user;   // spec.user.userName
  std::map<std::string, std::string> labels;
  std::vector<Permission> permissions;  // in listing order (the index i of "<lc>-role<i>")
  std::vector<Quota> quotas;
  std::vector<ClusterRef> clusters;     // by reference name
};

// Reads the cloud and its children. Error(not_found) when it does not exist.
Cloud load(store::Store& st, const resource::Key& lc);

// Checks what instantiating a level-1 cloud needs (namespace, user, a
// cluster reference, a permission for the primary namespace); throws
// Error(conflict|invalid) saying what is missing and how to add it.
void check_level1(const Cloud& c);

// "<lc>-<ns>-user-csr"
std::string csr_name(const Cloud& c);

// The AppContext of the cloud's objects: meta {Project, LogicalCloud,
// LogicalCloudNamespace, LogicalCloudLevel "1", Level "0", Namespace
// "default"}, app "logical-cloud", per cluster in this order: Namespace,
// CertificateSigningRequest (direct clusters; request = `csr_pem`) or
// ServiceAccount "<ns>-sa" (GitOps non-Anthos clusters), ResourceQuotas,
// then per permission its Role/ClusterRole and binding. `previous` (may be
// null): the cloud's running context, whose CSR manifest is kept for the
// clusters it already has (their certificates stay valid).
appcontext::AppContext build_context(const Cloud& c, const std::string& csr_pem, const appcontext::AppContext* previous,
                                     const std::string& created);

// A new 4096-bit RSA key, PKCS#1 PEM (OpenSSL).
std::string generate_key();
// A PEM certificate request with subject CN=`common_name`, signed with `key_pem`.
std::string make_csr(const std::string& key_pem, const std::string& common_name);

// Per cluster of a cloud: its objects' deploy states and whether the user's
// credentials were issued.
struct ObjectStatus {
  std::string resource;  // "<name>+<Kind>"
  std::string status;    // Pending, Applied, Failed, Deleted, ...
  std::string message;
};
struct ClusterStatus {
  std::string cluster;  // "<provider>+<cluster>"
  std::string gitops;   // gitOpsType or ""
  std::vector<ObjectStatus> objects;
  bool credentials = false;
};
struct Status {
  std::string state;    // the cloud's lifecycle state
  std::string level;
  std::string context;  // the running context ("" for none)
  std::string context_status;
  std::vector<ClusterStatus> clusters;
};
Status status(store::Store& st, const resource::Key& lc);

}  // namespace emco::lifecycle::lc
