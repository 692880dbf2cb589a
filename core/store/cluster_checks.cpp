#include "core/store/cluster_checks.hpp"

#include <nlohmann/json.hpp>

#include "core/store/database.hpp"
#include "core/util/error.hpp"

namespace emco::store {

namespace {

ClusterCheck row_to_check(Statement& s, int first) {
  ClusterCheck c;
  c.time = s.str(first);
  c.reachable = s.int64(first + 1) != 0;
  c.error = s.str(first + 2);
  c.version = s.str(first + 3);
  return c;
}

}  // namespace

void record_cluster_check(Store& st, const resource::Key& cluster, const ClusterCheck& check) {
  st.write([&] {
    auto r = st.get(cluster);
    if (!r) fail(ErrorKind::not_found, describe(resource::kind("cluster"), cluster) + " does not exist");
    auto& s = st.database().statement(
        "INSERT INTO cluster_checks(resource_id, time, reachable, error, version) VALUES(?, ?, ?, ?, ?) "
        "ON CONFLICT(resource_id) DO UPDATE SET time = excluded.time, reachable = excluded.reachable, "
        "error = excluded.error, version = excluded.version");
    s.bind(1, r->id);
    s.bind(2, check.time);
    s.bind(3, int64_t{check.reachable ? 1 : 0});
    s.bind(4, check.error);
    s.bind(5, check.version);
    s.exec();
  });
}

std::optional<ClusterCheck> cluster_check(Store& st, const resource::Key& cluster) {
  auto& s = st.database().statement(
      "SELECT c.time, c.reachable, c.error, c.version FROM cluster_checks c JOIN resources r ON r.id = c.resource_id "
      "WHERE r.key = ?");
  s.bind(1, cluster.str());
  if (!s.step()) return std::nullopt;
  ClusterCheck c = row_to_check(s, 0);
  s.reset();
  return c;
}

std::map<std::string, ClusterCheck> cluster_checks(Store& st) {
  auto& s = st.database().statement(
      "SELECT r.key, c.time, c.reachable, c.error, c.version FROM cluster_checks c JOIN resources r ON r.id = c.resource_id");
  std::map<std::string, ClusterCheck> out;
  while (s.step()) out.emplace(s.str(0), row_to_check(s, 1));
  s.reset();
  return out;
}

std::string cluster_status_json(const ClusterCheck& check) {
  nlohmann::json last = {{"time", check.time}, {"reachable", check.reachable}};
  if (!check.error.empty()) last["error"] = check.error;
  if (!check.version.empty()) last["serverVersion"] = check.version;
  return nlohmann::json{{"lastCheck", last}}.dump();
}

}  // namespace emco::store
