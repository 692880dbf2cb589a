// Generates the batch-apply benchmark inputs (bench/apply/run.sh):
//   apply.yaml  emcoctl documents: PROVIDERS cluster providers, CLUSTERS
//               clusters (file: kubeconfig) with 3 labels each, PROJECTS
//               projects x 10 composite apps x 5 apps (file: app<i>.tgz)
//   raw.sql     the same rows (resources + contents, emco's table shape) as
//               INSERT statements in one transaction, for `sqlite3` alone
// usage: apply_bench_gen OUTDIR CLUSTERS PROJECTS
// OUTDIR must already hold kubeconfig and app0.tgz..app4.tgz.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr int k_providers = 5, k_labels = 3, k_composite_apps = 10, k_apps = 5;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "apply_bench_gen: cannot read " << path << "\n";
    std::exit(2);
  }
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

struct Sql {
  std::ofstream out;
  long next_id = 1;
  long row(const std::string& kind, const std::string& key, const std::string& key_json, const std::string& key_id,
           long parent, const std::string& data, const std::string& state) {
    long id = next_id++;
    out << "INSERT INTO resources(id,kind,key,key_json,key_id,parent_id,data,state_info) VALUES(" << id << ",'" << kind
        << "','" << key << "','" << key_json << "','" << key_id << "'," << (parent ? std::to_string(parent) : "NULL") << ",'"
        << data << "','" << state << "');\n";
    return id;
  }
  void content(long id, const std::string& filename, const std::string& hex_bytes) {
    out << "INSERT INTO contents(resource_id,ord,name,filename,data) VALUES(" << id << ",0,'file','" << filename << "',X'"
        << hex_bytes << "');\n";
  }
};

const char* k_state = R"({"actions":[{"instance":"","revision":0,"state":"Created","time":"2026-01-01T00:00:00.000Z"}],"statusctxid":""})";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: apply_bench_gen OUTDIR CLUSTERS PROJECTS\n";
    return 2;
  }
  const std::string dir = argv[1];
  const int clusters = std::atoi(argv[2]), projects = std::atoi(argv[3]);
  const std::string kubeconfig_hex = hex(slurp(dir + "/kubeconfig"));
  std::vector<std::string> chart_hex;
  for (int a = 0; a < k_apps; ++a) chart_hex.push_back(hex(slurp(dir + "/app" + std::to_string(a) + ".tgz")));

  std::ofstream y(dir + "/apply.yaml");
  Sql sql{std::ofstream(dir + "/raw.sql")};
  // emco's schema (core/store migration 1), so the baseline pays for the same indexes.
  sql.out << "PRAGMA journal_mode=WAL;\nPRAGMA synchronous=NORMAL;\nPRAGMA foreign_keys=ON;\n"
             "CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
             "CREATE TABLE resources(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, key TEXT NOT NULL UNIQUE, key_json TEXT NOT NULL,"
             " key_id TEXT NOT NULL, parent_id INTEGER REFERENCES resources(id) ON DELETE RESTRICT, data TEXT NOT NULL,"
             " state_info TEXT NOT NULL DEFAULT '');\n"
             "CREATE INDEX resources_kind ON resources(kind, key);\nCREATE INDEX resources_parent ON resources(parent_id);\n"
             "CREATE TABLE contents(resource_id INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE, ord INTEGER NOT NULL,"
             " name TEXT NOT NULL, filename TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY(resource_id, ord));\n"
             "CREATE TABLE refs(from_id INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE, to_id INTEGER NOT NULL"
             " REFERENCES resources(id) ON DELETE RESTRICT, field TEXT NOT NULL, PRIMARY KEY(from_id, to_id, field));\n"
             "CREATE INDEX refs_to ON refs(to_id);\nBEGIN;\n";
  long documents = 0;
  auto doc = [&](const std::string& anchor, const std::string& rest) {
    y << "---\nversion: emco/v2\nresourceContext:\n  anchor: " << anchor << "\n" << rest;
    ++documents;
  };

  std::vector<long> provider_ids;
  for (int p = 0; p < k_providers; ++p) {
    std::string cp = "provider" + std::to_string(p);
    doc("cluster-providers", "metadata:\n  name: " + cp + "\n");
    provider_ids.push_back(sql.row("clusterProvider", "clusterProvider=" + cp, "{\"clusterProvider\":\"" + cp + "\"}",
                                   "{clusterProvider,}", 0, "{\"metadata\":{\"name\":\"" + cp + "\"},\"spec\":{}}", ""));
  }
  for (int c = 0; c < clusters; ++c) {
    int p = c % k_providers;
    std::string cp = "provider" + std::to_string(p), name = "cluster" + std::to_string(c);
    doc("cluster-providers/" + cp + "/clusters", "metadata:\n  name: " + name + "\nfile: kubeconfig\n");
    std::string key = "clusterProvider=" + cp + "/cluster=" + name;
    std::string key_json = "{\"clusterProvider\":\"" + cp + "\",\"cluster\":\"" + name + "\"";
    long id = sql.row("cluster", key, key_json + "}", "{cluster,clusterProvider,}", provider_ids[static_cast<size_t>(p)],
                      "{\"metadata\":{\"name\":\"" + name + "\"},\"spec\":{}}", k_state);
    sql.content(id, "kubeconfig", kubeconfig_hex);
    for (int l = 0; l < k_labels; ++l) {
      std::string label = (l == 0 ? "zone-" + std::to_string(c % 10) : l == 1 ? "rack-" + std::to_string(c % 100) : "edge");
      doc("cluster-providers/" + cp + "/clusters/" + name + "/labels", "clusterLabel: " + label + "\n");
      sql.row("clusterLabel", key + "/clusterLabel=" + label, key_json + ",\"clusterLabel\":\"" + label + "\"}",
              "{cluster,clusterLabel,clusterProvider,}", id, "{\"metadata\":{\"name\":\"" + label + "\"},\"spec\":{}}", "");
    }
  }
  for (int p = 0; p < projects; ++p) {
    std::string proj = "proj" + std::to_string(p);
    doc("projects", "metadata:\n  name: " + proj + "\n");
    long pid = sql.row("project", "project=" + proj, "{\"project\":\"" + proj + "\"}", "{project,}", 0,
                       "{\"metadata\":{\"name\":\"" + proj + "\"},\"spec\":{}}", "");
    for (int c = 0; c < k_composite_apps; ++c) {
      std::string ca = "ca" + std::to_string(c);
      doc("projects/" + proj + "/composite-apps", "metadata:\n  name: " + ca + "\nspec:\n  compositeAppVersion: v1\n");
      std::string key = "project=" + proj + "/compositeApp=" + ca + "/compositeAppVersion=v1";
      std::string key_json = "{\"project\":\"" + proj + "\",\"compositeApp\":\"" + ca + "\",\"compositeAppVersion\":\"v1\"";
      long cid = sql.row("compositeApp", key, key_json + "}", "{compositeApp,compositeAppVersion,project,}", pid,
                         "{\"metadata\":{\"name\":\"" + ca + "\"},\"spec\":{\"compositeAppVersion\":\"v1\"}}", "");
      for (int a = 0; a < k_apps; ++a) {
        std::string app = "app" + std::to_string(a);
        doc("projects/" + proj + "/composite-apps/" + ca + "/v1/apps", "metadata:\n  name: " + app + "\nfile: " + app + ".tgz\n");
        long aid = sql.row("app", key + "/app=" + app, key_json + ",\"app\":\"" + app + "\"}",
                           "{app,compositeApp,compositeAppVersion,project,}", cid,
                           "{\"metadata\":{\"name\":\"" + app + "\"},\"spec\":{}}", "");
        sql.content(aid, app + ".tgz", chart_hex[static_cast<size_t>(a)]);
      }
    }
  }
  sql.out << "COMMIT;\n";
  std::cout << documents << "\n";
  return y.good() && sql.out.good() ? 0 : 1;
}
