// `emco workspace ...`: moving a whole workspace between backends (export,
// import: core/store/archive.hpp) and the key that seals its secrets at rest
// (key generate, rotate-key: core/store/vault.hpp).

#include <fstream>
#include <iostream>

#include "cli/context.hpp"
#include "cli/table.hpp"
#include "core/store/archive.hpp"
#include "core/store/vault.hpp"
#include "core/util/error.hpp"

namespace emco::cli {

namespace {

int run_export(Context& ctx, const Invocation& inv) {
  const std::string file = inv.args.empty() ? "-" : inv.args[0];
  store::ExportOptions o;
  o.plaintext_secrets = inv.has("plaintext-secrets");
  store::ArchiveCounts n;
  if (file == "-") {
    n = store::export_workspace(ctx.store(), ctx.out, o);
  } else {
    // Written beside and renamed into place: a failed export leaves no
    // half archive under the name (the process umask keeps it 0600).
    const std::string tmp = file + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) fail(ErrorKind::failed, "cannot create '" + tmp + "'");
      try {
        n = store::export_workspace(ctx.store(), out, o);
      } catch (...) {
        out.close();
        std::remove(tmp.c_str());
        throw;
      }
    }
    if (std::rename(tmp.c_str(), file.c_str()) != 0) fail(ErrorKind::failed, "cannot write '" + file + "'");
  }
  ctx.note("exported " + std::to_string(n.rows) + " rows of " + std::to_string(n.tables) + " tables" +
           (file == "-" ? "" : " to " + file));
  return 0;
}

int run_import(Context& ctx, const Invocation& inv) {
  const std::string file = inv.args[0];
  store::ImportOptions o;
  o.replace = inv.has("replace");
  o.source = file == "-" ? "stdin" : file;
  store::ArchiveCounts n;
  if (file == "-") {
    n = store::import_workspace(ctx.store(), std::cin, o);
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) fail(ErrorKind::not_found, "cannot open '" + file + "'");
    n = store::import_workspace(ctx.store(), in, o);
  }
  ctx.note("imported " + std::to_string(n.rows) + " rows of " + std::to_string(n.tables) + " tables into " +
           store::redacted(ctx.workspace().location()));
  return 0;
}

int run_key_generate(Context& ctx, const Invocation& inv) {
  const auto key = store::generate_key();
  store::write_key_file(inv.args[0], key);
  ctx.out << key.id << "\n";
  ctx.note("wrote a new workspace key to " + inv.args[0] +
           " (keep it outside the workspace; emco reads it from EMCO_KEY_FILE)");
  return 0;
}

int run_rotate_key(Context& ctx, const Invocation& inv) {
  if (!inv.has("new-key-file"))
    fail(ErrorKind::usage, "give the new key with --new-key-file FILE", "make one with 'emco workspace key generate FILE'");
  const auto key = store::read_key_file(inv.get("new-key-file"), "--new-key-file");
  const int64_t n = store::rotate_key(ctx.store(), key);
  ctx.out << key.id << "\n";
  ctx.note("encrypted " + std::to_string(n) + " secret values with key " + key.id +
           ": point EMCO_KEY_FILE at " + inv.get("new-key-file") + " from now on");
  return 0;
}

}  // namespace

std::vector<CommandSpec> workspace_commands() {
  std::vector<CommandSpec> v;
  v.push_back(
      {.path = {"workspace", "export"},
       .summary = "write the whole workspace to a portable archive",
       .description =
           "Writes every row of the workspace database (resources and their files, AppContexts with their\n"
           "status, queues and history, credentials, meta) from one snapshot to FILE, or to stdout with '-'\n"
           "(the default), as versioned JSON lines that 'emco workspace import' loads into a workspace on\n"
           "either backend: SQLite to PostgreSQL and back. Encrypted secrets travel encrypted; a secret\n"
           "that is not encrypted is refused unless --plaintext-secrets is given. The GitOps caches under\n"
           ".emco/ are not copied (they are rebuilt).",
       .args = {{.name = "FILE", .help = "the archive to write ('-': stdout)", .optional = true, .complete = Complete::file}},
       .flags = {{.name = "plaintext-secrets", .help = "allow secrets that are not encrypted into the archive (in clear)"}},
       .examples = {"emco workspace export fleet.jsonl",
                    "emco workspace export - --workspace old | emco workspace import - --workspace team"},
       .handler = run_export});
  v.push_back(
      {.path = {"workspace", "import"},
       .summary = "load an archive written by 'emco workspace export' into this workspace",
       .description =
           "Loads FILE ('-': stdin) in one transaction: all of it or nothing. The workspace must hold no\n"
           "resources, AppContexts or credentials unless --replace is given (which drops them first), and\n"
           "the archive must be of this emco's schema version. Row ids, AppContext ids, status and history\n"
           "are kept, so 'emco get' and 'emco status' answer the same afterwards. The archive's encryption\n"
           "setting comes with it; an encrypted target seals secrets that arrive in clear (EMCO_KEY_FILE).",
       .args = {{.name = "FILE", .help = "the archive ('-': stdin)", .complete = Complete::file}},
       .flags = {{.name = "replace", .help = "drop everything the workspace holds before loading"}},
       .examples = {"emco init --store postgresql://db/fleet team && emco workspace import fleet.jsonl --workspace team"},
       .handler = run_import});
  v.push_back(
      {.path = {"workspace", "key", "generate"},
       .summary = "write a new random workspace key to a file (mode 0600)",
       .description =
           "Writes 32 random bytes (OpenSSL RAND_bytes), base64, to the new FILE (never overwritten) and\n"
           "prints the key's id. Keep it outside the workspace: emco reads it from EMCO_KEY_FILE (or the key\n"
           "itself from EMCO_KEY) and never stores it in the database or .emco/. Without it, encrypted\n"
           "secrets (credentials, cluster kubeconfigs, sync objects' kv) cannot be read.",
       .args = {{.name = "FILE", .help = "the key file to create", .complete = Complete::file}},
       .needs_workspace = false,
       .examples = {"emco workspace key generate ~/.config/emco/fleet.key"},
       .handler = run_key_generate});
  v.push_back(
      {.path = {"workspace", "rotate-key"},
       .summary = "encrypt every secret of the workspace with a new key",
       .description =
           "In one transaction, opens every secret value with the current key (EMCO_KEY_FILE or\n"
           "EMCO_KEY) and seals it again with the key in --new-key-file (AES-256-GCM), which becomes the\n"
           "workspace's key. On a workspace that is not encrypted, it encrypts it. Prints the new key's id.",
       .flags = {{.name = "new-key-file", .value = "FILE", .help = "the new key (from 'emco workspace key generate')",
                  .complete = Complete::file}},
       .examples = {"emco workspace key generate new.key && EMCO_KEY_FILE=old.key emco workspace rotate-key --new-key-file new.key"},
       .handler = run_rotate_key});
  return v;
}

}  // namespace emco::cli
