#include "core/appcontext/queue_rows.hpp"

#include "core/appcontext/rows.hpp"
#include "core/store/store_impl.hpp"
#include "core/util/error.hpp"

namespace emco::appcontext {

int64_t enqueue(store::Store& st, const std::string& ctx, const std::string& ev, const std::string& ucid) {
  int64_t seq = 0;
  st.write([&] {
    auto& impl = st.impl();
    if (!exists_impl(impl, ctx)) no_context(ctx);
    {
      auto& s = impl.stmt("SELECT COALESCE(MAX(seq), 0) + 1 FROM ac_queue WHERE ctx = ?");
      s.bind(1, ctx);
      s.executeStep();
      seq = s.getColumn(0).getInt64();
      s.reset();
    }
    auto& s = impl.stmt("INSERT INTO ac_queue(ctx, seq, event, ucid) VALUES(?,?,?,?)");
    s.bind(1, ctx);
    s.bind(2, seq);
    s.bind(3, ev);
    s.bind(4, ucid);
    s.exec();
    auto& a = impl.stmt("INSERT OR IGNORE INTO ac_active(ctx) VALUES(?)");
    a.bind(1, ctx);
    a.exec();
  });
  return seq;
}

namespace {
QueueEntry queue_row(SQLite::Statement& s) {
  return {s.getColumn(0).getInt64(), s.getColumn(1).getString(), s.getColumn(2).getString(),
          s.getColumn(3).getString(), s.getColumn(4).getString()};
}
}  // namespace

std::optional<QueueEntry> next_pending(store::Store& st, const std::string& ctx) {
  auto& s = st.impl().stmt(
      "SELECT seq, event, ucid, status, message FROM ac_queue WHERE ctx = ? AND status = 'Pending' ORDER BY seq LIMIT 1");
  s.bind(1, ctx);
  if (!s.executeStep()) return std::nullopt;
  QueueEntry e = queue_row(s);
  s.reset();
  return e;
}

void mark(store::Store& st, const std::string& ctx, int64_t seq, const std::string& status,
          const std::string& message) {
  st.write([&] {
    auto& s = st.impl().stmt("UPDATE ac_queue SET status = ?, message = ? WHERE ctx = ? AND seq = ?");
    s.bind(1, status);
    s.bind(2, message);
    s.bind(3, ctx);
    s.bind(4, seq);
    if (s.exec() == 0)
      fail(ErrorKind::not_found, "queue element " + std::to_string(seq) + " of appcontext '" + ctx + "' not found");
  });
}

std::vector<QueueEntry> queue(store::Store& st, const std::string& ctx) {
  std::vector<QueueEntry> out;
  auto& s = st.impl().stmt("SELECT seq, event, ucid, status, message FROM ac_queue WHERE ctx = ? ORDER BY seq");
  s.bind(1, ctx);
  while (s.executeStep()) out.push_back(queue_row(s));
  return out;
}

std::vector<std::string> active_contexts(store::Store& st) {
  std::vector<std::string> out;
  auto& s = st.impl().stmt("SELECT a.ctx FROM ac_active a JOIN ac_contexts c ON c.id = a.ctx ORDER BY c.seq");
  while (s.executeStep()) out.push_back(s.getColumn(0).getString());
  return out;
}

void deactivate(store::Store& st, const std::string& ctx) {
  st.write([&] {
    auto& s = st.impl().stmt("DELETE FROM ac_active WHERE ctx = ?");
    s.bind(1, ctx);
    s.exec();
  });
}

}  // namespace emco::appcontext
