// Moving a workspace and its secrets (issue 21 items 4 and 5), end to end
// with the built emco binary on a simulated fleet: `emco workspace export`
// / `import` between backends (SQLite -> PostgreSQL -> SQLite when the run
// has a PostgreSQL server, SQLite -> SQLite otherwise), and secrets at rest
// (init --encrypt, rotate-key, a missing, wrong or changed key).

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/reliability/fleet.hpp"
#include "tests/test_store.hpp"

using namespace emco::test;
using nlohmann::json;

namespace {

const std::map<std::string, std::string> k_plain = {{"EMCO_AUTO_RESUME", "0"}};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::map<std::string, std::string> with(std::map<std::string, std::string> env, const std::string& name,
                                        const std::string& value) {
  env[name] = value;
  return env;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

// Runs emco in workspace `ws` (REQUIREs exit 0) and returns stdout.
std::string ok(Fleet& f, const fs::path& ws, std::vector<std::string> args,
               const std::map<std::string, std::string>& env = k_plain) {
  const std::string what = args[0];
  args.insert(args.end(), {"--workspace", ws.string()});
  Exit e = f.emco(args, env);
  INFO(what << ": " << e.err);
  REQUIRE(e.code == 0);
  return e.out;
}

// What a user sees of a workspace: every resource of the setup file, the
// workspace's status, each DIG's and logical cloud's status and history.
std::string view(Fleet& f, const fs::path& ws) {
  std::string out;
  out += ok(f, ws, {"get", "-f", (f.root() / "setup.yaml").string(), "-o", "json"});
  out += ok(f, ws, {"status", "-o", "json"});
  for (const std::string dig : {"dig1", "dig2"}) out += ok(f, ws, {"dig", "status", Fleet::dig(dig), "-o", "json"});
  for (const std::string lc : {"proj/lc", "proj/lc1"}) out += ok(f, ws, {"lc", "status", lc, "-o", "json"});
  return out;
}

// A new, empty workspace in `dir` on `store` ("" = SQLite).
void init(Fleet& f, const fs::path& dir, const std::string& store, const std::map<std::string, std::string>& env = k_plain,
          bool encrypt = false) {
  std::vector<std::string> args = {"init", dir.string()};
  if (!store.empty()) args.insert(args.end(), {"--store", store});
  args.push_back(encrypt ? "--encrypt" : (store.empty() ? "--quiet" : "--no-encrypt"));
  Exit e = f.emco(args, env);
  INFO(e.err);
  REQUIRE(e.code == 0);
}

}  // namespace

TEST_CASE("a workspace exported and imported answers get, status and dig status byte for byte", "[workspace][move]") {
  Fleet f(2, 2, Shape{.level1_cloud = true});
  f.run_ok({"lc", "instantiate", "proj/lc1"});
  f.run_ok({"dig", "instantiate", Fleet::dig("dig1")});
  const std::string before = view(f, f.root());
  REQUIRE(before.find("Instantiated") != std::string::npos);

  // An unencrypted workspace holds kubeconfigs and credentials in clear:
  // the archive takes them only when asked.
  Exit refused = f.emco({"workspace", "export", (f.root() / "a.jsonl").string()}, k_plain);
  CHECK(refused.code == 5);
  CHECK(refused.err.find("not encrypted") != std::string::npos);
  CHECK(!fs::exists(f.root() / "a.jsonl"));

  // SQLite -> PostgreSQL -> SQLite when the run has a server.
  const std::vector<std::string> chain = {"", fresh_store(), ""};
  std::string archive = ok(f, f.root(), {"workspace", "export", "-", "--plaintext-secrets"});
  REQUIRE(archive.rfind("{\"format\":\"emco-workspace\"", 0) == 0);
  for (size_t i = 0; i < chain.size(); ++i) {
    const fs::path ws = f.root() / ("moved" + std::to_string(i));
    init(f, ws, chain[i]);
    const fs::path file = f.root() / ("archive" + std::to_string(i) + ".jsonl");
    {
      std::ofstream(file, std::ios::binary) << archive;
    }
    ok(f, ws, {"workspace", "import", file.string()});
    INFO("workspace " << i << (chain[i].empty() ? " (SQLite)" : " (PostgreSQL)"));
    CHECK(view(f, ws) == before);
    const std::string again = ok(f, ws, {"workspace", "export", "-", "--plaintext-secrets"});
    CHECK(again == archive);  // the same rows, the same bytes, on either backend
    archive = again;
    // A second import refuses the now non-empty workspace, and --replace takes it.
    Exit twice = f.emco({"workspace", "import", file.string(), "--workspace", ws.string()}, k_plain);
    CHECK(twice.code == 5);
    CHECK(twice.err.find("not empty") != std::string::npos);
    ok(f, ws, {"workspace", "import", file.string(), "--replace"});
  }

  // The moved workspace works: new ids do not collide with the imported
  // ones, and a lifecycle operation runs on the fleet.
  const fs::path last = f.root() / "moved2";
  ok(f, last, {"project", "create", "proj2"}, {});
  ok(f, last, {"dig", "instantiate", Fleet::dig("dig2")}, {});
  CHECK(ok(f, last, {"dig", "status", Fleet::dig("dig2"), "-o", "json"}).find("Instantiated") != std::string::npos);

  // The archive names every table a SQLite workspace has (a migration that
  // adds one adds it to core/store/archive.cpp's list).
  {
    const fs::path db = f.root() / "moved2" / ".emco" / "emco.db";
    FILE* p = ::popen(("sqlite3 '" + db.string() + "' \"SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name\"").c_str(), "r");
    REQUIRE(p);
    std::string tables;
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) tables += buf;
    REQUIRE(::pclose(p) == 0);
    for (const auto& t : lines_of(tables)) {
      INFO(t);
      CHECK(archive.find("{\"columns\":") != std::string::npos);
      CHECK(archive.find("\"table\":\"" + t + "\"") != std::string::npos);
    }
  }

  // A truncated archive changes nothing.
  const fs::path cut = f.root() / "cut.jsonl";
  {
    std::ofstream(cut, std::ios::binary) << archive.substr(0, archive.size() / 2);
  }
  const fs::path empty = f.root() / "empty";
  init(f, empty, fresh_store());
  Exit bad = f.emco({"workspace", "import", cut.string(), "--workspace", empty.string()}, k_plain);
  CHECK(bad.code == 3);
  CHECK(ok(f, empty, {"get", "projects", "-o", "json"}).find("proj") == std::string::npos);
}

TEST_CASE("secrets are encrypted at rest, need the key, rotate, and travel encrypted", "[workspace][vault]") {
  Fleet f(2, 1, Shape{.level1_cloud = true});
  const fs::path k1 = f.root() / "k1.key", k2 = f.root() / "k2.key";
  const std::string id1 = ok(f, f.root(), {"workspace", "key", "generate", k1.string()});
  const std::string id2 = ok(f, f.root(), {"workspace", "key", "generate", k2.string()});
  CHECK((fs::status(k1).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(id1 != id2);
  CHECK(f.emco({"workspace", "key", "generate", k1.string()}, k_plain).code == 5);  // never overwritten

  // The fleet's workspace was made without a key: rotate-key encrypts it.
  ok(f, f.root(), {"workspace", "rotate-key", "--new-key-file", k1.string()});
  const auto key1 = with(k_plain, "EMCO_KEY_FILE", k1.string());
  const auto key2 = with(k_plain, "EMCO_KEY_FILE", k2.string());
  const fs::path root = f.root();

  // With the key everything works; the cloud's credentials are issued sealed.
  ok(f, root, {"lc", "instantiate", "proj/lc1"}, key1);
  ok(f, root, {"dig", "instantiate", Fleet::dig("dig1")}, key1);
  const std::vector<std::string> show = {"lc", "kubeconfig", "proj/lc1", "--cluster", "p+c00", "--show-secrets"};
  const std::string kc = ok(f, root, show, key1);
  CHECK(kc.find("current-context") != std::string::npos);

  // At rest: the archive shows values as stored, and the SQLite file holds
  // no kubeconfig or private key in clear.
  const std::string raw = ok(f, root, {"workspace", "export", "-"}, key1);  // every secret sealed: no flag needed
  CHECK(raw.find("emco-sealed:1:" + id1.substr(0, 16)) != std::string::npos);
  CHECK(raw.find("current-context") == std::string::npos);
  CHECK(raw.find("PRIVATE KEY") == std::string::npos);
  if (!fs::exists(root / ".emco" / "store"))
    for (const char* file : {"emco.db", "emco.db-wal"})
      if (fs::exists(root / ".emco" / file)) {
        const std::string bytes = slurp(root / ".emco" / file);
        CHECK(bytes.find("current-context") == std::string::npos);
        CHECK(bytes.find("PRIVATE KEY") == std::string::npos);
      }

  // Without the key: everything but the secrets reads; a secret fails with
  // exit 6, naming it, with the hint.
  CHECK(!view(f, root).empty());
  Exit no_key = f.emco(show, k_plain);
  CHECK(no_key.code == 6);
  CHECK(no_key.err.find("credential 'p+c00' of 'project=proj/logicalCloud=lc1'") != std::string::npos);
  CHECK(no_key.err.find("no workspace key is set") != std::string::npos);
  CHECK(no_key.err.find("EMCO_KEY_FILE") != std::string::npos);
  Exit deliver = f.emco({"dig", "instantiate", Fleet::dig("dig2")}, k_plain);
  CHECK(deliver.code == 6);
  CHECK(deliver.err.find("the kubeconfig of cluster 'p/c0") != std::string::npos);

  // A wrong key fails the same way.
  Exit wrong = f.emco(show, key2);
  CHECK(wrong.code == 6);
  CHECK(wrong.err.find("not with the key given") != std::string::npos);

  // rotate-key: the new key opens everything, the old one nothing.
  CHECK(ok(f, root, {"workspace", "rotate-key", "--new-key-file", k2.string()}, key1).substr(0, 16) == id2.substr(0, 16));
  CHECK(ok(f, root, show, key2) == kc);
  CHECK(f.emco(show, key1).code == 6);
  std::string b64 = slurp(k2);
  b64.pop_back();
  CHECK(ok(f, root, show, with(k_plain, "EMCO_KEY", b64)) == kc);
  fs::permissions(k2, fs::perms::group_read, fs::perm_options::add);
  Exit loose = f.emco(show, key2);
  CHECK(loose.code == 6);
  CHECK(loose.err.find("can be read by other users") != std::string::npos);
  fs::permissions(k2, fs::perms::group_read, fs::perm_options::remove);

  // Export/import keeps them sealed; a changed ciphertext, or two rows'
  // values swapped, do not open (GCM tag, the row's identity as associated data).
  std::string archive = ok(f, root, {"workspace", "export", "-"}, key2);
  CHECK(archive.find("current-context") == std::string::npos);
  auto sealed_at = [&](const std::string& text, const std::string& cluster) {
    const size_t row = text.find("[\"project=proj/logicalCloud=lc1\",\"" + cluster + "\",\"emco-sealed:1:");
    REQUIRE(row != std::string::npos);
    return text.find("emco-sealed:1:", row);
  };
  auto value_at = [&](const std::string& text, size_t at) { return text.substr(at, text.find('"', at) - at); };
  const auto load = [&](const std::string& name, const std::string& text) {
    const fs::path ws = root / name;
    init(f, ws, "");
    { std::ofstream(root / (name + ".jsonl"), std::ios::binary) << text; }
    ok(f, ws, {"workspace", "import", (root / (name + ".jsonl")).string()}, key2);
    std::vector<std::string> args = show;
    args.insert(args.end(), {"--workspace", ws.string()});
    return f.emco(args, key2);
  };
  CHECK(load("same", archive).out == kc);
  std::string tampered = archive;
  const size_t at = sealed_at(tampered, "p+c00") + 60;
  tampered[at] = tampered[at] == 'A' ? 'B' : 'A';
  Exit changed = load("tampered", tampered);
  CHECK(changed.code == 6);
  CHECK(changed.err.find("does not open") != std::string::npos);
  std::string swapped = archive;
  const size_t a = sealed_at(swapped, "p+c00"), b = sealed_at(swapped, "p+c01");
  const std::string va = value_at(swapped, a), vb = value_at(swapped, b);
  REQUIRE(a < b);  // rows in key order: the later one is replaced first
  swapped.replace(b, vb.size(), va);
  swapped.replace(a, va.size(), vb);
  Exit moved = load("swapped", swapped);
  CHECK(moved.code == 6);
  CHECK(moved.err.find("does not open") != std::string::npos);

  // init: --encrypt needs a key; a PostgreSQL workspace is encrypted by default.
  CHECK(f.emco({"init", (root / "enc").string(), "--encrypt"}, k_plain).code == 64);
  init(f, root / "enc", "", key1, true);
  CHECK(ok(f, root / "enc", {"workspace", "export", "-"}, key1).find("\"vault.key\"") != std::string::npos);
  if (testing_postgresql()) {
    const std::string url = fresh_store();
    Exit pg = f.emco({"init", (root / "pg").string(), "--store", url}, k_plain);
    CHECK(pg.code == 64);
    CHECK(pg.err.find("--no-encrypt") != std::string::npos);
    CHECK(!fs::exists(root / "pg"));  // the refused init left nothing behind
    Exit pg_key = f.emco({"init", (root / "pg").string(), "--store", url}, key1);
    INFO(pg_key.err);
    CHECK(pg_key.code == 0);
    // Another machine joins the encrypted workspace as it is: no key needed
    // to join, --no-encrypt changes nothing, secrets still need the key.
    Exit join = f.emco({"init", (root / "pg2").string(), "--store", url, "--no-encrypt"}, k_plain);
    INFO(join.err);
    CHECK(join.code == 0);
    CHECK(join.out.find("joining the workspace there") != std::string::npos);
    CHECK(join.err.find("with encrypted secrets") != std::string::npos);
    CHECK(ok(f, root / "pg2", {"workspace", "export", "-"}, key1).find("\"vault.key\"") != std::string::npos);
    CHECK(f.emco({"init", (root / "pg3").string(), "--store", url}, k_plain).code == 0);
  }
}
