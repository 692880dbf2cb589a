#include "core/lifecycle/credentials.hpp"

#include "core/store/credentials.hpp"

namespace emco::lifecycle {

void store_tenant_kubeconfig(store::Store& st, const resource::Key& lc, const std::string& cluster,
                             const std::string& kubeconfig, const std::string& created) {
  store::put_credential(st, lc.str(), cluster, kubeconfig, created);
}

std::optional<std::string> tenant_kubeconfig(store::Store& st, const resource::Key& lc, const std::string& cluster) {
  return store::credential(st, lc.str(), cluster);
}

std::vector<std::string> tenant_clusters(store::Store& st, const resource::Key& lc) {
  return store::credential_names(st, lc.str());
}

void remove_tenant_kubeconfigs(store::Store& st, const resource::Key& lc, const std::string& cluster) {
  store::remove_credentials(st, lc.str(), cluster);
}

void store_tenant_key(store::Store& st, const resource::Key& lc, const std::string& key_pem, const std::string& created) {
  store_tenant_kubeconfig(st, lc, "", key_pem, created);
}

std::optional<std::string> tenant_key(store::Store& st, const resource::Key& lc) { return tenant_kubeconfig(st, lc, ""); }

}  // namespace emco::lifecycle
