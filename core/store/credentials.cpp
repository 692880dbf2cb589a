#include "core/store/credentials.hpp"

#include "core/store/database.hpp"

namespace emco::store {

std::string credential_identity(const std::string& owner, const std::string& name) {
  return std::string("credential", 11) + owner + '\0' + name;
}

namespace {

std::string credential_what(const std::string& owner, const std::string& name) {
  return "the credential " + (name.empty() ? std::string("key") : "'" + name + "'") + " of '" + owner + "'";
}

}  // namespace

void put_credential(Store& st, const std::string& owner, const std::string& name, const std::string& secret,
                    const std::string& created) {
  st.write([&] {
    const std::string value = st.seal_secret(secret, credential_identity(owner, name), credential_what(owner, name));
    auto& s = st.database().statement("INSERT INTO credentials(owner, cluster, kubeconfig, created) VALUES(?, ?, ?, ?) "
        "ON CONFLICT(owner, cluster) DO UPDATE SET kubeconfig = excluded.kubeconfig, created = excluded.created");
    s.bind(1, owner);
    s.bind(2, name);
    s.bind(3, value);
    s.bind(4, created);
    s.exec();
  });
}

std::optional<std::string> credential(Store& st, const std::string& owner, const std::string& name) {
  auto& s = st.database().statement("SELECT kubeconfig FROM credentials WHERE owner = ? AND cluster = ?");
  s.bind(1, owner);
  s.bind(2, name);
  if (!s.step()) return std::nullopt;
  const std::string value = s.str(0);
  s.reset();
  auto plain = st.open_secret(value, credential_identity(owner, name));
  if (!plain) st.fail_sealed(value, credential_what(owner, name));
  return plain;
}

std::vector<std::string> credential_names(Store& st, const std::string& owner) {
  auto& s = st.database().statement("SELECT cluster FROM credentials WHERE owner = ? AND cluster <> '' ORDER BY cluster");
  s.bind(1, owner);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.str(0));
  s.reset();
  return out;
}

void remove_credentials(Store& st, const std::string& owner, const std::string& name) {
  st.write([&] {
    auto& s = st.database().statement(name.empty() ? "DELETE FROM credentials WHERE owner = ?"
                                          : "DELETE FROM credentials WHERE owner = ? AND cluster = ?");
    s.bind(1, owner);
    if (!name.empty()) s.bind(2, name);
    s.exec();
  });
}

}  // namespace emco::store
