#include "cli/app.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/context.hpp"
#include "cli/table.hpp"
#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"
#include "core/sync/queue.hpp"
#include "core/util/error.hpp"
#include "plugins/builtin.hpp"

extern char** environ;

namespace emco::cli {

namespace {

// Auto-resume (issue #6): work an interrupted emco process left queued
// (kill -9, power loss) resumes in the next invocation that touches the
// workspace. Doing it in-process would make a quick `emco get` wait for
// clusters, so a detached `emco sync` does it in the background, one at a
// time per workspace (sync::claim_background_slot), with its messages in
// .emco/sync.log. EMCO_AUTO_RESUME=0 turns this off.
void resume_in_background(Context& ctx) {
  const char* env = std::getenv("EMCO_AUTO_RESUME");
  if ((env && std::string(env) == "0") || ctx.delivers || !ctx.store_opened()) return;
  auto& st = ctx.store();
  if (sync::resumable(st).empty()) return;
  // Held under this process's pid until the child's is known.
  if (!sync::claim_background_slot(st)) return;
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    sync::set_background_slot(st, 0);
    return;
  }
  self[n] = '\0';
  std::string root = ctx.workspace().root.string();
  std::string log = (ctx.workspace().dir() / "sync.log").string();
  std::vector<std::string> args = {self, "sync", "--workspace", root, "--timeout",
                                   std::to_string(sync::k_background_timeout.count()) + "m"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own session: Ctrl-C in this terminal and the shell's exit leave it running.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, self, &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    sync::set_background_slot(st, 0);
    ctx.warn("cannot start 'emco sync' in the background to resume queued work; run 'emco sync'");
    return;
  }
  sync::set_background_slot(st, pid);
  ctx.note("resuming work an interrupted emco left queued, in the background (pid " + std::to_string(pid) +
           "); 'emco status' follows it");
}

const lifecycle::Runtime& no_plugins() {
  static const lifecycle::Runtime none;
  return none;
}

int report(std::ostream& err, const Error& e) {
  err << "emco: error: " << e.message() << "\n";
  if (!e.hint().empty()) err << "hint: " << e.hint() << "\n";
  return static_cast<int>(exit_code(e.kind()));
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    auto inv = parse(args, out);
    if (!inv) return 0;
    // The plugins are built when first needed: by the handler (controllers,
    // delivery) or by a lookup of a kind core does not define (their intent
    // kinds are part of the anchors). `emco get` of a project, `emco dig
    // status` and `emco --version` never pay for building them.
    static const bool loader_set = (resource::set_kind_loader([] { plugins::builtin_runtime(); }), true);
    (void)loader_set;
    std::optional<std::string> ws;
    if (inv->has("workspace")) ws = inv->get("workspace");
    Context ctx(out, err, ws, inv->command->needs_plugins ? &plugins::builtin_runtime : &no_plugins);
    ctx.quiet = inv->has("quiet");
    if (inv->command->needs_workspace) ctx.workspace();
    int code = inv->command->handler(ctx, *inv);
    resume_in_background(ctx);
    if (ctx.store_opened()) ctx.store().leave_open_at_exit();
    out.flush();
    if (!out) {
      err << "emco: error: cannot write output\n";
      return static_cast<int>(ExitCode::failed);
    }
    return code;
  } catch (const Error& e) {
    return report(err, e);
  } catch (const std::exception& e) {
    // The disk refused (full, I/O error, read-only): the user's to fix, and
    // nothing is half-written (every change is one transaction).
    if (auto storage = store::storage_failure(e)) return report(err, *storage);
    err << "emco: error: internal error: " << e.what() << "\n"
        << "hint: this is a bug in emco; please report it with the command that caused it\n";
    return static_cast<int>(ExitCode::internal);
  }
}

}  // namespace emco::cli
