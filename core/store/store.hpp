#pragma once
// The resource store: every EMCO resource as one row (kind, key, data,
// attached file contents, stateInfo, references), with the referential schema
// enforced on create, update and delete.
//
// Concurrency: any number of emco processes may open one workspace. Write
// transactions are serializable and never fail for their concurrency, so
// "database is locked" or a serialization failure never reaches a user
// (store::Database's contract: SQLite runs in WAL mode with BEGIN IMMEDIATE
// and waits; PostgreSQL runs SERIALIZABLE and re-runs a body that
// conflicted). Read-only work needs no transaction.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/resource/kinds.hpp"
#include "core/store/workspace.hpp"
#include "core/util/error.hpp"

namespace emco::store {

class Database;
struct VaultKey;

// An attached file: `file:` uploads have one named "file" (its original file
// name in `filename`), `files:` uploads one per file, named by base name.
struct Content {
  std::string name;
  std::string filename;
  std::string data;     // raw bytes
  bool sealed = false;  // `data` is still encrypted (no key, or not the key that sealed it): see Store::fail_sealed
  bool operator==(const Content&) const = default;
};

struct Resource {
  const resource::Kind* kind = nullptr;
  resource::Key key;
  std::string data;         // canonical JSON {"metadata":{...},"spec":{...}}
  std::vector<Content> contents;
  std::string state_info;   // JSON or "" when the kind keeps none
  int64_t id = 0;           // row id, 0 until stored
};

enum class PutOutcome { created, configured, unchanged };
const char* outcome_word(PutOutcome o);  // "created", "configured", "unchanged"

class Store {
public:
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Opens the workspace database, applying forward migrations. Refuses a
  // database written by a newer emco (Error(workspace)).
  static std::unique_ptr<Store> open(const Workspace& ws);
  // Opens (migrating) the database at `location` (Workspace::location()),
  // keeping module files in `data_dir`.
  static std::unique_ptr<Store> open_location(const std::string& location, const std::filesystem::path& data_dir);
  // A private in-memory database: the fake used by unit tests.
  static std::unique_ptr<Store> open_memory();

  static int schema_version();  // the version this build writes

  // Runs `body` in one write transaction (serializable; on PostgreSQL it may
  // run more than once: database work only, see database.hpp). Any exception
  // rolls everything back and propagates. A nested call runs under a
  // savepoint of the outer one: when it throws, its own writes are undone.
  // An outermost call must not be made while the caller is still stepping
  // through a query (Database::transaction).
  void write(const std::function<void()>& body);

  // Inside write(), what get() and put() learn about resources (and their
  // absence) is remembered until the transaction ends, so that a batch pays
  // one round trip to the database per resource, not four; writes through
  // this Store keep it exact, and every other connection's writes are kept
  // out by the transaction's isolation.
  std::optional<Resource> get(const resource::Key& key) const;
  // Inside write(): loads `keys` (present or not) with a few queries, so
  // that the get() and put() of each that follow need none. Outside a
  // write transaction it does nothing.
  void prefetch(const std::vector<resource::Key>& keys) const;
  // Resources of kind `k` whose key starts with `parent` (all of them when
  // `parent` is empty), ordered by key.
  std::vector<Resource> list(const resource::Kind& k, const resource::Key& parent = {}) const;
  // Every resource of kind `k` with its attached contents (list() leaves
  // them out), ordered by key: two queries, whatever the count.
  std::vector<Resource> list_with_contents(const resource::Kind& k) const;
  // Direct children of a resource (any kind), ordered by key.
  std::vector<Resource> children(const resource::Key& key) const;
  // Resources whose references name `key`.
  std::vector<Resource> referrers(const resource::Key& key) const;

  // Creates or updates `r` (must run inside write()). Checks the parent and
  // every reference exist; records the references. Returns what happened.
  // Throws Error(not_found) naming a missing parent/reference.
  PutOutcome put(Resource r);
  // Deletes a resource (inside write()). Throws Error(not_found) if absent and
  // Error(conflict) naming children or referrers that block it.
  void remove(const resource::Key& key);
  void set_state_info(const resource::Key& key, const std::string& state_info);

  // Inside write(), after rows were written with the database's own
  // statements rather than through this Store (a workspace import):
  // forgets what the transaction remembered, which they may have changed.
  void forget_remembered();

  // Generic key/value rows for module state (AppContexts come later).
  // Inside write() a value read or written is remembered until the
  // transaction ends, as get() remembers resources (an encrypted workspace
  // reads its key id for every secret it seals).
  std::optional<std::string> meta(const std::string& name) const;
  void set_meta(const std::string& name, const std::string& value);

  // The directory beside the database where modules keep files of the
  // workspace (the GitOps caches): .emco/ for a workspace, a directory of its
  // own under the system's temporary directory for an in-memory store.
  std::filesystem::path data_dir() const;
  // Where the database is (Workspace::location(): a file path, ":memory:",
  // or a server's URL): another connection to the same workspace is
  // open_location(location(), data_dir()) (a delivery worker's job thread).
  const std::string& location() const { return m_location; }

  // Secrets at rest (core/store/vault.hpp). A workspace is encrypted when
  // its meta "vault.key" names the id of its key (emco init --encrypt, on
  // PostgreSQL by default; emco workspace rotate-key). Then put() seals the
  // secret parts of a resource (the attached files of a Kind::secret_file
  // kind, the spec.kv values of a Kind::secret_spec kind) and
  // credentials.hpp seals credential values, each with the value's identity
  // as associated data; writing one needs the key. Reading opens every
  // sealed value the key (EMCO_KEY_FILE / EMCO_KEY) opens; one it cannot
  // open stays sealed (Content::sealed; a kv value keeps its sealed text,
  // vault::is_sealed), so everything but the secret itself reads without the
  // key. A caller that needs such a value calls fail_sealed().
  bool encrypted() const;
  // The key from the environment (read once), nullptr when none is set.
  const VaultKey* key() const;
  // Uses `key` from now on instead of the environment's (rotate-key, tests).
  void use_key(const VaultKey& key);
  // `value` sealed for `identity` when the workspace is encrypted, else
  // unchanged. Error(workspace) naming `what` when it is encrypted and no
  // key (or not its key) is set.
  std::string seal_secret(std::string_view value, std::string_view identity, const std::string& what) const;
  // The plaintext of `value` (unchanged when it is not sealed), nullopt when
  // it is sealed and the key does not open it.
  std::optional<std::string> open_secret(std::string_view value, std::string_view identity) const;
  // Error(workspace, exit 6) saying why `what` (a sealed `value`) cannot be
  // read — no key, another key than the one that sealed it, or a changed
  // value — with the hint.
  [[noreturn]] void fail_sealed(std::string_view value, const std::string& what) const;
  // The identities (associated data) of a resource's secret parts.
  static std::string content_identity(const resource::Key& key, size_t ord, const std::string& name);
  static std::string kv_identity(const resource::Key& key, size_t index, const std::string& field);
  // ... and of an AppContext object kept at rest by its content hash (core/appcontext).
  static std::string object_identity(std::string_view hash);

  // A deterministic text dump of every row: tests compare it before and after
  // a failed operation to prove nothing changed.
  std::string dump() const;

  // The workspace database (core/store/database.hpp), for the modules that
  // keep tables of their own in it (core/appcontext's row files; schema in
  // store.cpp's migrations) and white-box tests. Nothing else includes
  // database.hpp (tests/arch/check_includes.sh).
  Database& database() const { return *m_db; }
  // Requests this connection sent to a database server (Database::round_trips).
  uint64_t round_trips() const;
  // For a process about to exit, the Store's last call: when closing its
  // connection would only free memory (Database::close_frees_only), the
  // connection is kept, never closed, for the exit to drop; otherwise
  // nothing happens and the destructor closes it as usual.
  void leave_open_at_exit();

private:
  Store(std::unique_ptr<Database> db, std::string location, std::filesystem::path data_dir);
  Resource opened(Resource r) const;  // the secret parts opened where the key opens them
  std::unique_ptr<Database> m_db;
  std::string m_location;
  std::filesystem::path m_data_dir;
  struct Known;  // the write transaction's view of resources (store.cpp)
  std::unique_ptr<Known> m_known;
  int m_write_depth = 0;
  mutable std::unique_ptr<VaultKey> m_key;
  mutable bool m_key_read = false;
};

// Human name of a resource for messages: "cluster 'p1/c1'" style
// ("<display> '<anchor path values joined by />'").
std::string describe(const resource::Kind& k, const resource::Key& key);

// When `e` is a database error with which the storage refused (disk full, an
// I/O error, a read-only file system: DatabaseError::storage), the
// workspace error (exit 6) that tells the user so; otherwise nothing.
std::optional<Error> storage_failure(const std::exception& e);

}  // namespace emco::store
