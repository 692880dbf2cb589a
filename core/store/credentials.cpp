#include "core/store/credentials.hpp"

#include "core/store/store_impl.hpp"

namespace emco::store {

void put_credential(Store& st, const std::string& owner, const std::string& name, const std::string& secret,
                    const std::string& created) {
  st.write([&] {
    auto& s = st.impl().stmt("INSERT OR REPLACE INTO credentials(owner, cluster, kubeconfig, created) VALUES(?, ?, ?, ?)");
    s.bind(1, owner);
    s.bind(2, name);
    s.bind(3, secret);
    s.bind(4, created);
    s.exec();
  });
}

std::optional<std::string> credential(Store& st, const std::string& owner, const std::string& name) {
  auto& s = st.impl().stmt("SELECT kubeconfig FROM credentials WHERE owner = ? AND cluster = ?");
  s.bind(1, owner);
  s.bind(2, name);
  std::optional<std::string> out;
  if (s.executeStep()) out = s.getColumn(0).getString();
  s.reset();
  return out;
}

std::vector<std::string> credential_names(Store& st, const std::string& owner) {
  auto& s = st.impl().stmt("SELECT cluster FROM credentials WHERE owner = ? AND cluster <> '' ORDER BY cluster");
  s.bind(1, owner);
  std::vector<std::string> out;
  while (s.executeStep()) out.push_back(s.getColumn(0).getString());
  s.reset();
  return out;
}

void remove_credentials(Store& st, const std::string& owner, const std::string& name) {
  st.write([&] {
    auto& s = st.impl().stmt(name.empty() ? "DELETE FROM credentials WHERE owner = ?"
                                          : "DELETE FROM credentials WHERE owner = ? AND cluster = ?");
    s.bind(1, owner);
    if (!name.empty()) s.bind(2, name);
    s.exec();
  });
}

}  // namespace emco::store
