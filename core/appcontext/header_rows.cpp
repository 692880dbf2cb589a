#include "core/appcontext/header_rows.hpp"

#include "core/appcontext/rows.hpp"
#include "core/store/database.hpp"

namespace emco::appcontext {

Header header(store::Store& st, const std::string& id) {
  auto h = find_header(st, id);
  if (!h) no_context(id);
  return std::move(*h);
}

std::optional<Header> find_header(store::Store& st, const std::string& id) {
  auto& s = st.database().statement(k_header_sql);
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  Header h;
  h.id = id;
  h.owner_kind = s.str(0);
  h.owner_key = s.str(1);
  h.meta = meta_from(s.str(2));
  h.status = s.str(3);
  h.desired = s.str(4);
  h.parent = s.str(5);
  h.children = strings_from(s.str(6));
  h.status_context = s.str(7);
  h.stop = s.int64(8) != 0;
  h.pending_terminate = s.int64(9) != 0;
  h.revision = s.int64(10);
  h.created = s.str(11);
  s.reset();
  return h;
}

namespace {

// meta_field's read: `throw_missing`: Error(not_found) for a context that is not stored, else nullopt.
std::optional<std::string> read_meta_field(store::Store& st, const std::string& id, const std::string& name,
                                           bool throw_missing) {
  auto& s = st.database().statement(k_header_sql);
  s.bind(1, id);
  if (!s.step()) {
    if (throw_missing) no_context(id);
    return std::nullopt;
  }
  std::optional<std::string> out = meta_value(s.text(2), name);
  s.reset();
  return out;
}

}  // namespace

std::optional<std::string> meta_field(store::Store& st, const std::string& id, const std::string& name) {
  return read_meta_field(st, id, name, true);
}

std::optional<std::string> find_meta_field(store::Store& st, const std::string& id, const std::string& name) {
  return read_meta_field(st, id, name, false);
}

namespace {

void update_column(store::Store& st, const std::string& id, const std::string& sql, const std::string& value) {
  st.write([&] {
    auto& s = st.database().statement(sql);
    s.bind(1, value);
    s.bind(2, id);
    if (s.exec() == 0) no_context(id);
  });
}

void update_flag(store::Store& st, const std::string& id, const std::string& sql, bool value) {
  st.write([&] {
    auto& s = st.database().statement(sql);
    s.bind(1, value ? 1 : 0);
    s.bind(2, id);
    if (s.exec() == 0) no_context(id);
  });
}

}  // namespace

void set_status(store::Store& st, const std::string& id, const std::string& current) {
  update_column(st, id, "UPDATE ac_contexts SET status = ? WHERE id = ?", current);
}
void set_desired(store::Store& st, const std::string& id, const std::string& desired) {
  update_column(st, id, "UPDATE ac_contexts SET desired = ? WHERE id = ?", desired);
}
void set_stop(store::Store& st, const std::string& id, bool stop) {
  update_flag(st, id, "UPDATE ac_contexts SET stop_flag = ? WHERE id = ?", stop);
}
void set_pending_terminate(store::Store& st, const std::string& id, bool flag) {
  update_flag(st, id, "UPDATE ac_contexts SET pending_terminate = ? WHERE id = ?", flag);
}
void set_owner(store::Store& st, const std::string& id, const resource::Key& owner) {
  update_column(st, id, "UPDATE ac_contexts SET owner_key = ? WHERE id = ?", owner.str());
}
void set_meta(store::Store& st, const std::string& id, const std::string& name, const std::string& value) {
  st.write([&] {
    Header h = header(st, id);
    h.meta[name] = value;
    update_column(st, id, "UPDATE ac_contexts SET meta = ? WHERE id = ?", meta_text(h.meta));
  });
}

}  // namespace emco::appcontext
