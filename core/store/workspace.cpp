#include "core/store/workspace.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

#include "core/store/store.hpp"
#include "core/util/error.hpp"

namespace emco::store {

namespace fs = std::filesystem;

namespace {

bool has_workspace(const fs::path& root) {
  return fs::exists(root / ".emco" / "emco.db") || fs::exists(root / ".emco" / "store");
}

std::string read_store_file(const fs::path& file) {
  std::ifstream in(file);
  std::string url;
  std::getline(in, url);
  while (!url.empty() && (url.back() == '\r' || url.back() == ' ')) url.pop_back();
  return url;
}

}  // namespace

std::string Workspace::location() const {
  if (fs::exists(store_file())) return read_store_file(store_file());
  return database().string();
}

bool is_server_location(const std::string& location) { return location.find("://") != std::string::npos; }

bool carries_password(const std::string& location) {
  if (!is_server_location(location)) return false;
  const size_t start = location.find("://") + 3;
  const size_t end = location.find_first_of("/?", start);
  const std::string authority = location.substr(start, end == std::string::npos ? std::string::npos : end - start);
  const size_t at = authority.rfind('@');
  if (at != std::string::npos && authority.substr(0, at).find(':') != std::string::npos) return true;
  const size_t q = location.find('?');
  return q != std::string::npos && ("&" + location.substr(q + 1)).find("&password=") != std::string::npos;
}

std::string redacted(const std::string& location) {
  if (!carries_password(location)) return location;
  return location.substr(0, location.find("://") + 3) + "...";
}

Workspace init_workspace(const fs::path& dir, bool& created, const std::string& store) {
  if (!store.empty() && !is_server_location(store))
    fail(ErrorKind::usage, "'" + store + "' is not a store URL",
         "give a database URL such as postgresql://host/db, or leave --store out for a SQLite workspace");
  if (carries_password(store))
    fail(ErrorKind::usage, "the store URL carries a password, which emco would keep in .emco/store",
         "leave it out of the URL and give it with PGPASSWORD, ~/.pgpass or a service file (PGSERVICE)");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(ErrorKind::workspace, "cannot create directory '" + dir.string() + "': " + ec.message());
  Workspace ws{fs::absolute(dir).lexically_normal()};
  if (ws.root.filename().empty()) ws.root = ws.root.parent_path();
  created = !has_workspace(ws.root);
  if (!created) {
    const std::string have = fs::exists(ws.store_file()) ? read_store_file(ws.store_file()) : "";
    if (!store.empty() && have != store)
      fail(ErrorKind::workspace,
           "'" + ws.root.string() + "' already holds a workspace " +
               (have.empty() ? std::string("in a SQLite file") : "on '" + have + "'"),
           "copy it with 'emco workspace export' / 'import', or choose another directory");
  }
  fs::create_directories(ws.dir(), ec);
  if (ec) fail(ErrorKind::workspace, "cannot create '" + ws.dir().string() + "': " + ec.message());
  // 0700 whatever the umask was: the workspace holds credentials.
  if (::chmod(ws.dir().c_str(), 0700) != 0)
    fail(ErrorKind::workspace, "cannot set permissions on '" + ws.dir().string() + "'");
  if (created && !store.empty()) {
    // The database first: a URL it refuses (a password in it, no server)
    // leaves no .emco/store behind.
    Store::open_location(store, ws.dir());
    std::ofstream out(ws.store_file());
    out << store << "\n";
    out.close();
    if (!out) fail(ErrorKind::workspace, "cannot write '" + ws.store_file().string() + "'");
    ::chmod(ws.store_file().c_str(), 0600);
    return ws;
  }
  Store::open(ws);  // creates and migrates the database
  if (!fs::exists(ws.store_file())) ::chmod(ws.database().c_str(), 0600);
  return ws;
}

Workspace find_workspace(const std::optional<std::string>& explicit_dir, const fs::path& cwd) {
  auto check = [](const fs::path& root, const std::string& source) {
    Workspace ws{fs::absolute(root).lexically_normal()};
    if (!has_workspace(ws.root))
      fail(ErrorKind::workspace, "'" + root.string() + "' (from " + source + ") is not an emco workspace",
           "create one with 'emco init " + root.string() + "'");
    return ws;
  };
  if (explicit_dir && !explicit_dir->empty()) return check(*explicit_dir, "--workspace");
  if (const char* env = std::getenv("EMCO_WORKSPACE"); env && *env) return check(env, "EMCO_WORKSPACE");
  for (fs::path p = fs::absolute(cwd); ; p = p.parent_path()) {
    if (has_workspace(p)) return Workspace{p};
    if (p == p.parent_path()) break;
  }
  fail(ErrorKind::workspace, "not in an emco workspace (or any parent directory)",
       "create one with 'emco init', or point at one with --workspace DIR or EMCO_WORKSPACE");
}

}  // namespace emco::store
