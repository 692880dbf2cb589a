// Secrets at rest (core/store/vault.hpp) and their place in the store:
// sealing and opening one value, keys and key files, and a Store that seals
// a cluster's kubeconfig, a sync object's kv values and credentials (on the
// run's backend).

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/resource/kinds.hpp"
#include "core/store/archive.hpp"
#include "core/store/credentials.hpp"
#include "core/store/database.hpp"
#include "core/store/vault.hpp"
#include "core/util/error.hpp"
#include "tests/test_store.hpp"

using namespace emco;
using namespace emco::store;
namespace fs = std::filesystem;

namespace {

resource::Key key_of(std::initializer_list<std::pair<std::string, std::string>> parts) {
  resource::Key k;
  for (const auto& p : parts) k.parts.push_back(p);
  return k;
}

// The stored (raw) text of a query's first column.
std::string raw(Store& st, const std::string& sql) {
  auto& s = st.database().statement(sql);
  REQUIRE(s.step());
  std::string out(s.blob(0));
  s.reset();
  return out;
}

}  // namespace

TEST_CASE("a sealed value opens only with its key and its identity, unchanged", "[vault]") {
  const VaultKey k1 = generate_key(), k2 = generate_key();
  REQUIRE(k1.bytes.size() == 32);
  REQUIRE(k1.id.size() == 16);
  CHECK(k1.id != k2.id);
  const std::string secret = std::string("apiVersion: v1\nusers: [token: abc]\0binary", 42);
  const std::string sealed = seal(k1, secret, "row-1");
  CHECK(is_sealed(sealed));
  CHECK(sealed_key_id(sealed) == k1.id);
  CHECK(sealed.find("token") == std::string::npos);
  CHECK(seal(k1, secret, "row-1") != sealed);  // a fresh nonce every time
  CHECK(unseal(k1, sealed, "row-1") == secret);
  CHECK(!unseal(k2, sealed, "row-1"));          // another key
  CHECK(!unseal(k1, sealed, "row-2"));          // another row's identity
  std::string changed = sealed;
  changed[changed.size() - 5] = changed[changed.size() - 5] == 'A' ? 'B' : 'A';
  CHECK(!unseal(k1, changed, "row-1"));         // the GCM tag refuses it
  CHECK(!unseal(k1, "plain text", "row-1"));
  CHECK(unseal(k1, seal(k1, "", "e"), "e") == "");
}

TEST_CASE("key files are written 0600, never overwritten, and read only when private", "[vault]") {
  const fs::path dir = fs::temp_directory_path() / ("emco-vault-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const VaultKey k = generate_key();
  write_key_file(dir / "k", k);
  struct stat st {};
  REQUIRE(::stat((dir / "k").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(read_key_file(dir / "k", "the key").id == k.id);
  CHECK_THROWS_WITH(write_key_file(dir / "k", generate_key()), Catch::Contains("exists already"));
  ::chmod((dir / "k").c_str(), 0644);
  CHECK_THROWS_WITH(read_key_file(dir / "k", "the key"), Catch::Contains("can be read by other users"));
  std::ofstream(dir / "short") << "c2hvcnQ=\n";
  ::chmod((dir / "short").c_str(), 0600);
  CHECK_THROWS_WITH(read_key_file(dir / "short", "the key"), Catch::Contains("32 bytes in base64"));
  fs::remove_all(dir);
}

TEST_CASE("an encrypted store seals kubeconfigs, kv values and credentials, and reads the rest without the key",
          "[vault]") {
  ::unsetenv("EMCO_KEY_FILE");
  ::unsetenv("EMCO_KEY");
  auto st = test::open_test_store();
  const VaultKey k = generate_key();
  st->use_key(k);
  st->write([&] { st->set_meta("vault.key", k.id); });
  REQUIRE(st->encrypted());

  const auto provider = key_of({{"clusterProvider", "p"}});
  const auto cluster = key_of({{"clusterProvider", "p"}, {"cluster", "c"}});
  const auto sync = key_of({{"clusterProvider", "p"}, {"clusterSyncObject", "git"}});
  const std::string kubeconfig = "apiVersion: v1\nkind: Config\ncurrent-context: c\n";
  const std::string sync_data =
      R"({"metadata":{"name":"git"},"spec":{"kv":[{"gitType":"github"},{"token":"ghp_secret"}]}})";
  st->write([&] {
    st->put({&resource::kind("clusterProvider"), provider, R"({"metadata":{"name":"p"},"spec":{}})"});
    Resource c{&resource::kind("cluster"), cluster, R"({"metadata":{"name":"c"},"spec":{}})"};
    c.contents.push_back({"file", "kubeconfig", kubeconfig});
    st->put(c);
    st->put({&resource::kind("clusterSyncObject"), sync, sync_data});
    put_credential(*st, "project=proj/logicalCloud=lc", "p+c", "user kubeconfig", "2026-01-01T00:00:00Z");
  });

  // At rest: sealed.
  CHECK(raw(*st, "SELECT data FROM contents").rfind("emco-sealed:1:" + k.id + ":", 0) == 0);
  CHECK(raw(*st, "SELECT data FROM resources WHERE kind = 'clusterSyncObject'").find("ghp_secret") == std::string::npos);
  CHECK(raw(*st, "SELECT kubeconfig FROM credentials").rfind("emco-sealed:1:", 0) == 0);

  // Read back with the key: plaintext, and putting the same again is unchanged.
  CHECK(st->get(cluster)->contents.at(0).data == kubeconfig);
  CHECK(st->get(sync)->data == sync_data);
  CHECK(credential(*st, "project=proj/logicalCloud=lc", "p+c") == "user kubeconfig");
  st->write([&] {
    Resource c{&resource::kind("cluster"), cluster, R"({"metadata":{"name":"c"},"spec":{}})"};
    c.contents.push_back({"file", "kubeconfig", kubeconfig});
    CHECK(st->put(c) == PutOutcome::unchanged);
    CHECK(st->put({&resource::kind("clusterSyncObject"), sync, sync_data}) == PutOutcome::unchanged);
  });

  // Another key: resources read, secrets stay sealed, a credential fails naming itself.
  st->use_key(generate_key());
  auto c = st->get(cluster);
  REQUIRE(c);
  CHECK(c->contents.at(0).sealed);
  CHECK(c->data == R"({"metadata":{"name":"c"},"spec":{}})");
  CHECK(st->list(resource::kind("clusterSyncObject")).at(0).data.find("emco-sealed:1:") != std::string::npos);
  try {
    credential(*st, "project=proj/logicalCloud=lc", "p+c");
    FAIL("a credential opened with another key");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::workspace);
    CHECK(e.message().find("credential 'p+c' of 'project=proj/logicalCloud=lc'") != std::string::npos);
    CHECK(e.message().find("not with the key given") != std::string::npos);
    CHECK(e.hint().find(k.id) != std::string::npos);
  }
  // Writing a secret needs the workspace's key.
  CHECK_THROWS_WITH(put_credential(*st, "o", "n", "s", "t"), Catch::Contains("is not the workspace's key"));
}

TEST_CASE("inside a write, meta values are read from the database once and stay exact", "[vault]") {
  auto st = test::open_test_store();
  const bool server = st->database().shared();
  st->write([&] {
    CHECK(!st->meta("probe"));
    const uint64_t before = st->round_trips();
    for (int i = 0; i < 5; ++i) CHECK(!st->meta("probe"));
    CHECK(st->round_trips() == before);  // remembered, absence included
    st->set_meta("probe", "1");
    CHECK(st->meta("probe") == "1");
    // A nested write that fails undoes its change, and what was remembered with it.
    try {
      st->write([&] {
        st->set_meta("probe", "2");
        CHECK(st->meta("probe") == "2");
        throw std::runtime_error("undo");
      });
    } catch (const std::runtime_error&) {
    }
    CHECK(st->meta("probe") == "1");
    // Rows written with the database's own statements: forgotten on request.
    st->database().exec("UPDATE meta SET value = '3' WHERE name = 'probe'");
    CHECK(st->meta("probe") == "1");
    st->forget_remembered();
    CHECK(st->meta("probe") == "3");
  });
  CHECK(st->meta("probe") == "3");
  // Sealing many secrets in one transaction reads the workspace's key id once.
  const VaultKey k = generate_key();
  st->use_key(k);
  st->write([&] { st->set_meta("vault.key", k.id); });
  uint64_t trips = 0;
  st->write([&] {
    const uint64_t before = st->round_trips();
    for (int i = 0; i < 10; ++i) CHECK(is_sealed(st->seal_secret("s", "row-" + std::to_string(i), "a secret")));
    trips = st->round_trips() - before;
  });
  CHECK(trips == (server ? 1u : 0u));
}

TEST_CASE("an encrypted workspace that imports an archive without a key setting stays encrypted", "[vault]") {
  // The import rewrites the meta table with its own statements inside its
  // transaction, after reading the workspace's key id: what the transaction
  // remembered of meta must not hide that.
  auto plain = test::open_test_store();
  const auto provider = key_of({{"clusterProvider", "p"}});
  plain->write([&] { plain->put({&resource::kind("clusterProvider"), provider, R"({"metadata":{"name":"p"},"spec":{}})"}); });
  std::stringstream archive;
  export_workspace(*plain, archive, {});
  REQUIRE(archive.str().find("vault.key") == std::string::npos);
  plain.reset();

  auto st = test::open_test_store();
  const VaultKey k = generate_key();
  st->use_key(k);
  st->write([&] { st->set_meta("vault.key", k.id); });
  import_workspace(*st, archive, {.replace = true, .source = "archive.jsonl"});
  CHECK(st->meta("vault.key") == k.id);
  CHECK(st->get(provider));
}
