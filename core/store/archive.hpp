#pragma once
// Moving a whole workspace (issue 21 item 5): `emco workspace export` writes
// every row of the workspace database to a portable archive, `emco
// workspace import` loads one into another workspace, on either backend
// (SQLite -> PostgreSQL and back, or the same backend twice).
//
// Why an archive rather than a direct copy between two URLs: it pipes
// (`emco workspace export - --workspace a | emco workspace import - --workspace b`), it crosses
// machines that cannot reach each other's database, it is a backup, and it
// is plain text a user can inspect; a direct copy is the pipe.
//
// Format (JSON lines, one JSON value per line):
//   {"format":"emco-workspace","schema":S,"version":1}        the header
//   {"columns":["id","kind",...],"table":"resources"}          then its rows:
//   [1,"cluster",...]                                          one array per row
//   ...
//   {"end":true,"rows":N}                                      the trailer
// A value is a JSON number (INTEGER), string (TEXT that is UTF-8), null, or
// {"base64":"..."} (a BLOB, or TEXT that is not UTF-8). S is the schema
// version of the workspace that wrote it (Store::schema_version()); import
// takes only its own version. A truncated archive (no trailer) is refused.
//
// What travels: every table of the schema (tables() in archive.cpp, checked
// against a SQLite workspace's tables by tests/reliability): resources with their attached files
// and references, AppContexts with their plans, status, queues and history,
// credentials, and the workspace meta. Row ids are kept (identity columns
// are moved past them on PostgreSQL). Not copied: files under .emco/ (the
// GitOps caches, rebuilt on the next push) and a PostgreSQL store's URL.
//
// Secrets (core/store/vault.hpp): sealed values travel sealed, as stored,
// and open in the target with the same key. An archive never holds a secret
// in clear unless the user asks (ExportOptions::plaintext_secrets); without
// it, exporting a workspace holding unsealed secrets is refused, naming one.

#include <cstdint>
#include <iosfwd>
#include <string>

#include "core/store/store.hpp"

namespace emco::store {

struct VaultKey;

struct ExportOptions {
  bool plaintext_secrets = false;  // allow secrets that are not sealed into the archive
};
struct ArchiveCounts {
  int64_t rows = 0;
  int64_t tables = 0;
};

// Writes the archive of `st` to `out`, from one consistent snapshot (one
// transaction). Error(conflict) for an unsealed secret without
// plaintext_secrets; Error(failed) when `out` fails.
ArchiveCounts export_workspace(Store& st, std::ostream& out, const ExportOptions& opts);

struct ImportOptions {
  bool replace = false;  // empty a workspace that holds resources, AppContexts or credentials first
  std::string source;    // names the input in errors ("archive.jsonl", "stdin")
};
// Loads the archive `in` into `st` in one write transaction: all of it or,
// on any error, nothing. Refuses (Error(conflict)) a workspace holding
// resources, AppContexts or credentials unless `replace`; an archive of
// another schema version, or another format, or truncated (Error(invalid),
// naming `source` and the line). The workspace's encryption setting (meta
// "vault.key") comes with the archive when the archive has one and is kept
// otherwise; when the result is encrypted, secrets the archive brought
// unsealed are sealed with the key (which must then be set).
ArchiveCounts import_workspace(Store& st, std::istream& in, const ImportOptions& opts);

// Seals every secret of the workspace (credential values, the attached
// files of Kind::secret_file kinds, the kv values of Kind::secret_spec
// kinds, AppContext objects of kind Secret) with `to` and makes it the workspace's key (meta "vault.key"), in
// one write transaction: values sealed with the current key are opened
// with it first (the key from the environment; Error(workspace) naming a
// value it does not open), unsealed values are sealed. Returns how many
// values it sealed. Encrypts a workspace that was not.
int64_t rotate_key(Store& st, const VaultKey& to);

// The number of secret values that are not sealed (what export refuses
// without plaintext_secrets), and a description of the first one.
int64_t unsealed_secrets(Store& st, std::string* first = nullptr);

}  // namespace emco::store
