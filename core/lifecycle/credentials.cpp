#include "core/lifecycle/credentials.hpp"

#include "core/store/store_impl.hpp"

namespace emco::lifecycle {

void store_tenant_kubeconfig(store::Store& st, const resource::Key& lc, const std::string& cluster,
                             const std::string& kubeconfig, const std::string& created) {
  st.write([&] {
    auto& s = st.impl().stmt("INSERT OR REPLACE INTO credentials(owner, cluster, kubeconfig, created) VALUES(?, ?, ?, ?)");
    s.bind(1, lc.str());
    s.bind(2, cluster);
    s.bind(3, kubeconfig);
    s.bind(4, created);
    s.exec();
  });
}

std::optional<std::string> tenant_kubeconfig(store::Store& st, const resource::Key& lc, const std::string& cluster) {
  auto& s = st.impl().stmt("SELECT kubeconfig FROM credentials WHERE owner = ? AND cluster = ?");
  s.bind(1, lc.str());
  s.bind(2, cluster);
  std::optional<std::string> out;
  if (s.executeStep()) out = s.getColumn(0).getString();
  s.reset();
  return out;
}

std::vector<std::string> tenant_clusters(store::Store& st, const resource::Key& lc) {
  auto& s = st.impl().stmt("SELECT cluster FROM credentials WHERE owner = ? AND cluster <> '' ORDER BY cluster");
  s.bind(1, lc.str());
  std::vector<std::string> out;
  while (s.executeStep()) out.push_back(s.getColumn(0).getString());
  s.reset();
  return out;
}

void remove_tenant_kubeconfigs(store::Store& st, const resource::Key& lc, const std::string& cluster) {
  st.write([&] {
    auto& s = st.impl().stmt(cluster.empty() ? "DELETE FROM credentials WHERE owner = ?"
                                             : "DELETE FROM credentials WHERE owner = ? AND cluster = ?");
    s.bind(1, lc.str());
    if (!cluster.empty()) s.bind(2, cluster);
    s.exec();
  });
}

void store_tenant_key(store::Store& st, const resource::Key& lc, const std::string& key_pem, const std::string& created) {
  store_tenant_kubeconfig(st, lc, "", key_pem, created);
}

std::optional<std::string> tenant_key(store::Store& st, const resource::Key& lc) { return tenant_kubeconfig(st, lc, ""); }

}  // namespace emco::lifecycle
