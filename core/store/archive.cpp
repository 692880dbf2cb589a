#include "core/store/archive.hpp"

#include <istream>
#include <set>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/store/credentials.hpp"
#include "core/store/database.hpp"
#include "core/store/plan_codec.hpp"
#include "core/store/vault.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/utf8.hpp"

namespace emco::store {

using nlohmann::json;

namespace {

constexpr int k_format_version = 1;

// Every table of the schema, parents before children (foreign keys hold
// after each insert), with its columns' types (I: INTEGER, T: TEXT, B: BLOB;
// any may be NULL), the row order (keys first, so two exports of the same
// rows are the same bytes on either backend) and its auto-assigned id
// column. A migration that adds a table or column adds it here;
// tests/reliability/workspace_move_test.cpp compares this list with a
// SQLite workspace's tables.
struct Column {
  const char* name;
  char type;
};
struct Table {
  const char* name;
  std::vector<Column> columns;
  const char* order;
  const char* identity = nullptr;
};
const std::vector<Table>& tables() {
  static const std::vector<Table> t = {
      {"meta", {{"name", 'T'}, {"value", 'T'}}, "name"},
      {"resources",
       {{"id", 'I'}, {"kind", 'T'}, {"key", 'T'}, {"key_json", 'T'}, {"key_id", 'T'}, {"parent_id", 'I'},
        {"data", 'T'}, {"state_info", 'T'}},
       "id", "id"},
      {"contents", {{"resource_id", 'I'}, {"ord", 'I'}, {"name", 'T'}, {"filename", 'T'}, {"data", 'B'}},
       "resource_id, ord"},
      {"refs", {{"from_id", 'I'}, {"to_id", 'I'}, {"field", 'T'}}, "from_id, to_id, field"},
      {"ac_contexts",
       {{"id", 'T'}, {"owner_kind", 'T'}, {"owner_key", 'T'}, {"meta", 'T'}, {"status", 'T'}, {"desired", 'T'},
        {"parent_id", 'T'}, {"children", 'T'}, {"status_ctx", 'T'}, {"stop_flag", 'I'}, {"pending_terminate", 'I'},
        {"revision", 'I'}, {"created", 'T'}, {"seq", 'I'}},
       "seq, id"},
      {"ac_contents", {{"hash", 'T'}, {"data", 'B'}}, "hash"},
      {"ac_plans", {{"digest", 'T'}, {"data", 'B'}}, "digest"},
      {"ac_plan_contents", {{"plan", 'T'}, {"hash", 'T'}}, "plan, hash"},
      {"ac_apps", {{"ctx", 'T'}, {"ord", 'I'}, {"app", 'T'}, {"deps", 'T'}, {"plan", 'T'}, {"inputs", 'T'}},
       "ctx, ord"},
      {"ac_status",
       {{"ctx", 'T'}, {"app", 'T'}, {"cluster", 'T'}, {"connectivity", 'T'}, {"time", 'T'}, {"resources", 'B'},
        {"readback", 'T'}},
       "ctx, app, cluster"},
      {"ac_queue",
       {{"ctx", 'T'}, {"seq", 'I'}, {"event", 'T'}, {"ucid", 'T'}, {"status", 'T'}, {"message", 'T'}}, "ctx, seq"},
      {"ac_active", {{"ctx", 'T'}}, "ctx"},
      {"ac_owed_children", {{"ctx", 'T'}, {"replaced", 'T'}, {"error", 'T'}}, "ctx"},
      {"credentials", {{"owner", 'T'}, {"cluster", 'T'}, {"kubeconfig", 'T'}, {"created", 'T'}}, "owner, cluster"},
      {"cluster_checks", {{"resource_id", 'I'}, {"time", 'T'}, {"reachable", 'I'}, {"error", 'T'}, {"version", 'T'}},
       "resource_id"},
      // Delivery jobs of events in flight (distributed workers): an import
      // lets them be claimed again once their leases, by the old server's
      // clock, have run out.
      {"sync_jobs",
       {{"id", 'I'}, {"ctx", 'T'}, {"seq", 'I'}, {"job", 'I'}, {"app", 'T'}, {"cluster", 'T'}, {"state", 'T'},
        {"worker", 'T'}, {"lease_until", 'I'}, {"coordinator", 'T'}, {"collected", 'I'}, {"message", 'T'},
        {"steps", 'I'}, {"claims", 'I'}},
       "id", "id"},
  };
  return t;
}

const char* k_vault_meta = "vault.key";

std::string column_list(const Table& t) {
  std::string out;
  for (const auto& c : t.columns) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

json value_of(Statement& s, int i, char type) {
  if (s.is_null(i)) return nullptr;
  if (type == 'I') return s.int64(i);
  std::string_view v = type == 'B' ? s.blob(i) : s.text(i);
  if (type == 'T' && utf8::valid(v)) return std::string(v);
  return json{{"base64", base64_encode(v)}};
}

// A secret value a workspace keeps: where it is and its identity.
struct Secret {
  enum class Where { credential, content, kv, object } where;
  std::string owner, name;   // credential: owner and name; kv: the field; object: its hash
  int64_t resource_id = 0;   // content, kv
  int64_t ord = 0;           // content: its ord; kv: the entry's index
  std::string value;
  std::string identity;
  std::string what;
};

std::vector<Secret> secrets_of(Store& st) {
  Database& db = st.database();
  std::vector<Secret> out;
  auto& c = db.statement("SELECT owner, cluster, kubeconfig FROM credentials ORDER BY owner, cluster");
  while (c.step()) {
    Secret s{Secret::Where::credential, c.str(0), c.str(1)};
    s.value = c.str(2);
    s.identity = credential_identity(s.owner, s.name);
    s.what = "the credential " + (s.name.empty() ? std::string("key") : "'" + s.name + "'") + " of '" + s.owner + "'";
    out.push_back(std::move(s));
  }
  c.reset();
  for (const resource::Kind& kind : resource::all_kinds()) {
    const resource::Kind* k = &kind;
    if (k->secret_file) {
      auto& f = db.statement(
          "SELECT r.id, r.key, c.ord, c.name, c.data FROM contents c JOIN resources r ON r.id = c.resource_id "
          "WHERE r.kind = ? ORDER BY r.id, c.ord");
      f.bind(1, k->id);
      while (f.step()) {
        Secret s{Secret::Where::content};
        s.resource_id = f.int64(0);
        const auto key = resource::Key::parse(f.str(1));
        s.ord = f.int64(2);
        s.name = f.str(3);
        s.value = std::string(f.blob(4));
        s.identity = Store::content_identity(key, static_cast<size_t>(s.ord), s.name);
        s.what = "the " + (k->file_what.empty() ? std::string("file") : k->file_what) + " of " + describe(*k, key);
        out.push_back(std::move(s));
      }
      f.reset();
    }
    if (k->secret_spec) {
      auto& r = db.statement("SELECT id, key, data FROM resources WHERE kind = ? ORDER BY id");
      r.bind(1, k->id);
      while (r.step()) {
        const auto key = resource::Key::parse(r.str(1));
        json data = json::parse(r.text(2));
        const json* kv = data.contains("spec") && data["spec"].is_object() && data["spec"].contains("kv")
                             ? &data["spec"]["kv"] : nullptr;
        for (size_t i = 0; kv && kv->is_array() && i < kv->size(); ++i)
          for (auto it = (*kv)[i].begin(); (*kv)[i].is_object() && it != (*kv)[i].end(); ++it) {
            if (!it.value().is_string()) continue;
            Secret s{Secret::Where::kv, "", it.key()};
            s.resource_id = r.int64(0);
            s.ord = static_cast<int64_t>(i);
            s.value = it.value().get<std::string>();
            s.identity = Store::kv_identity(key, i, it.key());
            s.what = "kv '" + it.key() + "' of " + describe(*k, key);
            out.push_back(std::move(s));
          }
      }
      r.reset();
    }
  }
  // AppContext objects of kind Secret, by content hash (core/appcontext).
  std::set<std::string> secret_hashes;
  auto& p = db.statement("SELECT digest, data FROM ac_plans");
  while (p.step()) {
    PlanReader plan(p.blob(1), "plan " + p.str(0));
    for (auto item = plan.next(); item != PlanReader::Item::end; item = plan.next())
      if (item == PlanReader::Item::resource && is_secret_object(plan.resource_name()))
        secret_hashes.emplace(plan.hash());
  }
  p.reset();
  auto& o = db.statement("SELECT hash, data FROM ac_contents ORDER BY hash");
  while (o.step()) {
    std::string value(o.blob(1));
    std::string hash = o.str(0);
    if (!is_sealed(value) && !secret_hashes.count(hash)) continue;
    Secret s{Secret::Where::object, "", hash};
    s.value = std::move(value);
    s.identity = Store::object_identity(hash);
    s.what = "an AppContext Secret (content " + hash.substr(0, 12) + ")";
    out.push_back(std::move(s));
  }
  o.reset();
  return out;
}

// Writes `value` back where `s` came from.
void put_back(Database& db, const Secret& s, const std::string& value) {
  switch (s.where) {
    case Secret::Where::credential: {
      auto& u = db.statement("UPDATE credentials SET kubeconfig = ? WHERE owner = ? AND cluster = ?");
      u.bind(1, value);
      u.bind(2, s.owner);
      u.bind(3, s.name);
      u.exec();
      return;
    }
    case Secret::Where::content: {
      auto& u = db.statement("UPDATE contents SET data = ? WHERE resource_id = ? AND ord = ?");
      u.bind_blob(1, value);
      u.bind(2, s.resource_id);
      u.bind(3, s.ord);
      u.exec();
      return;
    }
    case Secret::Where::object: {
      auto& u = db.statement("UPDATE ac_contents SET data = ? WHERE hash = ?");
      u.bind_blob(1, value);
      u.bind(2, s.name);
      u.exec();
      return;
    }
    case Secret::Where::kv: {
      auto& r = db.statement("SELECT data FROM resources WHERE id = ?");
      r.bind(1, s.resource_id);
      r.step();
      json data = json::parse(r.text(0));
      r.reset();
      data["spec"]["kv"][static_cast<size_t>(s.ord)][s.name] = value;
      auto& u = db.statement("UPDATE resources SET data = ? WHERE id = ?");
      u.bind(1, data.dump());
      u.bind(2, s.resource_id);
      u.exec();
      return;
    }
  }
}

// Seals every secret with `to` (opening sealed ones with the store's key);
// the number sealed.
int64_t reseal(Store& st, const VaultKey& to) {
  int64_t n = 0;
  for (const auto& s : secrets_of(st)) {
    auto plain = st.open_secret(s.value, s.identity);
    if (!plain) st.fail_sealed(s.value, s.what);
    put_back(st.database(), s, seal(to, *plain, s.identity));
    ++n;
  }
  st.set_meta(k_vault_meta, to.id);
  return n;
}

[[noreturn]] void bad_archive(const ImportOptions& o, int64_t line, const std::string& why) {
  fail(ErrorKind::invalid, o.source + ":" + std::to_string(line) + ": " + why,
       "give a file written by 'emco workspace export' (of this emco version), complete");
}

}  // namespace

int64_t unsealed_secrets(Store& st, std::string* first) {
  int64_t n = 0;
  for (const auto& s : secrets_of(st)) {
    if (is_sealed(s.value)) continue;
    if (n++ == 0 && first) *first = s.what;
  }
  return n;
}

ArchiveCounts export_workspace(Store& st, std::ostream& out, const ExportOptions& opts) {
  // Built inside the transaction (one snapshot) and written after it: a
  // transaction body may run again (database.hpp).
  std::string text;
  ArchiveCounts counts;
  st.write([&] {
    text.clear();
    counts = {};
    if (!opts.plaintext_secrets) {
      std::string first;
      if (const int64_t n = unsealed_secrets(st, &first))
        fail(ErrorKind::conflict,
             std::to_string(n) + " secret" + (n == 1 ? " is" : "s are") + " not encrypted (" + first +
                 "): the archive would hold it in clear",
             "encrypt the workspace first ('emco workspace key generate FILE', then 'emco workspace rotate-key "
             "--new-key-file FILE'), or pass --plaintext-secrets and keep the archive safe");
    }
    text += json{{"format", "emco-workspace"}, {"version", k_format_version}, {"schema", Store::schema_version()}}.dump() + "\n";
    for (const auto& t : tables()) {
      text += json{{"table", t.name}, {"columns", [&] {
                     json cols = json::array();
                     for (const auto& c : t.columns) cols.push_back(c.name);
                     return cols;
                   }()}}.dump() + "\n";
      ++counts.tables;
      auto& s = st.database().statement("SELECT " + column_list(t) + " FROM " + t.name + " ORDER BY " + t.order);
      while (s.step()) {
        json row = json::array();
        for (size_t i = 0; i < t.columns.size(); ++i) row.push_back(value_of(s, static_cast<int>(i), t.columns[i].type));
        text += row.dump() + "\n";
        ++counts.rows;
      }
      s.reset();
    }
    text += json{{"end", true}, {"rows", counts.rows}}.dump() + "\n";
  });
  out << text;
  out.flush();
  if (!out) fail(ErrorKind::failed, "cannot write the archive");
  return counts;
}

ArchiveCounts import_workspace(Store& st, std::istream& in, const ImportOptions& opts) {
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  if (in.bad()) fail(ErrorKind::failed, "cannot read " + opts.source);

  ArchiveCounts counts;
  st.write([&] {
    counts = {};
    Database& db = st.database();
    int64_t held = 0;
    for (const char* t : {"resources", "ac_contexts", "credentials"}) {
      auto& s = db.statement(std::string("SELECT COUNT(*) FROM ") + t);
      s.step();
      held += s.int64(0);
      s.reset();
    }
    if (held && !opts.replace)
      fail(ErrorKind::conflict, "the workspace is not empty: it holds resources, AppContexts or credentials",
           "import into a new workspace ('emco init DIR'), or pass --replace to drop everything it holds first");
    const std::optional<std::string> own_key = st.meta(k_vault_meta);
    // Children before parents; rows pointing at rows of their own table
    // (ON DELETE RESTRICT, checked row by row) let go first.
    db.exec("UPDATE resources SET parent_id = NULL WHERE parent_id IS NOT NULL");
    db.exec("UPDATE ac_contexts SET parent_id = NULL WHERE parent_id IS NOT NULL");
    for (auto t = tables().rbegin(); t != tables().rend(); ++t) db.exec(std::string("DELETE FROM ") + t->name);

    auto parse = [&](size_t i) {
      json v = json::parse(lines[i], nullptr, false);
      if (v.is_discarded()) bad_archive(opts, static_cast<int64_t>(i + 1), "not a JSON line");
      return v;
    };
    if (lines.empty()) bad_archive(opts, 1, "empty input");
    json head = parse(0);
    if (!head.is_object() || head.value("format", "") != "emco-workspace")
      bad_archive(opts, 1, "not an emco workspace archive");
    if (head.value("version", 0) != k_format_version)
      bad_archive(opts, 1, "archive format version " + head.value("version", json()).dump() + ", this emco reads " +
                               std::to_string(k_format_version));
    if (head.value("schema", 0) != Store::schema_version())
      fail(ErrorKind::invalid,
           opts.source + ":1: the archive holds a workspace of schema version " + head.value("schema", json()).dump() +
               ", this emco's is " + std::to_string(Store::schema_version()),
           "export it again with this emco (open the old workspace with it first: that migrates it)");

    const Table* table = nullptr;
    Statement* insert = nullptr;
    bool ended = false;
    for (size_t i = 1; i < lines.size() && !ended; ++i) {
      const auto line_no = static_cast<int64_t>(i + 1);
      json v = parse(i);
      if (v.is_object() && v.contains("table")) {
        if (table && table->identity) db.identity_follows(table->name, table->identity);
        table = nullptr;
        for (const auto& t : tables())
          if (v["table"] == t.name) table = &t;
        if (!table) bad_archive(opts, line_no, "unknown table " + v["table"].dump());
        json cols = json::array();
        for (const auto& c : table->columns) cols.push_back(c.name);
        if (v.value("columns", json()) != cols)
          bad_archive(opts, line_no, std::string("the columns of table '") + table->name + "' differ from this emco's");
        std::string marks;
        for (size_t c = 0; c < table->columns.size(); ++c) marks += c ? ", ?" : "?";
        insert = &db.statement(std::string("INSERT INTO ") + table->name + "(" + column_list(*table) + ") VALUES(" +
                               marks + ")");
        ++counts.tables;
        continue;
      }
      if (v.is_object() && v.value("end", false)) {
        if (v.value("rows", int64_t{-1}) != counts.rows)
          bad_archive(opts, line_no, "the trailer counts " + v.value("rows", json()).dump() + " rows, the archive has " +
                                         std::to_string(counts.rows));
        ended = true;
        continue;
      }
      if (!table || !v.is_array() || v.size() != table->columns.size())
        bad_archive(opts, line_no, "not a row of the table before it");
      insert->reset();
      for (size_t c = 0; c < v.size(); ++c) {
        const int p = static_cast<int>(c + 1);
        const json& x = v[c];
        const char type = table->columns[c].type;
        if (x.is_null()) insert->bind_null(p);
        else if (type == 'I' && x.is_number_integer()) insert->bind_int64(p, x.get<int64_t>());
        else if (type != 'I' && x.is_string()) insert->bind_text(p, x.get_ref<const std::string&>());
        else if (type != 'I' && x.is_object() && x.contains("base64") && x["base64"].is_string()) {
          auto bytes = base64_decode(x["base64"].get_ref<const std::string&>());
          if (!bytes) bad_archive(opts, line_no, "bad base64 in column '" + std::string(table->columns[c].name) + "'");
          if (type == 'B') insert->bind_blob(p, *bytes);
          else insert->bind_text(p, *bytes);
        } else
          bad_archive(opts, line_no, "column '" + std::string(table->columns[c].name) + "' has a value of the wrong type");
      }
      try {
        insert->exec();
      } catch (const DatabaseError& e) {
        if (e.storage()) throw;
        bad_archive(opts, line_no, std::string("the database refuses this row of table '") + table->name + "': " + e.what());
      }
      ++counts.rows;
    }
    if (table && table->identity) db.identity_follows(table->name, table->identity);
    if (!ended) bad_archive(opts, static_cast<int64_t>(lines.size()), "the archive ends early (no trailer line)");
    st.forget_remembered();  // the rows above were written with raw statements

    // Encryption: the archive's setting, else the workspace's own.
    if (!st.meta(k_vault_meta) && own_key) st.set_meta(k_vault_meta, *own_key);
    if (st.encrypted() && unsealed_secrets(st) > 0) {
      const VaultKey* k = st.key();
      if (!k || k->id != *st.meta(k_vault_meta))
        fail(ErrorKind::workspace, "the workspace is encrypted and the archive brings secrets in clear, but the key is not set",
             "set EMCO_KEY_FILE to the workspace's key file (key id " + *st.meta(k_vault_meta) + ")");
      reseal(st, *k);
    }
  });
  return counts;
}

int64_t rotate_key(Store& st, const VaultKey& to) {
  int64_t n = 0;
  st.write([&] { n = reseal(st, to); });
  st.use_key(to);
  return n;
}

}  // namespace emco::store
