#include "core/appcontext/queue_rows.hpp"

#include "core/appcontext/rows.hpp"
#include "core/store/database.hpp"
#include "core/util/error.hpp"

namespace emco::appcontext {

int64_t enqueue(store::Store& st, const std::string& ctx, const std::string& ev, const std::string& ucid) {
  int64_t seq = 0;
  st.write([&] {
    auto& db = st.database();
    if (!exists_in(db, ctx)) no_context(ctx);
    {
      auto& s = db.statement("SELECT COALESCE(MAX(seq), 0) + 1 FROM ac_queue WHERE ctx = ?");
      s.bind(1, ctx);
      s.step();
      seq = s.int64(0);
      s.reset();
    }
    auto& s = db.statement("INSERT INTO ac_queue(ctx, seq, event, ucid) VALUES(?,?,?,?)");
    s.bind(1, ctx);
    s.bind(2, seq);
    s.bind(3, ev);
    s.bind(4, ucid);
    s.exec();
    auto& a = db.statement("INSERT INTO ac_active(ctx) VALUES(?) ON CONFLICT DO NOTHING");
    a.bind(1, ctx);
    a.exec();
  });
  return seq;
}

namespace {
QueueEntry queue_row(store::Statement& s) {
  return {s.int64(0), s.str(1), s.str(2),
          s.str(3), s.str(4)};
}
}  // namespace

std::optional<QueueEntry> next_pending(store::Store& st, const std::string& ctx) {
  auto& s = st.database().statement(
      "SELECT seq, event, ucid, status, message FROM ac_queue WHERE ctx = ? AND status = 'Pending' ORDER BY seq LIMIT 1");
  s.bind(1, ctx);
  if (!s.step()) return std::nullopt;
  QueueEntry e = queue_row(s);
  s.reset();
  return e;
}

bool has_pending(store::Store& st, const std::string& ctx) {
  auto& s = st.database().statement("SELECT 1 FROM ac_queue WHERE ctx = ? AND status = 'Pending' LIMIT 1");
  s.bind(1, ctx);
  const bool pending = s.step();
  s.reset();
  return pending;
}

void mark(store::Store& st, const std::string& ctx, int64_t seq, const std::string& status,
          const std::string& message) {
  st.write([&] {
    auto& s = st.database().statement("UPDATE ac_queue SET status = ?, message = ? WHERE ctx = ? AND seq = ?");
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
  auto& s = st.database().statement("SELECT seq, event, ucid, status, message FROM ac_queue WHERE ctx = ? ORDER BY seq");
  s.bind(1, ctx);
  while (s.step()) out.push_back(queue_row(s));
  return out;
}

std::vector<std::string> active_contexts(store::Store& st) {
  std::vector<std::string> out;
  auto& s = st.database().statement("SELECT a.ctx FROM ac_active a JOIN ac_contexts c ON c.id = a.ctx ORDER BY c.seq");
  while (s.step()) out.push_back(s.str(0));
  return out;
}

bool any_active(store::Store& st) {
  // ac_active's rows all name a context (ON DELETE CASCADE, foreign keys on):
  // no join is needed to know whether there is one.
  auto& s = st.database().statement("SELECT 1 FROM ac_active LIMIT 1");
  const bool any = s.step();
  s.reset();
  return any;
}

void deactivate(store::Store& st, const std::string& ctx) {
  st.write([&] {
    auto& s = st.database().statement("DELETE FROM ac_active WHERE ctx = ?");
    s.bind(1, ctx);
    s.exec();
  });
}

void activate(store::Store& st, const std::string& ctx) {
  st.write([&] {
    auto& s = st.database().statement("INSERT INTO ac_active(ctx) VALUES(?) ON CONFLICT DO NOTHING");
    s.bind(1, ctx);
    s.exec();
  });
}

}  // namespace emco::appcontext
