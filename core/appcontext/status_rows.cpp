#include "core/appcontext/status_rows.hpp"

#include "core/appcontext/rows.hpp"
#include "core/store/database.hpp"

namespace emco::appcontext {

void put_resource_status(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                         const std::string& resource, const std::string& status, const std::string& message,
                         const std::string& time) {
  auto& s = st.database().statement(
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
  // Callers record a batch in one transaction: on a server the rows go in
  // one pipeline (store::Statement::exec_later).
  s.exec_later();
}

void set_resource_status(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                         const std::string& resource, const std::string& status, const std::string& message,
                         const std::string& time) {
  st.write([&] { put_resource_status(st, ctx, app, cluster, resource, status, message, time); });
}

void set_resource_ready(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                        const std::string& resource, const std::string& ready) {
  st.write([&] {
    auto& s = st.database().statement(
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
ResourceState resource_state_row(store::Statement& s) {
  ResourceState r;
  r.app = s.str(0);
  r.cluster = s.str(1);
  r.resource = s.str(2);
  r.status = s.str(3);
  r.message = s.str(4);
  r.time = s.str(5);
  r.ready = s.str(6);
  return r;
}
}  // namespace

std::vector<ResourceState> resource_states(store::Store& st, const std::string& ctx) {
  std::vector<ResourceState> out;
  auto& s = st.database().statement(
      "SELECT app, cluster, resource, status, message, time, ready FROM ac_resource_status WHERE ctx = ? "
      "ORDER BY app, cluster, resource");
  s.bind(1, ctx);
  while (s.step()) out.push_back(resource_state_row(s));
  return out;
}

std::optional<ResourceState> resource_state(store::Store& st, const std::string& ctx, const std::string& app,
                                            const std::string& cluster, const std::string& resource) {
  auto& s = st.database().statement(
      "SELECT app, cluster, resource, status, message, time, ready FROM ac_resource_status WHERE ctx = ? AND app = ? "
      "AND cluster = ? AND resource = ?");
  s.bind(1, ctx);
  s.bind(2, app);
  s.bind(3, cluster);
  s.bind(4, resource);
  if (!s.step()) return std::nullopt;
  ResourceState r = resource_state_row(s);
  s.reset();
  return r;
}

void for_each_resource_status(store::Store& st, const std::string& ctx, const std::string& app,
                              const std::function<void(std::string_view cluster, std::string_view resource,
                                                       std::string_view status)>& fn) {
  auto& s = st.database().statement("SELECT cluster, resource, status FROM ac_resource_status WHERE ctx = ? AND app = ? ORDER BY cluster, resource");
  s.bind(1, ctx);
  s.bind(2, app);
  while (s.step())
    fn(s.text(0), s.text(1), s.text(2));
  s.reset();
}

void put_cluster_state(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                       const std::string& conn, const std::string& time) {
  auto& s = st.database().statement(
      "INSERT INTO ac_cluster_status(ctx, app, cluster, connectivity, time) VALUES(?,?,?,?,?) "
      "ON CONFLICT(ctx, app, cluster) DO UPDATE SET connectivity = excluded.connectivity, time = excluded.time");
  s.bind(1, ctx);
  s.bind(2, app);
  s.bind(3, cluster);
  s.bind(4, conn);
  s.bind(5, time);
  s.exec_later();
}

void set_cluster_state(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                       const std::string& conn, const std::string& time) {
  st.write([&] { put_cluster_state(st, ctx, app, cluster, conn, time); });
}

void set_cluster_readback(store::Store& st, const std::string& ctx, const std::string& app,
                          const std::string& cluster, const std::string& readback, const std::string& time) {
  st.write([&] {
    auto& s = st.database().statement(
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
  auto& s = st.database().statement(
      "SELECT app, cluster, connectivity, readback, time FROM ac_cluster_status WHERE ctx = ? ORDER BY app, cluster");
  s.bind(1, ctx);
  while (s.step())
    out.push_back({s.str(0), s.str(1), s.str(2),
                   s.str(3), s.str(4)});
  return out;
}

void clear_states(store::Store& st, const std::string& ctx) {
  st.write([&] {
    for (const char* sql : {"DELETE FROM ac_resource_status WHERE ctx = ?", "DELETE FROM ac_cluster_status WHERE ctx = ?"}) {
      auto& s = st.database().statement(sql);
      s.bind(1, ctx);
      s.exec();
    }
  });
}

}  // namespace emco::appcontext
