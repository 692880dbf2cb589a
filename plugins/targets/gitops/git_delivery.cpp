#include "plugins/targets/gitops/git_delivery.hpp"

#include <fcntl.h>
#include <git2.h>
#include <git2/sys/mempack.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/targets/gitops/libgit2_init.hpp"

namespace emco::gitops {

namespace fs = std::filesystem;

namespace {

// ---- libgit2 handles -------------------------------------------------------

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using RepoPtr = std::unique_ptr<git_repository, Deleter<git_repository, git_repository_free>>;
using RemotePtr = std::unique_ptr<git_remote, Deleter<git_remote, git_remote_free>>;
using TreePtr = std::unique_ptr<git_tree, Deleter<git_tree, git_tree_free>>;
using CommitPtr = std::unique_ptr<git_commit, Deleter<git_commit, git_commit_free>>;
using BuilderPtr = std::unique_ptr<git_treebuilder, Deleter<git_treebuilder, git_treebuilder_free>>;
using RefPtr = std::unique_ptr<git_reference, Deleter<git_reference, git_reference_free>>;
using OdbPtr = std::unique_ptr<git_odb, Deleter<git_odb, git_odb_free>>;
using SigPtr = std::unique_ptr<git_signature, Deleter<git_signature, git_signature_free>>;
using WalkPtr = std::unique_ptr<git_revwalk, Deleter<git_revwalk, git_revwalk_free>>;
using PackPtr = std::unique_ptr<git_packbuilder, Deleter<git_packbuilder, git_packbuilder_free>>;

std::string last_git_message() {
  const git_error* e = git_error_last();
  return e && e->message ? std::string(e->message) : std::string("unknown libgit2 error");
}

int last_git_class() {
  const git_error* e = git_error_last();
  return e ? e->klass : GIT_ERROR_NONE;
}

std::string oid_hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

// Thrown inside this file for failures that are not the caller's business
// (bugs in emco's use of libgit2, disk errors in the cache).
[[noreturn]] void fail_git(const std::string& what) {
  fail(ErrorKind::failed, what + ": " + last_git_message());
}

void check(int rc, const std::string& what) {
  if (rc < 0) fail_git(what);
}

// ---- the per-remote lock ---------------------------------------------------

class CacheLock {
public:
  explicit CacheLock(const fs::path& path) {
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (m_fd < 0) fail(ErrorKind::failed, "cannot open lock file '" + path.string() + "'");
    while (::flock(m_fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(m_fd);
        fail(ErrorKind::failed, "cannot lock '" + path.string() + "'");
      }
    }
  }
  ~CacheLock() { ::close(m_fd); }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

private:
  int m_fd = -1;
};

void make_private_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(ErrorKind::failed, "cannot create '" + dir.string() + "': " + ec.message());
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
}

// ---- callbacks ---------------------------------------------------------------

// One per connection: what the callbacks saw, and the first error they raised.
struct CallbackState {
  const GitRemoteSpec* spec = nullptr;
  RemoteUrl url;
  int credential_calls = 0;
  bool offered_credentials = false;
  std::optional<Error> failure;
  std::string remote_text;                  // sideband ("remote: ...") output
  std::vector<std::string> rejections;      // "ref: status" from the server
};

constexpr int k_max_credential_calls = 3;

int give_up(CallbackState& st, ErrorKind kind, const std::string& message, const std::string& hint) {
  if (!st.failure) st.failure = Error(kind, message, hint);
  git_error_set_str(GIT_ERROR_CALLBACK, message.c_str());
  return GIT_EUSER;
}

int credentials_cb(git_credential** out, const char* /*url*/, const char* username_from_url,
                   unsigned int allowed, void* payload) {
  auto& st = *static_cast<CallbackState*>(payload);
  const std::string where = "'" + redact_url(st.spec->url) + "'";
  const std::string hint = "check the credentials configured for this remote";
  // A second request after we offered credentials means the server refused them;
  // libgit2 would otherwise ask again and again.
  if (st.offered_credentials || ++st.credential_calls > k_max_credential_calls)
    return give_up(st, ErrorKind::unreachable, "authentication failed for " + where, hint);
  const auto& creds = st.spec->credentials;
  if (std::holds_alternative<NoCredentials>(creds))
    return give_up(st, ErrorKind::unreachable,
                   "authentication required by " + where + " but no credentials are configured",
                   "give the remote a token, a user and password, or an ssh key");
  if (auto* key = std::get_if<SshKey>(&creds)) {
    std::string user = !key->user.empty() ? key->user
                       : (username_from_url && *username_from_url) ? username_from_url
                                                                   : "git";
    if (allowed & GIT_CREDENTIAL_USERNAME) return git_credential_username_new(out, user.c_str());
    if (!(allowed & GIT_CREDENTIAL_SSH_KEY))
      return give_up(st, ErrorKind::unreachable, where + " does not accept ssh key authentication", hint);
    st.offered_credentials = true;
    int rc = git_credential_ssh_key_memory_new(
        out, user.c_str(), key->public_key.empty() ? nullptr : key->public_key.c_str(),
        key->private_key.c_str(), key->passphrase.empty() ? nullptr : key->passphrase.c_str());
    if (rc < 0) return give_up(st, ErrorKind::invalid, "cannot use the ssh key configured for " + where, hint);
    return 0;
  }
  if (!(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT))
    return give_up(st, ErrorKind::unreachable, where + " does not accept user/password authentication", hint);
  st.offered_credentials = true;
  if (auto* token = std::get_if<HttpsToken>(&creds))
    return git_credential_userpass_plaintext_new(out, token->user.c_str(), token->token.c_str());
  const auto& up = std::get<UserPassword>(creds);
  return git_credential_userpass_plaintext_new(out, up.user.c_str(), up.password.c_str());
}

int certificate_cb(git_cert* cert, int valid, const char* host, void* payload) {
  auto& st = *static_cast<CallbackState*>(payload);
  const GitRemoteSpec& spec = *st.spec;
  std::string where = std::string(host ? host : st.url.host);
  if (st.url.port && st.url.port != 22 && st.url.port != 443) where += ":" + std::to_string(st.url.port);
  if (cert->cert_type == GIT_CERT_HOSTKEY_LIBSSH2) {
    if (spec.host_key_check == HostKeyCheck::insecure_accept_any) return 0;
    std::string hint = "add the host's key to the remote's known_hosts (ssh-keyscan -p " +
                       std::to_string(st.url.port) + " " + st.url.host + ")";
    if (spec.known_hosts.empty()) {
      if (valid) return 0;  // libgit2 found it in $HOME/.ssh/known_hosts
      return give_up(st, ErrorKind::unreachable, "ssh host key of '" + where + "' is not in known_hosts", hint);
    }
    auto* hostkey = reinterpret_cast<git_cert_hostkey*>(cert);
    if (!(hostkey->type & GIT_CERT_SSH_RAW))
      return give_up(st, ErrorKind::unreachable, "ssh host key of '" + where + "' cannot be checked", hint);
    std::string_view blob(hostkey->hostkey, hostkey->hostkey_len);
    switch (known_hosts_lookup(spec.known_hosts, st.url.host, st.url.port, blob)) {
      case KnownHostMatch::matches: return 0;
      case KnownHostMatch::mismatch:
        return give_up(st, ErrorKind::unreachable,
                       "ssh host key of '" + where + "' does not match known_hosts",
                       "someone may be intercepting the connection; if the host key changed on purpose, update known_hosts");
      case KnownHostMatch::revoked:
        return give_up(st, ErrorKind::unreachable, "ssh host key of '" + where + "' is revoked in known_hosts", hint);
      case KnownHostMatch::unknown: break;
    }
    return give_up(st, ErrorKind::unreachable, "ssh host key of '" + where + "' is not in known_hosts", hint);
  }
  if (valid || spec.tls_verify == TlsVerify::insecure_skip) return 0;
  if (cert->cert_type == GIT_CERT_X509 && !spec.ca_pem.empty()) {
    auto* x509 = reinterpret_cast<git_cert_x509*>(cert);
    std::string_view der(static_cast<const char*>(x509->data), x509->len);
    if (certificate_trusted(der, spec.ca_pem, host ? host : st.url.host)) return 0;
  }
  return give_up(st, ErrorKind::unreachable, "tls certificate of '" + where + "' is not trusted",
                 spec.ca_pem.empty() ? "install the CA that signed it in the system trust store, or give the remote its CA"
                                     : "the remote's CA did not sign it for this host name, and the system does not trust it");
}

int sideband_cb(const char* text, int len, void* payload) {
  auto& st = *static_cast<CallbackState*>(payload);
  if (st.remote_text.size() < 65536) st.remote_text.append(text, static_cast<size_t>(len));
  return 0;
}

int push_update_reference_cb(const char* refname, const char* status, void* payload) {
  auto& st = *static_cast<CallbackState*>(payload);
  if (status) st.rejections.push_back(std::string(refname) + ": " + status);
  return 0;
}

git_remote_callbacks make_callbacks(CallbackState& st) {
  git_remote_callbacks cb;
  git_remote_init_callbacks(&cb, GIT_REMOTE_CALLBACKS_VERSION);
  cb.credentials = credentials_cb;
  cb.certificate_check = certificate_cb;
  cb.sideband_progress = sideband_cb;
  cb.push_update_reference = push_update_reference_cb;
  cb.payload = &st;
  return cb;
}

git_proxy_options make_proxy_options() {
  git_proxy_options proxy;
  git_proxy_options_init(&proxy, GIT_PROXY_OPTIONS_VERSION);
  proxy.type = GIT_PROXY_AUTO;
  return proxy;
}

// The server's own words (hook output) from sideband text, without progress meters.
std::string remote_said(const std::string& text) {
  std::vector<std::string> lines;
  std::string current;
  auto flush = [&] {
    std::string line = trim(current);
    current.clear();
    if (line.empty()) return;
    for (const char* noise : {"Counting objects", "Compressing objects", "Resolving deltas", "Writing objects",
                              "Total ", "Enumerating objects", "Delta compression", "Unpacking objects"})
      if (starts_with(line, noise)) return;
    lines.push_back(line);
  };
  for (char c : text) {
    if (c == '\n' || c == '\r') flush();
    else current += c;
  }
  flush();
  if (lines.size() > 10) lines.erase(lines.begin(), lines.end() - 10);
  return join(lines, "; ");
}

// ---- errors from libgit2 calls that talk to the remote -----------------------

enum class Stage { fetch, push };

[[noreturn]] void fail_remote(const CallbackState& st, Stage stage, int rc) {
  const GitRemoteSpec& spec = *st.spec;
  std::vector<std::string> secrets = secrets_of(spec);
  if (st.failure) {
    const Error& e = *st.failure;
    throw Error(e.kind(), scrub(e.message(), secrets), scrub(e.hint(), secrets));
  }
  std::string what = stage == Stage::fetch
                         ? "cannot fetch branch '" + spec.branch + "' from '" + redact_url(spec.url) + "'"
                         : "cannot push branch '" + spec.branch + "' to '" + redact_url(spec.url) + "'";
  std::string message = scrub(what + ": " + last_git_message(), secrets);
  int klass = last_git_class();
  bool transport = klass == GIT_ERROR_NET || klass == GIT_ERROR_SSH || klass == GIT_ERROR_HTTP ||
                   klass == GIT_ERROR_OS || klass == GIT_ERROR_SSL || rc == GIT_ECERTIFICATE ||
                   rc == GIT_EAUTH || stage == Stage::fetch;
  throw Error(transport ? ErrorKind::unreachable : ErrorKind::failed, message,
              transport ? "check that the remote is reachable and the url is right" : "");
}

// ---- cache repository ----------------------------------------------------------

std::string tracking_ref(const std::string& branch) { return "refs/remotes/origin/" + branch; }
constexpr const char* k_outgoing_ref = "refs/emco/outgoing";

// GitOps repositories hold many small manifests: delta search costs most of
// a push and saves little, so packs are written with zlib only (the server's
// own gc can recompress). libgit2 1.5 reads its big-file threshold from
// pack.deltaCacheSize (a libgit2 bug), so both keys are set; objects above
// the threshold are never delta-compressed.
void configure_packing(git_repository* repo) {
  git_config* raw = nullptr;
  check(git_repository_config(&raw, repo), "cannot read git cache config");
  std::unique_ptr<git_config, Deleter<git_config, git_config_free>> config(raw);
  for (const char* key : {"pack.bigFileThreshold", "pack.deltaCacheSize"}) {
    int64_t value = 0;
    if (git_config_get_int64(&value, config.get(), key) == 0 && value == 1) continue;
    check(git_config_set_int64(config.get(), key, 1), "cannot write git cache config");
  }
}

RepoPtr open_cache(const fs::path& dir) {
  git_repository* repo = nullptr;
  if (fs::exists(dir / "HEAD")) {
    check(git_repository_open_bare(&repo, dir.c_str()), "cannot open git cache '" + dir.string() + "'");
  } else {
    make_private_dir(dir);
    check(git_repository_init(&repo, dir.c_str(), 1), "cannot create git cache '" + dir.string() + "'");
  }
  RepoPtr out(repo);
  configure_packing(out.get());
  return out;
}

std::optional<git_oid> lookup_ref(git_repository* repo, const std::string& name) {
  git_oid oid;
  int rc = git_reference_name_to_id(&oid, repo, name.c_str());
  if (rc == GIT_ENOTFOUND) return std::nullopt;
  check(rc, "cannot read ref '" + name + "'");
  return oid;
}

void set_ref(git_repository* repo, const std::string& name, const git_oid& oid) {
  git_reference* ref = nullptr;
  check(git_reference_create(&ref, repo, name.c_str(), &oid, 1, nullptr), "cannot update ref '" + name + "'");
  git_reference_free(ref);
}

void delete_ref(git_repository* repo, const std::string& name) {
  git_reference* ref = nullptr;
  if (git_reference_lookup(&ref, repo, name.c_str()) == 0) {
    git_reference_delete(ref);
    git_reference_free(ref);
  }
}

bool object_exists(git_repository* repo, const git_oid& oid) {
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, repo), "cannot open object database");
  OdbPtr guard(odb);
  return git_odb_exists(odb, &oid) == 1;
}

// ---- fetch -------------------------------------------------------------------

struct RemoteHeads {
  std::optional<git_oid> branch;
  std::optional<git_oid> default_head;
};

RemotePtr anonymous_remote(git_repository* repo, const GitRemoteSpec& spec) {
  git_remote* remote = nullptr;
  if (git_remote_create_anonymous(&remote, repo, spec.url.c_str()) < 0)
    fail(ErrorKind::invalid, "invalid git remote url '" + redact_url(spec.url) + "': " +
                                 scrub(last_git_message(), secrets_of(spec)));
  return RemotePtr(remote);
}

RemoteHeads fetch_heads(git_repository* repo, const GitRemoteSpec& spec, const RemoteUrl& url, bool want_default) {
  CallbackState st;
  st.spec = &spec;
  st.url = url;
  git_remote_callbacks cb = make_callbacks(st);
  git_proxy_options proxy = make_proxy_options();
  RemotePtr remote = anonymous_remote(repo, spec);
  int rc = git_remote_connect(remote.get(), GIT_DIRECTION_FETCH, &cb, &proxy, nullptr);
  if (rc < 0) fail_remote(st, Stage::fetch, rc);

  const git_remote_head** heads = nullptr;
  size_t count = 0;
  rc = git_remote_ls(&heads, &count, remote.get());
  if (rc < 0) fail_remote(st, Stage::fetch, rc);
  RemoteHeads out;
  std::string branch_ref = "refs/heads/" + spec.branch;
  std::vector<std::string> wanted;
  for (size_t i = 0; i < count; ++i) {
    std::string name = heads[i]->name;
    if (name == branch_ref) {
      out.branch = heads[i]->oid;
      if (!object_exists(repo, heads[i]->oid)) wanted.push_back(branch_ref);
    } else if (name == "HEAD" && want_default) {
      out.default_head = heads[i]->oid;
      if (!object_exists(repo, heads[i]->oid)) wanted.push_back("HEAD");
    }
  }
  if (!wanted.empty()) {
    std::vector<char*> specs;
    for (auto& w : wanted) specs.push_back(w.data());
    git_strarray refspecs{specs.data(), specs.size()};
    git_fetch_options opts;
    git_fetch_options_init(&opts, GIT_FETCH_OPTIONS_VERSION);
    opts.callbacks = cb;
    opts.proxy_opts = proxy;
    rc = git_remote_download(remote.get(), &refspecs, &opts);
    if (rc < 0) fail_remote(st, Stage::fetch, rc);
  }
  git_remote_disconnect(remote.get());
  for (auto* oid : {out.branch ? &*out.branch : nullptr, out.default_head ? &*out.default_head : nullptr})
    if (oid && !object_exists(repo, *oid))
      fail(ErrorKind::failed, "fetch from '" + redact_url(spec.url) + "' did not bring commit " + oid_hex(*oid));
  return out;
}

// ---- building trees in memory --------------------------------------------------

struct DirNode {
  bool replace = false;  // start from an empty directory (a "dir/" deletion)
  std::map<std::string, const std::optional<std::string>*> files;
  std::map<std::string, DirNode> dirs;
};

void validate_component(const std::string& part, const std::string& path) {
  if (part.empty() || part == "." || part == ".." || part == ".git" || part.find('\0') != std::string::npos)
    fail(ErrorKind::invalid, "invalid path '" + path + "' in git change set");
}

DirNode build_trie(const ChangeSet& changes) {
  DirNode root;
  for (const auto& [path, content] : changes) {
    bool is_dir = ends_with(path, "/");
    if (is_dir && content)
      fail(ErrorKind::invalid, "directory path '" + path + "' can only be deleted in a git change set");
    auto parts = split(is_dir ? std::string_view(path).substr(0, path.size() - 1) : std::string_view(path), '/');
    DirNode* node = &root;
    for (size_t i = 0; i < parts.size(); ++i) {
      validate_component(parts[i], path);
      if (i + 1 == parts.size() && !is_dir) node->files[parts[i]] = &content;
      else node = &node->dirs[parts[i]];
    }
    if (is_dir) {
      node->replace = true;
    }
  }
  return root;
}

struct BuildStats {
  size_t written = 0;
  size_t deleted = 0;
  // Operations repeat the same manifest on many clusters: hash each distinct
  // content once.
  std::unordered_map<std::string_view, git_oid> blobs;
};

int count_blob(const char*, const git_tree_entry* entry, void* payload) {
  if (git_tree_entry_type(entry) == GIT_OBJECT_BLOB) ++*static_cast<size_t*>(payload);
  return 0;
}

size_t count_files(const git_tree* tree) {
  size_t count = 0;
  check(git_tree_walk(tree, GIT_TREEWALK_PRE, count_blob, &count), "cannot walk tree");
  return count;
}

// The tree for `node` applied to `base` (may be null); nullopt = empty.
std::optional<git_oid> build_tree(git_repository* repo, const git_tree* base, const DirNode& node, BuildStats& stats) {
  git_treebuilder* raw = nullptr;
  check(git_treebuilder_new(&raw, repo, node.replace ? nullptr : base), "cannot create tree builder");
  BuilderPtr tb(raw);
  if (node.replace && base) stats.deleted += count_files(base);
  for (const auto& [name, content] : node.files) {
    const git_tree_entry* existing = git_treebuilder_get(tb.get(), name.c_str());
    if (!content->has_value()) {
      if (existing) {
        check(git_treebuilder_remove(tb.get(), name.c_str()), "cannot remove '" + name + "'");
        ++stats.deleted;
      }
      continue;
    }
    const std::string& data = **content;
    auto [known, fresh] = stats.blobs.try_emplace(std::string_view(data));
    if (fresh) check(git_blob_create_from_buffer(&known->second, repo, data.data(), data.size()), "cannot store blob");
    const git_oid blob = known->second;
    if (existing && git_tree_entry_filemode(existing) == GIT_FILEMODE_BLOB &&
        git_oid_equal(git_tree_entry_id(existing), &blob))
      continue;
    check(git_treebuilder_insert(nullptr, tb.get(), name.c_str(), &blob, GIT_FILEMODE_BLOB),
          "cannot add '" + name + "' to tree");
    ++stats.written;
  }
  for (const auto& [name, child] : node.dirs) {
    const git_tree_entry* existing = git_treebuilder_get(tb.get(), name.c_str());
    TreePtr sub;
    if (existing && git_tree_entry_type(existing) == GIT_OBJECT_TREE) {
      git_tree* t = nullptr;
      check(git_tree_lookup(&t, repo, git_tree_entry_id(existing)), "cannot read tree '" + name + "'");
      sub.reset(t);
    }
    std::optional<git_oid> result = build_tree(repo, sub.get(), child, stats);
    if (result) {
      check(git_treebuilder_insert(nullptr, tb.get(), name.c_str(), &*result, GIT_FILEMODE_TREE),
            "cannot add directory '" + name + "' to tree");
    } else if (existing) {
      check(git_treebuilder_remove(tb.get(), name.c_str()), "cannot remove directory '" + name + "'");
    }
  }
  if (git_treebuilder_entrycount(tb.get()) == 0) return std::nullopt;
  git_oid out;
  check(git_treebuilder_write(&out, tb.get()), "cannot write tree");
  return out;
}

git_oid empty_tree(git_repository* repo) {
  git_treebuilder* raw = nullptr;
  check(git_treebuilder_new(&raw, repo, nullptr), "cannot create tree builder");
  BuilderPtr tb(raw);
  git_oid out;
  check(git_treebuilder_write(&out, tb.get()), "cannot write tree");
  return out;
}

// ---- push ----------------------------------------------------------------------

enum class PushOutcome { pushed, raced };

// Status texts with which a server refuses a ref update because the ref moved.
bool is_race_status(const std::string& status) {
  for (const char* s : {"non-fast-forward", "fetch first", "failed to update ref", "failed to lock",
                        "cannot lock ref", "stale info", "reference already exists"})
    if (status.find(s) != std::string::npos) return true;
  return false;
}

PushOutcome push_network(git_repository* repo, const GitRemoteSpec& spec, const RemoteUrl& url, const git_oid& commit) {
  set_ref(repo, k_outgoing_ref, commit);
  CallbackState st;
  st.spec = &spec;
  st.url = url;
  git_push_options opts;
  git_push_options_init(&opts, GIT_PUSH_OPTIONS_VERSION);
  opts.callbacks = make_callbacks(st);
  opts.proxy_opts = make_proxy_options();
  opts.pb_parallelism = 0;  // one thread per core for delta search
  std::string refspec = std::string(k_outgoing_ref) + ":refs/heads/" + spec.branch;
  char* specs[] = {refspec.data()};
  git_strarray refspecs{specs, 1};
  RemotePtr remote = anonymous_remote(repo, spec);
  int rc = git_remote_push(remote.get(), &refspecs, &opts);
  delete_ref(repo, k_outgoing_ref);
  if (rc == GIT_ENONFASTFORWARD) return PushOutcome::raced;
  if (rc < 0) fail_remote(st, Stage::push, rc);
  if (!st.rejections.empty()) {
    std::string status = join(st.rejections, ", ");
    if (is_race_status(status)) return PushOutcome::raced;
    std::string said = remote_said(st.remote_text);
    fail(ErrorKind::failed,
         scrub("push to '" + redact_url(spec.url) + "' was rejected (" + status + ")" +
                   (said.empty() ? "" : ": remote said: " + said),
               secrets_of(spec)),
         "the server refused the commit; its message says why");
  }
  return PushOutcome::pushed;
}

struct PackBuffer {
  git_buf buf = GIT_BUF_INIT;
  PackBuffer() = default;
  PackBuffer(const PackBuffer&) = delete;
  PackBuffer& operator=(const PackBuffer&) = delete;
  ~PackBuffer() { git_buf_dispose(&buf); }
};
using BufPtr = std::unique_ptr<PackBuffer>;

// A pack of the objects `commit` adds to `parent` (all of them without one).
BufPtr build_pack(git_repository* repo, const git_oid& commit, const std::optional<git_oid>& parent) {
  git_revwalk* walk_raw = nullptr;
  check(git_revwalk_new(&walk_raw, repo), "cannot walk history");
  WalkPtr walk(walk_raw);
  check(git_revwalk_push(walk.get(), &commit), "cannot walk history");
  if (parent) check(git_revwalk_hide(walk.get(), &*parent), "cannot walk history");
  git_packbuilder* pb_raw = nullptr;
  check(git_packbuilder_new(&pb_raw, repo), "cannot build pack");
  PackPtr pb(pb_raw);
  git_packbuilder_set_threads(pb.get(), 0);
  check(git_packbuilder_insert_walk(pb.get(), walk.get()), "cannot build pack");
  auto pack = std::make_unique<PackBuffer>();
  check(git_packbuilder_write_buf(&pack->buf, pb.get()), "cannot build pack");
  return pack;
}

// Indexes `pack` into the object database of `repo`; returns libgit2's code.
int store_pack(git_repository* repo, const git_buf& pack) {
  git_odb* odb_raw = nullptr;
  int rc = git_repository_odb(&odb_raw, repo);
  if (rc < 0) return rc;
  OdbPtr odb(odb_raw);
  git_odb_writepack* writer = nullptr;
  if ((rc = git_odb_write_pack(&writer, odb.get(), nullptr, nullptr)) < 0) return rc;
  git_indexer_progress stats{};
  rc = writer->append(writer, pack.ptr, pack.size, &stats);
  if (rc == 0) rc = writer->commit(writer, &stats);
  writer->free(writer);
  return rc;
}

// file:// remotes: libgit2's local transport moves the ref with force and runs
// no hooks, which loses commits when two writers race. Store the pack in the
// remote and move its ref with a compare-and-swap instead.
PushOutcome push_local(const GitRemoteSpec& spec, const RemoteUrl& url, const git_buf& pack, const git_oid& commit,
                       const std::optional<git_oid>& expected) {
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, url.path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) < 0)
    fail(ErrorKind::unreachable, "cannot open git repository '" + redact_url(spec.url) + "': " + last_git_message());
  RepoPtr target(raw);
  if (!git_repository_is_bare(target.get()))
    fail(ErrorKind::invalid, "git repository '" + spec.url + "' is not bare", "push to a bare repository");
  if (store_pack(target.get(), pack) < 0)
    fail(ErrorKind::failed, "cannot write objects to '" + spec.url + "': " + last_git_message());

  std::string name = "refs/heads/" + spec.branch;
  git_reference* ref = nullptr;
  int rc = expected ? git_reference_create_matching(&ref, target.get(), name.c_str(), &commit, 1, &*expected,
                                                    "emco: push")
                    : git_reference_create(&ref, target.get(), name.c_str(), &commit, 0, "emco: push");
  git_reference_free(ref);
  if (rc == GIT_EMODIFIED || rc == GIT_EEXISTS || rc == GIT_ELOCKED) return PushOutcome::raced;
  if (rc < 0)
    fail(ErrorKind::failed, "cannot update branch '" + spec.branch + "' of '" + spec.url + "': " + last_git_message());
  return PushOutcome::pushed;
}

void backoff(int attempt) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  int base = std::min(50 << std::min(attempt, 5), 1000);
  std::uniform_int_distribution<int> jitter(0, base);
  std::this_thread::sleep_for(std::chrono::milliseconds(base / 2 + jitter(rng)));
}

}  // namespace

GitDelivery::GitDelivery(fs::path cache_root, DeliveryOptions options)
    : m_cache_root(std::move(cache_root)), m_options(std::move(options)) {
  ensure_libgit2();
  if (m_options.max_attempts < 1) m_options.max_attempts = 1;
}

fs::path GitDelivery::cache_path(const GitRemoteSpec& remote) const {
  return m_cache_root / cache_key(remote.url);
}

std::string GitDelivery::cached_head(const GitRemoteSpec& remote) const {
  fs::path dir = cache_path(remote);
  if (!fs::exists(dir / "HEAD")) return {};
  RepoPtr repo = open_cache(dir);
  auto oid = lookup_ref(repo.get(), tracking_ref(remote.branch));
  return oid ? oid_hex(*oid) : std::string();
}

DeliveryResult GitDelivery::deliver(const GitRemoteSpec& spec, const CommitRequest& request) {
  validate(spec);
  const RemoteUrl url = parse_remote_url(spec.url);
  const DirNode trie = build_trie(request.changes);
  if (trim(request.message).empty()) fail(ErrorKind::invalid, "commit message is empty");

  make_private_dir(m_cache_root);
  const fs::path dir = cache_path(spec);
  CacheLock lock(m_cache_root / (cache_key(spec.url) + ".lock"));
  RepoPtr repo = open_cache(dir);

  // New objects live in memory until a push succeeds, so a failed attempt
  // leaves nothing behind in the cache.
  git_odb* odb_raw = nullptr;
  check(git_repository_odb(&odb_raw, repo.get()), "cannot open object database");
  OdbPtr odb(odb_raw);
  git_odb_backend* mempack = nullptr;
  check(git_mempack_new(&mempack), "cannot create in-memory object store");
  check(git_odb_add_backend(odb.get(), mempack, 999), "cannot add in-memory object store");

  const std::string tracking = tracking_ref(spec.branch);
  const std::string where = "'" + redact_url(spec.url) + "'";
  DeliveryResult result;
  for (int attempt = 1; attempt <= m_options.max_attempts; ++attempt) {
    git_mempack_reset(mempack);
    const std::optional<git_oid> previous = lookup_ref(repo.get(), tracking);
    const bool want_default = m_options.new_branch_base == NewBranchBase::remote_default;
    RemoteHeads heads = fetch_heads(repo.get(), spec, url, want_default);

    if (previous && heads.branch && !git_oid_equal(&*previous, &*heads.branch)) {
      git_oid base;
      int rc = git_merge_base(&base, repo.get(), &*previous, &*heads.branch);
      if (rc == GIT_ENOTFOUND)
        fail(ErrorKind::conflict,
             "branch '" + spec.branch + "' of " + where + " has history unrelated to what emco delivered before",
             "if the repository was re-created on purpose, delete '" + dir.string() + "' and deliver again");
      check(rc, "cannot compare histories");
    }
    if (heads.branch) set_ref(repo.get(), tracking, *heads.branch);
    else delete_ref(repo.get(), tracking);

    std::optional<git_oid> parent = heads.branch;
    if (!parent && want_default) parent = heads.default_head;
    TreePtr base_tree;
    if (parent) {
      git_commit* c = nullptr;
      check(git_commit_lookup(&c, repo.get(), &*parent), "cannot read commit " + oid_hex(*parent));
      CommitPtr commit(c);
      git_tree* t = nullptr;
      check(git_commit_tree(&t, commit.get()), "cannot read tree of " + oid_hex(*parent));
      base_tree.reset(t);
    }
    BuildStats stats;
    std::optional<git_oid> tree = build_tree(repo.get(), base_tree.get(), trie, stats);
    git_oid tree_id = tree ? *tree : empty_tree(repo.get());
    bool same = base_tree ? git_oid_equal(&tree_id, git_tree_id(base_tree.get())) : !tree.has_value();
    if (same && (heads.branch || !parent)) {
      result.changed = false;
      result.commit_id = heads.branch ? oid_hex(*heads.branch) : std::string();
      result.attempts = attempt - 1;
      return result;
    }

    git_signature* sig_raw = nullptr;
    if (git_signature_now(&sig_raw, request.author.name.c_str(), request.author.email.c_str()) < 0)
      fail(ErrorKind::invalid, "invalid commit author '" + request.author.name + " <" + request.author.email + ">'");
    SigPtr sig(sig_raw);
    git_tree* tree_obj = nullptr;
    check(git_tree_lookup(&tree_obj, repo.get(), &tree_id), "cannot read new tree");
    TreePtr new_tree(tree_obj);
    git_commit* parent_commit = nullptr;
    if (parent) check(git_commit_lookup(&parent_commit, repo.get(), &*parent), "cannot read parent commit");
    CommitPtr parent_guard(parent_commit);
    const git_commit* parents[] = {parent_commit};
    git_oid commit_id;
    check(git_commit_create(&commit_id, repo.get(), nullptr, sig.get(), sig.get(), nullptr, request.message.c_str(),
                            new_tree.get(), parent ? 1 : 0, parents),
          "cannot create commit");

    if (m_options.before_push) m_options.before_push(attempt);
    // One pack of the new objects serves a file:// remote and the cache.
    BufPtr pack = build_pack(repo.get(), commit_id, parent);
    PushOutcome outcome = url.scheme == "file" ? push_local(spec, url, pack->buf, commit_id, heads.branch)
                                               : push_network(repo.get(), spec, url, commit_id);
    if (outcome == PushOutcome::pushed) {
      check(store_pack(repo.get(), pack->buf), "cannot store new objects in the git cache");
      git_mempack_reset(mempack);
      set_ref(repo.get(), tracking, commit_id);
      result.changed = true;
      result.commit_id = oid_hex(commit_id);
      result.attempts = attempt;
      result.files_written = stats.written;
      result.files_deleted = stats.deleted;
      return result;
    }
    if (attempt < m_options.max_attempts) backoff(attempt);
  }
  git_mempack_reset(mempack);
  fail(ErrorKind::conflict,
       "push to " + where + " branch '" + spec.branch + "' was still rejected as non-fast-forward after " +
           std::to_string(m_options.max_attempts) + " attempts",
       "others keep pushing to this branch; deliver again later");
}

}  // namespace emco::gitops
