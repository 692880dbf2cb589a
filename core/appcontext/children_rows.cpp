#include "core/appcontext/children_rows.hpp"

#include <nlohmann/json.hpp>

#include "core/appcontext/rows.hpp"
#include "core/store/database.hpp"

namespace emco::appcontext {

void owe_children(store::Store& st, const std::string& ctx, const std::vector<std::string>& replaced) {
  st.write([&] {
    auto& db = st.database();
    if (!exists_in(db, ctx)) no_context(ctx);
    auto& s = db.statement(
        "INSERT INTO ac_owed_children(ctx, replaced, error) VALUES(?, ?, '') "
        "ON CONFLICT(ctx) DO UPDATE SET replaced = excluded.replaced, error = ''");
    s.bind(1, ctx);
    s.bind(2, nlohmann::json(replaced).dump());
    s.exec();
  });
}

namespace {
OwedChildren owed_row(store::Statement& s) { return {s.str(0), strings_from(s.str(1)), s.str(2)}; }
}  // namespace

std::optional<OwedChildren> owed_children(store::Store& st, const std::string& ctx) {
  auto& s = st.database().statement("SELECT ctx, replaced, error FROM ac_owed_children WHERE ctx = ?");
  s.bind(1, ctx);
  if (!s.step()) return std::nullopt;
  OwedChildren o = owed_row(s);
  s.reset();
  return o;
}

std::vector<OwedChildren> owed_children_with_status(store::Store& st, const std::string& status) {
  std::vector<OwedChildren> out;
  auto& s = st.database().statement(
      "SELECT o.ctx, o.replaced, o.error FROM ac_owed_children o JOIN ac_contexts c ON c.id = o.ctx "
      "WHERE c.status = ? ORDER BY c.seq");
  s.bind(1, status);
  while (s.step()) out.push_back(owed_row(s));
  return out;
}

bool settle_children(store::Store& st, const std::string& ctx) {
  bool had = false;
  st.write([&] {
    auto& s = st.database().statement("DELETE FROM ac_owed_children WHERE ctx = ?");
    s.bind(1, ctx);
    had = s.exec() > 0;
  });
  return had;
}

void note_children_error(store::Store& st, const std::string& ctx, const std::string& error) {
  st.write([&] {
    auto& s = st.database().statement("UPDATE ac_owed_children SET error = ? WHERE ctx = ?");
    s.bind(1, error);
    s.bind(2, ctx);
    s.exec();
  });
}

}  // namespace emco::appcontext
