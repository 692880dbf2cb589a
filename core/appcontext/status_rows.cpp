#include "core/appcontext/status_rows.hpp"

#include "core/appcontext/rows.hpp"
#include "core/store/store_impl.hpp"

namespace emco::appcontext {

void set_resource_status(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                         const std::string& resource, const std::string& status, const std::string& message,
                         const std::string& time) {
  st.write([&] {
    auto& s = st.impl().stmt(
        "INSERT INTO ac_resource_status(ctx, app, cluster, resource, status, message, time) VALUES(?,?,?,?,?,?,?) "
        "ON CONFLICT(ctx, app, cluster, resource) DO UPDATE SET status = excluded.status, message = "
        "excluded.message, time = excluded.time");
    s.bind(1, ctx);
    s.bind(2, app);
    s.bind(3, cluster);
    s.bind(4, resource);
    s.bind(5, status);
    s.bind(6, message);
    s.bind(7, time);
    s.exec();
  });
}

void set_resource_ready(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                        const std::string& resource, const std::string& ready) {
  st.write([&] {
    auto& s = st.impl().stmt(
        "INSERT INTO ac_resource_status(ctx, app, cluster, resource, ready) VALUES(?,?,?,?,?) "
        "ON CONFLICT(ctx, app, cluster, resource) DO UPDATE SET ready = excluded.ready");
    s.bind(1, ctx);
    s.bind(2, app);
    s.bind(3, cluster);
    s.bind(4, resource);
    s.bind(5, ready);
    s.exec();
  });
}

namespace {
ResourceState resource_state_row(SQLite::Statement& s) {
  ResourceState r;
  r.app = s.getColumn(0).getString();
  r.cluster = s.getColumn(1).getString();
  r.resource = s.getColumn(2).getString();
  r.status = s.getColumn(3).getString();
  r.message = s.getColumn(4).getString();
  r.time = s.getColumn(5).getString();
  r.ready = s.getColumn(6).getString();
  return r;
}
}  // namespace

std::vector<ResourceState> resource_states(store::Store& st, const std::string& ctx) {
  std::vector<ResourceState> out;
  auto& s = st.impl().stmt(
      "SELECT app, cluster, resource, status, message, time, ready FROM ac_resource_status WHERE ctx = ? "
      "ORDER BY app, cluster, resource");
  s.bind(1, ctx);
  while (s.executeStep()) out.push_back(resource_state_row(s));
  return out;
}

std::optional<ResourceState> resource_state(store::Store& st, const std::string& ctx, const std::string& app,
                                            const std::string& cluster, const std::string& resource) {
  auto& s = st.impl().stmt(
      "SELECT app, cluster, resource, status, message, time, ready FROM ac_resource_status WHERE ctx = ? AND app = ? "
      "AND cluster = ? AND resource = ?");
  s.bind(1, ctx);
  s.bind(2, app);
  s.bind(3, cluster);
  s.bind(4, resource);
  if (!s.executeStep()) return std::nullopt;
  ResourceState r = resource_state_row(s);
  s.reset();
  return r;
}

void for_each_resource_status(store::Store& st, const std::string& ctx,
                              const std::function<void(std::string_view app, std::string_view cluster,
                                                       std::string_view resource, std::string_view status)>& fn) {
  auto& s = st.impl().stmt("SELECT app, cluster, resource, status FROM ac_resource_status WHERE ctx = ?");
  s.bind(1, ctx);
  while (s.executeStep())
    fn(blob_view(s.getColumn(0)), blob_view(s.getColumn(1)), blob_view(s.getColumn(2)), blob_view(s.getColumn(3)));
  s.reset();
}

void set_cluster_state(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                       const std::string& conn, const std::string& time) {
  st.write([&] {
    auto& s = st.impl().stmt(
        "INSERT INTO ac_cluster_status(ctx, app, cluster, connectivity, time) VALUES(?,?,?,?,?) "
        "ON CONFLICT(ctx, app, cluster) DO UPDATE SET connectivity = excluded.connectivity, time = excluded.time");
    s.bind(1, ctx);
    s.bind(2, app);
    s.bind(3, cluster);
    s.bind(4, conn);
    s.bind(5, time);
    s.exec();
  });
}

void set_cluster_readback(store::Store& st, const std::string& ctx, const std::string& app,
                          const std::string& cluster, const std::string& readback, const std::string& time) {
  st.write([&] {
    auto& s = st.impl().stmt(
        "INSERT INTO ac_cluster_status(ctx, app, cluster, readback, time) VALUES(?,?,?,?,?) "
        "ON CONFLICT(ctx, app, cluster) DO UPDATE SET readback = excluded.readback, time = excluded.time");
    s.bind(1, ctx);
    s.bind(2, app);
    s.bind(3, cluster);
    s.bind(4, readback);
    s.bind(5, time);
    s.exec();
  });
}

std::vector<ClusterState> cluster_states(store::Store& st, const std::string& ctx) {
  std::vector<ClusterState> out;
  auto& s = st.impl().stmt(
      "SELECT app, cluster, connectivity, readback, time FROM ac_cluster_status WHERE ctx = ? ORDER BY app, cluster");
  s.bind(1, ctx);
  while (s.executeStep())
    out.push_back({s.getColumn(0).getString(), s.getColumn(1).getString(), s.getColumn(2).getString(),
                   s.getColumn(3).getString(), s.getColumn(4).getString()});
  return out;
}

void clear_states(store::Store& st, const std::string& ctx) {
  st.write([&] {
    for (const char* sql : {"DELETE FROM ac_resource_status WHERE ctx = ?", "DELETE FROM ac_cluster_status WHERE ctx = ?"}) {
      auto& s = st.impl().stmt(sql);
      s.bind(1, ctx);
      s.exec();
    }
  });
}

}  // namespace emco::appcontext
