#include "core/store/workspace.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <system_error>

#include "core/store/store.hpp"
#include "core/util/error.hpp"

namespace emco::store {

namespace fs = std::filesystem;

Workspace init_workspace(const fs::path& dir, bool& created) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(ErrorKind::workspace, "cannot create directory '" + dir.string() + "': " + ec.message());
  Workspace ws{fs::absolute(dir).lexically_normal()};
  if (ws.root.filename().empty()) ws.root = ws.root.parent_path();
  created = !fs::exists(ws.database());
  fs::create_directories(ws.dir(), ec);
  if (ec) fail(ErrorKind::workspace, "cannot create '" + ws.dir().string() + "': " + ec.message());
  // 0700 whatever the umask was: the workspace holds credentials.
  if (::chmod(ws.dir().c_str(), 0700) != 0)
    fail(ErrorKind::workspace, "cannot set permissions on '" + ws.dir().string() + "'");
  Store::open(ws);  // creates and migrates the database
  ::chmod(ws.database().c_str(), 0600);
  return ws;
}

Workspace find_workspace(const std::optional<std::string>& explicit_dir, const fs::path& cwd) {
  auto check = [](const fs::path& root, const std::string& source) {
    Workspace ws{fs::absolute(root).lexically_normal()};
    if (!fs::exists(ws.database()))
      fail(ErrorKind::workspace, "'" + root.string() + "' (from " + source + ") is not an emco workspace",
           "create one with 'emco init " + root.string() + "'");
    return ws;
  };
  if (explicit_dir && !explicit_dir->empty()) return check(*explicit_dir, "--workspace");
  if (const char* env = std::getenv("EMCO_WORKSPACE"); env && *env) return check(env, "EMCO_WORKSPACE");
  for (fs::path p = fs::absolute(cwd); ; p = p.parent_path()) {
    if (fs::exists(p / ".emco" / "emco.db")) return Workspace{p};
    if (p == p.parent_path()) break;
  }
  fail(ErrorKind::workspace, "not in an emco workspace (or any parent directory)",
       "create one with 'emco init', or point at one with --workspace DIR or EMCO_WORKSPACE");
}

}  // namespace emco::store
