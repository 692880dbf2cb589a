#pragma once
// ca-certs (spec/resources.md §11): intermediate CA certificates under one
// root for the clusters of a cluster provider or of logical clouds.
//
// Enrollment puts one cert-manager CertificateRequest per edge cluster on the
// issuing cluster and waits until the issuer signed them; distribution puts
// on every edge cluster the signed chain and its key (Secret), a
// ClusterIssuer using it, a KNCC ConfigCtrl that hands the chain to Istio
// and, for the logical-cloud variant, an Istio ProxyConfig per cloud
// namespace — names and shapes as upstream's ca-certs makes them.
//
// This header: the intent as read from the workspace and the objects and
// AppContexts made from it (pure functions, golden-tested); the lifecycle
// (lifecycle.cpp) runs them through the sync engine.
//
// Secrets: private keys pass through these functions into Secret manifests
// and the workspace's credentials table; nothing here prints or logs them.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/lifecycle/runtime.hpp"
#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"

namespace emco::plugins::ca_certs {

inline constexpr const char* k_enrollment_app = "cert-enrollment";
inline constexpr const char* k_distribution_app = "cert-distribution";

// The certificate's spec as enrollment uses it.
struct CaCert {
  resource::Key key;
  const resource::Kind* kind = nullptr;  // caCertCp or caCertLc
  std::string name;
  std::string what;             // how messages name it: "CA certificate 'cp1/cert1'"
  std::string issuing_cluster;  // "<provider>+<cluster>"
  std::string issuer_name, issuer_kind, issuer_group;
  bool is_ca = false;
  std::string duration;  // Go duration as cert-manager prints it ("8760h0m0s"); "" = issuer default
  int key_size = 2048;
  std::string signature_digest = "SHA256";  // of csrInfo.algorithm.signatureAlgorithm
  std::string common_name_prefix;
  std::vector<std::string> country, locality, postal_code, province, street_address, organization, units;
  std::vector<std::string> dns_names, email_addresses;
};

// One edge cluster: the certificate's clusters, each once.
struct EdgeCluster {
  std::string provider, cluster;
  std::vector<std::string> namespaces;  // logical-cloud variant: the namespaces of its clouds, in order
  std::string id() const { return provider + "+" + cluster; }
};

struct Intent {
  CaCert cert;
  bool logical_cloud = false;          // the project (logical-cloud) variant
  std::vector<EdgeCluster> clusters;   // in cluster-group order
};

// Reads the certificate `key` of kind `k` and its cluster groups (and, for
// the logical-cloud variant, its logical clouds). Throws Error(invalid or
// not_found) naming the document at fault: an issuing cluster that is not
// registered, a cluster group naming an unknown cluster, a logical cloud
// that does not exist, an issuer that is not cert-manager's, a bad duration
// or key, no clusters at all.
Intent load_intent(store::Store& st, const resource::Kind& k, const resource::Key& key);

// Upstream's object names: "<ctx>-<cert>-<provider>-<cluster>-<suffix>".
std::string object_name(const std::string& ctx, const CaCert& c, const EdgeCluster& e, const std::string& suffix);

// The CertificateRequest for `e` (csr_pem: its PEM request).
nlohmann::json certificate_request(const CaCert& c, const std::string& name, const std::string& csr_pem);

// The enrollment AppContext `id`: app cert-enrollment on the issuing cluster
// with one CertificateRequest per edge cluster ("<ctx>-...-cr", csrs by
// cluster id), owned by the certificate.
appcontext::AppContext enrollment_context(const Intent& in, const std::string& id,
                                          const std::map<std::string, std::string>& csrs, const std::string& created);

// What enrollment issued for one edge cluster.
struct Issued {
  std::string certificate;  // PEM (the CertificateRequest's status.certificate, decoded)
  std::string ca;           // PEM (status.ca, decoded)
  std::string key;          // PEM private key (from the workspace)
};

// The distribution AppContext `id`: app cert-distribution with, per edge
// cluster, Secret "<id>-...-ca" (namespace cert-manager), ClusterIssuer
// "<id>-...-issuer", the ProxyConfigs "<id>-...-<ns>-pc" (logical-cloud
// variant) and ConfigCtrl "<id>-...-kncc" (namespace istio-system).
appcontext::AppContext distribution_context(const Intent& in, const std::string& id,
                                            const std::map<std::string, Issued>& issued, const std::string& created);

// Reads a live CertificateRequest: the issued chain when it is signed
// (status.certificate and status.ca set, Ready True); nullopt while pending,
// with `problem` set when the issuer refused it (Denied, Failed or
// InvalidRequest conditions) and left empty while it is merely pending.
std::optional<Issued> issued_by(const nlohmann::json& live_cr, std::string& problem);

// A new RSA key of `bits` (PKCS#1 PEM) and a PEM certificate request for it
// with the certificate's subject, common name and SANs (OpenSSL EVP).
std::string generate_key(int bits);
std::string make_csr(const CaCert& c, const std::string& common_name, const std::string& key_pem);
// Upstream's common name: "<cert>-<provider>-<cluster>-ca[-<prefix>]".
std::string common_name(const CaCert& c, const EdgeCluster& e);

// One phase (enrollment or distribution) of a certificate as `emco cert
// status` shows it: its state, its current context and each object's
// deploy status there.
struct PhaseStatus {
  std::string phase;           // "enrollment", "distribution"
  std::string state;           // "Created", "Instantiated", "Terminated", ...
  std::string context;         // the last action's context ("" for none)
  std::string context_status;  // that context's status ("" when it is gone)
  struct Object {
    std::string cluster, resource, status, message;
  };
  std::vector<Object> objects;
  nlohmann::json actions = nlohmann::json::array();  // the phase's history
};
// Both phases of the certificate `key` of kind `k`; Error(not_found) when it does not exist.
std::vector<PhaseStatus> status(store::Store& st, const resource::Kind& k, const resource::Key& key);

// Adds the OperationOwner running the certificates' enrollment and
// distribution operations (lifecycle.cpp; install() calls it).
void install_lifecycle(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::ca_certs
