#include "tests/cli/support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/test_store.hpp"
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace emco::test {

fs::path emco_binary() { return fs::path(EMCO_BINARY_DIR) / "emco"; }
fs::path emcoctl_binary() { return fs::path(EMCO_BINARY_DIR) / "emcoctl"; }

std::string quote(const std::string& word) {
  std::string q = "'";
  for (char c : word) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

fs::path make_temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "emco-cli-XXXXXX").string();
  char* made = ::mkdtemp(pattern.data());
  REQUIRE(made != nullptr);
  return fs::path(made);
}

}  // namespace

Run shell(const std::string& command_line) {
  fs::path tmp = make_temp_dir();
  std::string cmd = "( " + command_line + " ) >" + quote((tmp / "out").string()) + " 2>" + quote((tmp / "err").string());
  int status = std::system(cmd.c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.out = slurp(tmp / "out");
  r.err = slurp(tmp / "err");
  fs::remove_all(tmp);
  return r;
}

Sandbox::Sandbox() : m_root(fs::canonical(make_temp_dir())) {}

Sandbox::~Sandbox() {
  std::error_code ec;
  // Cases make directories unreadable on purpose; make them removable again.
  for (auto it = fs::recursive_directory_iterator(m_root, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(m_root, ec);
}

void Sandbox::write(const std::string& rel, const std::string& text) const {
  fs::path p = m_root / rel;
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

std::string Sandbox::read(const std::string& rel) const { return slurp(m_root / rel); }

Run Sandbox::emco(const std::vector<std::string>& args, const RunOptions& opts) const {
  std::string cmd = "cd " + quote((opts.cwd.empty() ? m_root : opts.cwd).string()) + " && env -u EMCO_WORKSPACE";
  for (const auto& [k, v] : opts.env) cmd += v.empty() ? " -u " + k : " " + quote(k + "=" + v);
  cmd += " " + quote(opts.program.empty() ? emco_binary().string() : opts.program);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " <" + quote(opts.stdin_file.empty() ? "/dev/null" : opts.stdin_file);
  return shell(cmd);
}

void Sandbox::init() const {
  const std::string store = fresh_store();
  // Test workspaces on PostgreSQL keep secrets unencrypted, as on SQLite:
  // tests/store/vault_test.cpp covers encryption on both backends.
  Run r = store.empty() ? emco({"init"}) : emco({"init", "--store", store, "--no-encrypt"});
  INFO(r.err);
  REQUIRE(r.code == 0);
}

namespace {

// The schema of a PostgreSQL workspace's URL (fresh_store()'s search path).
std::string schema_of(const std::string& url) {
  const auto at = url.find("search_path%3D");
  REQUIRE(at != std::string::npos);
  return url.substr(at + 14, url.find('&', at) - (at + 14));
}

std::string store_url(const fs::path& root) {
  std::string url;
  std::ifstream(root / ".emco" / "store") >> url;
  return url;
}

}  // namespace

std::string Sandbox::dump() const {
  if (!testing_postgresql()) {
    Run r = shell("sqlite3 " + quote((m_root / ".emco" / "emco.db").string()) + " .dump");
    INFO(r.err);
    REQUIRE(r.code == 0);
    return r.out;
  }
  // One INSERT per row, sorted: the rows, whatever their physical order
  // (sequences left out: a rolled-back insert still advances them), the
  // schema's name left out (two workspaces compare equal).
  Run r = shell("pg_dump -d " + quote(test_store_base()) + " -n " + schema_of(store_url(m_root)) +
                " --data-only --inserts | grep '^INSERT' | sed 's/^INSERT INTO [^.]*\\./INSERT INTO /' | sort");
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r.out;
}

void Sandbox::copy_from(const Sandbox& other) const {
  Run r = shell("cp -a " + quote(other.root().string()) + "/. " + quote(m_root.string()));
  INFO(r.err);
  REQUIRE(r.code == 0);
  if (!testing_postgresql() || !fs::exists(m_root / ".emco" / "store")) return;
  // The copy gets a schema of its own holding the same rows: the other's
  // dump with its (unique) schema name replaced.
  const std::string from = schema_of(store_url(other.root()));
  const std::string to_url = fresh_store();
  const std::string to = schema_of(to_url);
  Run c = shell("pg_dump -d " + quote(test_store_base()) + " -n " + from + " --no-owner | sed 's/\\b" + from +
                "\\b/" + to + "/g' | psql -q -v ON_ERROR_STOP=1 -d " + quote(test_store_base()));
  INFO(c.err);
  REQUIRE(c.code == 0);
  std::ofstream(m_root / ".emco" / "store") << to_url << "\n";
}

void make_chart(const fs::path& dir, const std::string& app, const std::string& top) {
  std::string t = top.empty() ? app : top;
  fs::path src = dir / (".chart-" + app);
  fs::create_directories(src / t / "templates");
  std::ofstream(src / t / "Chart.yaml") << "apiVersion: v2\nname: " << app << "\nversion: 0.1.0\n";
  std::ofstream(src / t / "values.yaml") << "replicas: 1\n";
  std::ofstream(src / t / "templates" / "cm.yaml")
      << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-" << app << "\ndata:\n  a: \"1\"\n";
  Run r = shell("tar -czf " + quote((dir / (app + ".tgz")).string()) + " -C " + quote(src.string()) + " " + quote(t));
  INFO(r.err);
  REQUIRE(r.code == 0);
  fs::remove_all(src);
}

void make_profile(const fs::path& dir, const std::string& name) {
  fs::path src = dir / (".profile-" + name);
  fs::create_directories(src);
  std::ofstream(src / "manifest.yaml") << "---\nversion: v1\ntype:\n  values: \"override_values.yaml\"\n";
  std::ofstream(src / "override_values.yaml") << "replicas: 2\n";
  Run r = shell("tar -czf " + quote((dir / name).string()) + " -C " + quote(src.string()) + " .");
  INFO(r.err);
  REQUIRE(r.code == 0);
  fs::remove_all(src);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace emco::test
