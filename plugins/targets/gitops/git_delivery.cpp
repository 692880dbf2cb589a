#include "plugins/targets/gitops/git_delivery.hpp"
#include "plugins/targets/gitops/git_stream.hpp"

#include <fcntl.h>
#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/util/error.hpp"
#include "core/util/printable.hpp"
#include "core/util/sha1.hpp"
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
using RefPtr = std::unique_ptr<git_reference, Deleter<git_reference, git_reference_free>>;
using OdbPtr = std::unique_ptr<git_odb, Deleter<git_odb, git_odb_free>>;
using SigPtr = std::unique_ptr<git_signature, Deleter<git_signature, git_signature_free>>;

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

// libgit2's last error: the file system refusing (GIT_ERROR_OS: disk full,
// an I/O error) is Error(workspace), worth retrying once the disk is fixed;
// anything else is a failure of emco's use of libgit2.
[[noreturn]] void fail_git(const std::string& what) {
  fail(last_git_class() == GIT_ERROR_OS ? ErrorKind::workspace : ErrorKind::failed, what + ": " + last_git_message());
}

void check(int rc, const std::string& what) {
  if (rc < 0) fail_git(what);
}

// ---- the per-remote lock ---------------------------------------------------

class CacheLock {
public:
  explicit CacheLock(const fs::path& path) {
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (m_fd < 0) fail(ErrorKind::workspace, "cannot open lock file '" + path.string() + "': " + std::strerror(errno));
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

// git's `.lock` files in a cache repository (a ref being updated, config,
// packed-refs) left by an emco process killed mid-update. Called only while
// holding the cache's CacheLock: no live process can be writing them then,
// and libgit2 would otherwise refuse every later update of those refs
// ("failed to lock file ... for writing") until someone removed them by hand.
void remove_stale_git_locks(const fs::path& dir) {
  std::error_code ec;
  auto stale = [&](const fs::directory_entry& e) {
    return e.is_regular_file(ec) && e.path().extension() == ".lock";
  };
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (stale(*it)) fs::remove(it->path(), ec);
  ec.clear();
  for (fs::recursive_directory_iterator it(dir / "refs", ec), end; !ec && it != end; it.increment(ec))
    if (stale(*it)) fs::remove(it->path(), ec);
}

void make_private_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(ErrorKind::workspace, "cannot create '" + dir.string() + "': " + ec.message());
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
  // Both come from the server: printable, bounded.
  if (status) st.rejections.push_back(printable(std::string(refname) + ": " + status, 512));
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
  // A transport that gave up because the deadline shut its socket (ssh's
  // own I/O) says something else: name the cause.
  if (network_deadline_passed() && message.find("deadline") == std::string::npos)
    message += " (the deadline passed: the remote did not finish in time)";
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

// Packs carry deltas (see write_pack). Caches made by earlier emco versions
// turned delta search off with these keys (set to 1; libgit2 1.5 reads its
// big-file threshold from pack.deltaCacheSize): they are removed.
void configure_packing(git_repository* repo) {
  git_config* raw = nullptr;
  check(git_repository_config(&raw, repo), "cannot read git cache config");
  std::unique_ptr<git_config, Deleter<git_config, git_config_free>> config(raw);
  for (const char* key : {"pack.bigFileThreshold", "pack.deltaCacheSize"}) {
    int64_t value = 0;
    if (git_config_get_int64(&value, config.get(), key) == 0 && value == 1)
      check(git_config_delete_entry(config.get(), key), "cannot write git cache config");
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

// Sets a ref of the cache repository. Callers hold the cache's CacheLock, so
// a ref's `.lock` file can only be left over from a write of this process
// that failed half-way (an I/O error between creating the lock and renaming
// it): it is removed and the update tried once more.
void set_ref(git_repository* repo, const std::string& name, const git_oid& oid) {
  git_reference* ref = nullptr;
  int rc = git_reference_create(&ref, repo, name.c_str(), &oid, 1, nullptr);
  if (rc == GIT_ELOCKED) {
    std::error_code ec;
    fs::remove(fs::path(git_repository_path(repo)) / (name + ".lock"), ec);
    rc = git_reference_create(&ref, repo, name.c_str(), &oid, 1, nullptr);
  }
  check(rc, "cannot update ref '" + name + "'");
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

struct FileChange {
  const std::optional<FileText>* content;
  mutable std::optional<git_oid> blob;  // blob_id() of the content, once computed
};

// The change set as a directory tree. Names are views into the change
// set's paths, which outlive it: a 100,000-cluster commit has millions of
// them, and copies were a large part of its memory.
struct DirNode {
  bool replace = false;  // start from an empty directory (a "dir/" deletion)
  std::map<std::string_view, FileChange> files;
  std::map<std::string_view, DirNode> dirs;
  // The directory's tree, built already from a ChangeGroup (nullopt inside:
  // the directory ends up empty); such a node has no files or dirs.
  std::optional<std::optional<git_oid>> built;
  mutable std::optional<git_oid> digest;  // change_digest(), once computed
};

// Calls visit(component, is_last) for each '/'-separated part of `path`.
template <class Visit>
void for_each_component(std::string_view path, Visit&& visit) {
  for (size_t begin = 0;;) {
    const size_t slash = path.find('/', begin);
    const bool last = slash == std::string_view::npos;
    visit(path.substr(begin, last ? std::string_view::npos : slash - begin), last);
    if (last) return;
    begin = slash + 1;
  }
}

// The part of `path` after its last '/' (all of it when there is none).
std::string_view last_component(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

void validate_component(std::string_view part, const std::string& path) {
  if (part.empty() || part == "." || part == ".." || part == ".git" || part.find('\0') != std::string_view::npos)
    fail(ErrorKind::invalid, "invalid path '" + path + "' in git change set");
}

// A change set comes in path order, so a directory's entries mostly arrive
// in name order too: each is placed after the last one added (no search of a
// 100,000-entry directory) unless it sorts earlier ('-' and '.' sort before
// '/', so "a-b/x" comes before "a/x"; a group's list is in any order).
DirNode& subdir(DirNode& node, std::string_view name) {
  if (!node.dirs.empty() && std::prev(node.dirs.end())->first == name) return std::prev(node.dirs.end())->second;
  return node.dirs.try_emplace(node.dirs.end(), name)->second;
}

// `changes`: a ChangeSet or a ChangeGroup's list (a path given twice: the
// last one counts).
template <class Changes>
DirNode build_trie(const Changes& changes) {
  DirNode root;
  // Named references, not a structured binding: clang 14 cannot capture a
  // binding in the lambda below.
  for (const auto& change : changes) {
    const std::string& path = change.first;
    const auto& content = change.second;
    bool is_dir = ends_with(path, "/");
    if (is_dir && content)
      fail(ErrorKind::invalid, "directory path '" + path + "' can only be deleted in a git change set");
    const std::string_view rest = is_dir ? std::string_view(path).substr(0, path.size() - 1) : std::string_view(path);
    DirNode* node = &root;
    for_each_component(rest, [&](std::string_view part, bool last) {
      validate_component(part, path);
      if (last && !is_dir) node->files.insert_or_assign(node->files.end(), part, FileChange{&content, std::nullopt});
      else node = &subdir(*node, part);
    });
    if (is_dir) {
      node->replace = true;
    }
  }
  return root;
}

// SHA-1 for emco's own digests of changes (core/util/sha1: Nettle's, with
// no allocation per digest); object ids keep libgit2's collision-detecting
// SHA-1, three times the cost.
git_oid sha1_of(std::string_view data) {
  const Sha1Digest digest = sha1(data);
  git_oid out;
  static_assert(sizeof out.id == std::tuple_size_v<Sha1Digest>);
  std::memcpy(out.id, digest.data(), digest.size());
  return out;
}

struct OidHash {
  size_t operator()(const git_oid& oid) const {
    size_t h;
    std::memcpy(&h, oid.id, sizeof h);
    return h;
  }
};
struct OidEqual {
  bool operator()(const git_oid& a, const git_oid& b) const { return git_oid_equal(&a, &b); }
};

struct BuildStats {
  size_t written = 0;
  size_t deleted = 0;
  // Operations repeat the same manifest on many clusters: hash each distinct
  // shared content once (it is stored only where a file changes). The entry
  // keeps its text alive: a group's changes are dropped once built.
  struct Blob {
    git_oid id;
    FileText text;
  };
  std::unordered_map<std::string_view, Blob> blobs;
  // Subtrees already built, by (base tree, change digest) hashed together:
  // the clusters of a fleet change their app directories the same way.
  struct Built {
    std::optional<git_oid> tree;
    size_t written = 0, deleted = 0;
  };
  std::unordered_map<git_oid, Built, OidHash, OidEqual> built;
};

const git_oid& blob_id(const FileChange& file, BuildStats& stats);

// A digest of everything `node` changes (file names with their new blob
// ids or deletion, directories with their digests): equal digests change a
// base tree the same way.
const git_oid& change_digest(const DirNode& node, BuildStats& stats) {
  if (node.digest) return *node.digest;
  std::string text = node.replace ? "R" : "M";
  if (node.built) {
    text = "P";
    if (*node.built) text.append(reinterpret_cast<const char*>(node.built->value().id), GIT_OID_RAWSZ);
    node.digest = sha1_of(text);
    return *node.digest;
  }
  for (const auto& [name, file] : node.files) {
    text += 'F';
    text += name;
    text.push_back('\0');
    if (file.content->has_value()) text.append(reinterpret_cast<const char*>(blob_id(file, stats).id), GIT_OID_RAWSZ);
    else text += "-";
  }
  for (const auto& [name, child] : node.dirs) {
    text += 'D';
    text += name;
    text.push_back('\0');
    text.append(reinterpret_cast<const char*>(change_digest(child, stats).id), GIT_OID_RAWSZ);
  }
  node.digest = sha1_of(text);
  return *node.digest;
}

int count_blob(const char*, const git_tree_entry* entry, void* payload) {
  if (git_tree_entry_type(entry) == GIT_OBJECT_BLOB) ++*static_cast<size_t*>(payload);
  return 0;
}

size_t count_files(const git_tree* tree) {
  size_t count = 0;
  check(git_tree_walk(tree, GIT_TREEWALK_PRE, count_blob, &count), "cannot walk tree");
  return count;
}

// New objects go straight into the in-memory store (where reads find them)
// and into the list the pack is written from. Writing through the object
// database would first look for each object in the cache's packs, and every
// miss makes libgit2 rescan the pack directory: thousands of new trees per
// operation cost more than everything else together.
class ObjectWriter {
public:
  explicit ObjectWriter(git_odb_backend* mempack) : m_mempack(mempack) {}
  static git_oid hash(const void* data, size_t size, git_object_t type) {
    git_oid oid;
    check(git_odb_hash(&oid, data, size, type), "cannot hash object");
    return oid;
  }
  // `name` is the object's file or directory name ("" for commits and the
  // root tree): the pack builder looks for deltas among objects of one name.
  git_oid write(const void* data, size_t size, git_object_t type, std::string_view name) {
    return write(hash(data, size, type), data, size, type, name);
  }
  // `oid` must be hash(data, size, type).
  git_oid write(const git_oid& oid, const void* data, size_t size, git_object_t type, std::string_view name) {
    if (!m_seen.insert(oid).second) return oid;  // identical subtrees of many clusters
    check(m_mempack->write(m_mempack, &oid, data, size, type), "cannot store object");
    m_objects.push_back({oid, std::string(name)});
    return oid;
  }
  struct Object {
    git_oid oid;
    std::string name;
  };
  // In the order written.
  const std::vector<Object>& objects() const { return m_objects; }

private:
  git_odb_backend* m_mempack;
  std::unordered_set<git_oid, OidHash, OidEqual> m_seen;
  std::vector<Object> m_objects;
};

struct TreeEntry {
  std::string name;
  git_filemode_t mode;
  git_oid oid;
};

// Git's entry order: by name, a directory compared as if it ended in '/'.
bool git_entry_less(const TreeEntry& a, const TreeEntry& b) {
  size_t n = std::min(a.name.size(), b.name.size());
  int c = std::memcmp(a.name.data(), b.name.data(), n);
  if (c != 0) return c < 0;
  auto next = [&](const TreeEntry& e) -> unsigned char {
    if (e.name.size() > n) return static_cast<unsigned char>(e.name[n]);
    return e.mode == GIT_FILEMODE_TREE ? '/' : '\0';
  };
  return next(a) < next(b);
}

// A tree object's bytes: "<octal mode> <name>\0<20-byte id>" per entry.
std::string tree_bytes(std::vector<TreeEntry>& entries) {
  std::sort(entries.begin(), entries.end(), git_entry_less);
  std::string out;
  out.reserve(entries.size() * 64);
  char mode[16];
  for (const auto& e : entries) {
    int n = std::snprintf(mode, sizeof mode, "%o ", static_cast<unsigned>(e.mode));
    out.append(mode, static_cast<size_t>(n));
    out.append(e.name);
    out.push_back('\0');
    out.append(reinterpret_cast<const char*>(e.oid.id), GIT_OID_RAWSZ);
  }
  return out;
}

// `file` must have content.
const git_oid& blob_id(const FileChange& file, BuildStats& stats) {
  if (file.blob) return *file.blob;
  const FileText& text = **file.content;
  const std::string& data = text.str();
  if (!text.shared()) return file.blob.emplace(ObjectWriter::hash(data.data(), data.size(), GIT_OBJECT_BLOB));
  auto known = stats.blobs.find(std::string_view(data));
  if (known == stats.blobs.end())
    known = stats.blobs.emplace(std::string_view(data), BuildStats::Blob{ObjectWriter::hash(data.data(), data.size(), GIT_OBJECT_BLOB), text}).first;
  return file.blob.emplace(known->second.id);
}

std::optional<git_oid> build_tree_once(git_repository* repo, ObjectWriter& objects, const git_tree* base,
                                       const DirNode& node, std::string_view name, BuildStats& stats);

// The tree for `node` (the directory `name`, "" for the root) applied to the
// tree `base` (null: none); nullopt = empty.
std::optional<git_oid> build_tree(git_repository* repo, ObjectWriter& objects, const git_oid* base,
                                  const DirNode& node, std::string_view name, BuildStats& stats) {
  std::string key(GIT_OID_RAWSZ * 2, '\0');
  if (base) std::memcpy(key.data(), base->id, GIT_OID_RAWSZ);
  std::memcpy(key.data() + GIT_OID_RAWSZ, change_digest(node, stats).id, GIT_OID_RAWSZ);
  const git_oid memo = sha1_of(key);
  if (auto it = stats.built.find(memo); it != stats.built.end()) {
    stats.written += it->second.written;
    stats.deleted += it->second.deleted;
    return it->second.tree;
  }
  TreePtr base_tree;
  if (base) {
    git_tree* t = nullptr;
    check(git_tree_lookup(&t, repo, base), "cannot read tree " + oid_hex(*base));
    base_tree.reset(t);
  }
  const size_t written = stats.written, deleted = stats.deleted;
  std::optional<git_oid> tree = build_tree_once(repo, objects, base_tree.get(), node, name, stats);
  stats.built.emplace(memo, BuildStats::Built{tree, stats.written - written, stats.deleted - deleted});
  return tree;
}

// Refuses a name that `node` writes as a file and also changes below as a
// directory: the tree would hold two entries of that name (git fsck calls it
// broken). Both lists are in name order.
void check_file_dir_names(const DirNode& node) {
  auto file = node.files.begin();
  auto dir = node.dirs.begin();
  while (file != node.files.end() && dir != node.dirs.end()) {
    if (file->first < dir->first) {
      ++file;
    } else if (dir->first < file->first) {
      ++dir;
    } else {
      const DirNode& d = dir->second;
      const bool dir_written = d.built ? d.built->has_value() : !d.files.empty() || !d.dirs.empty();
      if (file->second.content->has_value() && dir_written)
        fail(ErrorKind::invalid, "'" + std::string(file->first) + "' is both a file and a directory in a git change set",
             "write the file or the directory's files, not both");
      ++file;
      ++dir;
    }
  }
}

std::optional<git_oid> build_tree_once(git_repository* repo, ObjectWriter& objects, const git_tree* base,
                                       const DirNode& node, std::string_view dir_name, BuildStats& stats) {
  check_file_dir_names(node);
  std::map<std::string, TreeEntry, std::less<>> entries;
  if (base) {
    if (node.replace) {
      stats.deleted += count_files(base);
    } else {
      for (size_t i = 0, n = git_tree_entrycount(base); i < n; ++i) {
        const git_tree_entry* e = git_tree_entry_byindex(base, i);
        std::string name = git_tree_entry_name(e);
        entries.emplace(name, TreeEntry{name, git_tree_entry_filemode(e), *git_tree_entry_id(e)});
      }
    }
  }
  bool changed = base == nullptr || node.replace;
  for (const auto& [name, file] : node.files) {
    auto existing = entries.find(name);
    if (!file.content->has_value()) {
      if (existing != entries.end()) {
        entries.erase(existing);
        ++stats.deleted;
        changed = true;
      }
      continue;
    }
    const std::string& data = (*file.content)->str();
    const git_oid blob = blob_id(file, stats);
    if (existing != entries.end() && existing->second.mode == GIT_FILEMODE_BLOB &&
        git_oid_equal(&existing->second.oid, &blob))
      continue;
    objects.write(blob, data.data(), data.size(), GIT_OBJECT_BLOB, name);
    entries.insert_or_assign(std::string(name), TreeEntry{std::string(name), GIT_FILEMODE_BLOB, blob});
    ++stats.written;
    changed = true;
  }
  for (const auto& [name, child] : node.dirs) {
    auto existing = entries.find(name);
    const bool was_dir = existing != entries.end() && existing->second.mode == GIT_FILEMODE_TREE;
    std::optional<git_oid> result =
        child.built ? *child.built
                    : build_tree(repo, objects, was_dir ? &existing->second.oid : nullptr, child, name, stats);
    if (result) {
      if (existing != entries.end() && existing->second.mode == GIT_FILEMODE_TREE &&
          git_oid_equal(&existing->second.oid, &*result))
        continue;
      entries.insert_or_assign(std::string(name), TreeEntry{std::string(name), GIT_FILEMODE_TREE, *result});
      changed = true;
    } else if (was_dir) {  // a file of that name is not the directory deleted
      entries.erase(existing);
      changed = true;
    }
  }
  if (entries.empty()) return std::nullopt;
  if (!changed) return *git_tree_id(base);
  std::vector<TreeEntry> list;
  list.reserve(entries.size());
  for (auto& [name, e] : entries) list.push_back(std::move(e));
  std::string bytes = tree_bytes(list);
  return objects.write(bytes.data(), bytes.size(), GIT_OBJECT_TREE, dir_name);
}

// ---- change groups ---------------------------------------------------------------

void validate_group_dir(const std::string& dir) {
  if (dir.empty()) fail(ErrorKind::invalid, "a change group names no directory");
  for_each_component(dir, [&](std::string_view part, bool) { validate_component(part, dir); });
}

// The trees of the branch head that hold group directories, each read once
// per attempt: a fleet's "clusters" tree has an entry per cluster, and
// libgit2 keeps no tree that big in its object cache.
class BaseTrees {
public:
  BaseTrees(git_repository* repo, const git_tree* root) : m_repo(repo), m_root(root) {}

  // The tree at `dir` in the head, or nullopt (no head, missing, or a file).
  std::optional<git_oid> at(std::string_view dir) {
    const std::string name(last_component(dir));
    const std::string_view parent_dir = name.size() == dir.size() ? std::string_view() : dir.substr(0, dir.size() - name.size() - 1);
    const git_tree* parent = tree_at(std::string(parent_dir));
    if (!parent) return std::nullopt;
    const git_tree_entry* entry = git_tree_entry_byname(parent, name.c_str());
    if (!entry || git_tree_entry_type(entry) != GIT_OBJECT_TREE) return std::nullopt;
    return *git_tree_entry_id(entry);
  }

private:
  const git_tree* tree_at(const std::string& path) {
    if (path.empty() || !m_root) return m_root;
    auto known = m_trees.find(path);
    if (known != m_trees.end()) return known->second.get();
    TreePtr tree;
    git_tree_entry* raw = nullptr;
    const int rc = git_tree_entry_bypath(&raw, m_root, path.c_str());
    if (rc != GIT_ENOTFOUND) check(rc, "cannot read directory '" + path + "' of the branch head");
    std::unique_ptr<git_tree_entry, void (*)(git_tree_entry*)> entry(raw, git_tree_entry_free);
    if (entry && git_tree_entry_type(entry.get()) == GIT_OBJECT_TREE) {
      git_tree* t = nullptr;
      check(git_tree_lookup(&t, m_repo, git_tree_entry_id(entry.get())), "cannot read directory '" + path + "'");
      tree.reset(t);
    }
    return m_trees.emplace(path, std::move(tree)).first->second.get();
  }

  git_repository* m_repo;
  const git_tree* m_root;
  std::unordered_map<std::string, TreePtr> m_trees;
};

// Puts the tree built for a group at `dir` (a string that outlives `root`).
void add_built(DirNode& root, std::string_view dir, std::optional<git_oid> tree) {
  DirNode* node = &root;
  bool inside_group = false;
  for_each_component(dir, [&](std::string_view part, bool) {
    inside_group = inside_group || node->built.has_value();
    node = &subdir(*node, part);
  });
  if (inside_group || node->built || node->replace || !node->files.empty() || !node->dirs.empty())
    fail(ErrorKind::invalid, "change group '" + std::string(dir) + "' overlaps another group or a change of its commit",
         "give each directory's changes in one group, and no path below it elsewhere");
  node->built = tree;
}

// ---- push ----------------------------------------------------------------------

enum class PushOutcome { pushed, raced };

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

// A version 2 pack of the new `objects` (held in `repo`'s in-memory object
// store), built by libgit2's pack builder: GitOps repositories hold the same
// manifests for many clusters, differing in a few lines, so deltas between
// objects of one file name make the pack (and the repository it lands in)
// several times smaller, as git's own pack-objects does for `git push`.
std::string write_pack(git_repository* repo, const std::vector<ObjectWriter::Object>& objects) {
  git_packbuilder* raw = nullptr;
  check(git_packbuilder_new(&raw, repo), "cannot start a pack");
  std::unique_ptr<git_packbuilder, void (*)(git_packbuilder*)> pack(raw, git_packbuilder_free);
  // One thread: starting the builder's threads cost more than they saved
  // (`emco dig update`, 1,000 clusters: median 0.31 s with one per core,
  // 0.24 s with one, as with emco's earlier delta-less writer).
  git_packbuilder_set_threads(pack.get(), 1);
  for (const auto& o : objects)
    check(git_packbuilder_insert(pack.get(), &o.oid, o.name.empty() ? nullptr : o.name.c_str()),
          "cannot add an object to the pack");
  git_buf out = GIT_BUF_INIT;
  check(git_packbuilder_write_buf(&out, pack.get()), "cannot write the pack");
  std::string bytes(out.ptr, out.size);
  git_buf_dispose(&out);
  return bytes;
}

fs::path pack_dir(git_repository* repo) {
  git_buf path = GIT_BUF_INIT;
  check(git_repository_item_path(&path, repo, GIT_REPOSITORY_ITEM_OBJECTS), "cannot find the object directory");
  fs::path out = fs::path(path.ptr) / "pack";
  git_buf_dispose(&path);
  return out;
}

// Indexes `pack` into the object database of `repo`; returns the pack's
// name ("pack-<name>.pack" and ".idx" in pack_dir(repo)), or nullopt with
// libgit2's error set.
std::optional<std::string> store_pack(git_repository* repo, std::string_view pack) {
  git_indexer_options opts;
  git_indexer_options_init(&opts, GIT_INDEXER_OPTIONS_VERSION);
  git_indexer* raw = nullptr;
  const fs::path dir = pack_dir(repo);
  if (git_indexer_new(&raw, dir.c_str(), 0, nullptr, &opts) < 0) return std::nullopt;
  std::unique_ptr<git_indexer, void (*)(git_indexer*)> indexer(raw, git_indexer_free);
  git_indexer_progress stats{};
  if (git_indexer_append(indexer.get(), pack.data(), pack.size(), &stats) < 0 ||
      git_indexer_commit(indexer.get(), &stats) < 0)
    return std::nullopt;
  return std::string(git_indexer_name(indexer.get()));
}

// Puts a pack already indexed elsewhere into the cache: the .pack, then the
// .idx that makes readers see it, each written aside and renamed.
void copy_pack(const fs::path& from_dir, const std::string& name, git_repository* cache) {
  const fs::path to_dir = pack_dir(cache);
  make_private_dir(to_dir);
  for (const char* ext : {".pack", ".idx"}) {
    const std::string file = "pack-" + name + ext;
    const fs::path tmp = to_dir / ("tmp_" + file);
    std::error_code ec;
    fs::copy_file(from_dir / file, tmp, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace, ec);
    if (!ec) fs::rename(tmp, to_dir / file, ec);
    if (ec) fail(ErrorKind::workspace, "cannot store new objects in the git cache '" + to_dir.string() + "': " + ec.message());
  }
}

// ---- interrupted local pushes ---------------------------------------------------
//
// A file:// push moves the remote's branch in this process: libgit2 creates
// refs/heads/<branch>.lock in the remote (O_EXCL), writes the new commit id
// into it and renames it over the ref. An emco killed in between leaves the
// lock behind, and every later push (emco's, git's) is refused until someone
// removes it. Before moving the ref, emco records "<branch>\n<commit>\n" in
// the cache directory (the push journal); the next delivery through the same
// cache (under its CacheLock, so no emco process of this workspace is
// pushing through it) removes a lock that is provably the killed push's: its
// content is the journal's commit id, or it is still empty after a pause
// (created but not yet written; a live git writes the id at once).

fs::path push_journal(const fs::path& cache_dir) { return cache_dir / "emco-push"; }

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void recover_interrupted_local_push(const fs::path& cache_dir, const fs::path& remote) {
  const fs::path journal = push_journal(cache_dir);
  std::error_code ec;
  if (!fs::exists(journal, ec)) return;
  std::istringstream in(read_text(journal));
  std::string branch, commit;
  std::getline(in, branch);
  std::getline(in, commit);
  const fs::path lock = remote / "refs" / "heads" / (branch + ".lock");
  if (!branch.empty() && fs::is_regular_file(lock, ec)) {
    std::string held = trim(read_text(lock));
    if (held.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      held = fs::exists(lock, ec) ? trim(read_text(lock)) : "gone";
    }
    if (held.empty() || held == commit) fs::remove(lock, ec);
  }
  fs::remove(journal, ec);
}

// file:// remotes: libgit2's local transport moves the ref with force and runs
// no hooks, which loses commits when two writers race. Store the pack in the
// remote and move its ref with a compare-and-swap instead.
// The pack is then copied into the cache.
PushOutcome push_local(const GitRemoteSpec& spec, const RemoteUrl& url, std::string_view pack, const git_oid& commit,
                       const std::optional<git_oid>& expected, git_repository* cache, const fs::path& cache_dir) {
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, url.path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) < 0)
    fail(ErrorKind::unreachable, "cannot open git repository '" + redact_url(spec.url) + "': " + last_git_message());
  RepoPtr target(raw);
  if (!git_repository_is_bare(target.get()))
    fail(ErrorKind::invalid, "git repository '" + spec.url + "' is not bare", "push to a bare repository");
  std::optional<std::string> pack_name = store_pack(target.get(), pack);
  if (!pack_name) fail_git("cannot write objects to '" + spec.url + "'");

  std::string name = "refs/heads/" + spec.branch;
  {
    std::ofstream journal(push_journal(cache_dir), std::ios::binary | std::ios::trunc);
    journal << spec.branch << "\n" << oid_hex(commit) << "\n";
    if (!journal.flush())
      fail(ErrorKind::workspace, "cannot write '" + push_journal(cache_dir).string() + "': " + std::strerror(errno));
  }
  git_reference* ref = nullptr;
  int rc = expected ? git_reference_create_matching(&ref, target.get(), name.c_str(), &commit, 1, &*expected,
                                                    "emco: push")
                    : git_reference_create(&ref, target.get(), name.c_str(), &commit, 0, "emco: push");
  git_reference_free(ref);
  std::error_code ec;
  fs::remove(push_journal(cache_dir), ec);
  if (rc == GIT_EMODIFIED || rc == GIT_EEXISTS || rc == GIT_ELOCKED) return PushOutcome::raced;
  if (rc < 0)
    fail_git("cannot update branch '" + spec.branch + "' of '" + spec.url + "'");
  copy_pack(pack_dir(target.get()), *pack_name, cache);
  return PushOutcome::pushed;
}

void backoff(int attempt) {
  // A small engine (as a thread_local, mt19937's 5 KB were cleared at every process start and
  // thread creation); a jitter needs no better.
  static thread_local std::minstd_rand rng{std::random_device{}()};
  int base = std::min(50 << std::min(attempt, 5), 1000);
  std::uniform_int_distribution<int> jitter(0, base);
  std::this_thread::sleep_for(std::chrono::milliseconds(base / 2 + jitter(rng)));
}

// The cache of a remote opened for a read or a delivery: the cache root
// made, the lock other processes respect held for as long as this lives,
// stale git locks and an interrupted local push cleaned up.
struct LockedCache {
  LockedCache(const fs::path& root, const fs::path& dir, const GitRemoteSpec& spec, const RemoteUrl& url)
      : lock(lock_path(root, spec)) {
    remove_stale_git_locks(dir);
    if (url.scheme == "file") recover_interrupted_local_push(dir, url.path);
    repo = open_cache(dir);
  }
  CacheLock lock;
  RepoPtr repo;

private:
  static fs::path lock_path(const fs::path& root, const GitRemoteSpec& spec) {
    make_private_dir(root);
    return root / (cache_key(spec.url) + ".lock");
  }
};

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

std::map<std::string, std::optional<std::string>> GitDelivery::read(const GitRemoteSpec& spec,
                                                                     const std::vector<std::string>& paths) {
  validate(spec);
  const RemoteUrl url = parse_remote_url(spec.url);
  const fs::path dir = cache_path(spec);
  LockedCache cache(m_cache_root, dir, spec, url);
  RepoPtr& repo = cache.repo;
  RemoteHeads heads = fetch_heads(repo.get(), spec, url, false);
  std::map<std::string, std::optional<std::string>> out;
  for (const auto& p : paths) out[p] = std::nullopt;
  if (!heads.branch) return out;
  git_commit* c = nullptr;
  check(git_commit_lookup(&c, repo.get(), &*heads.branch), "cannot read commit " + oid_hex(*heads.branch));
  CommitPtr commit(c);
  git_tree* t = nullptr;
  check(git_commit_tree(&t, commit.get()), "cannot read tree of " + oid_hex(*heads.branch));
  TreePtr tree(t);
  for (auto& [path, content] : out) {
    git_tree_entry* e = nullptr;
    int rc = git_tree_entry_bypath(&e, tree.get(), path.c_str());
    if (rc == GIT_ENOTFOUND) continue;
    check(rc, "cannot look up '" + path + "'");
    std::unique_ptr<git_tree_entry, Deleter<git_tree_entry, git_tree_entry_free>> entry(e);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) continue;
    git_blob* b = nullptr;
    check(git_blob_lookup(&b, repo.get(), git_tree_entry_id(entry.get())), "cannot read '" + path + "'");
    std::unique_ptr<git_blob, Deleter<git_blob, git_blob_free>> blob(b);
    content.emplace(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                    static_cast<size_t>(git_blob_rawsize(blob.get())));
  }
  return out;
}

DeliveryResult GitDelivery::deliver(const GitRemoteSpec& spec, const CommitRequest& request) {
  validate(spec);
  const RemoteUrl url = parse_remote_url(spec.url);
  const DirNode trie = build_trie(request.changes);
  if (trim(request.message).empty()) fail(ErrorKind::invalid, "commit message is empty");

  const fs::path dir = cache_path(spec);
  LockedCache cache(m_cache_root, dir, spec, url);
  RepoPtr& repo = cache.repo;

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
    ObjectWriter objects(mempack);
    // Each group's tree is built as it comes and stands in the trie for its
    // changes; names of group directories live in group_dirs. The trie of
    // `changes` is made afresh for each attempt: the built trees (and the
    // digests cached in the nodes) depend on the attempt's branch head.
    const DirNode* root = &trie;
    DirNode grouped;
    std::deque<std::string> group_dirs;
    if (request.groups) {
      grouped = build_trie(request.changes);
      BaseTrees bases(repo.get(), base_tree.get());
      request.groups([&](ChangeGroup&& group) {
        const std::string& at = group_dirs.emplace_back(std::move(group.dir));
        validate_group_dir(at);
        const DirNode changes = build_trie(group.changes);
        const std::optional<git_oid> base = bases.at(at);
        add_built(grouped, at, build_tree(repo.get(), objects, base ? &*base : nullptr, changes, last_component(at), stats));
      });
      root = &grouped;
    }
    std::optional<git_oid> tree =
        build_tree(repo.get(), objects, base_tree ? git_tree_id(base_tree.get()) : nullptr, *root, "", stats);
    git_oid tree_id = tree ? *tree : objects.write("", 0, GIT_OBJECT_TREE, "");
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
    git_buf commit_text = GIT_BUF_INIT;
    check(git_commit_create_buffer(&commit_text, repo.get(), sig.get(), sig.get(), nullptr, request.message.c_str(),
                                   new_tree.get(), parent ? 1 : 0, parents),
          "cannot create commit");
    const git_oid commit_id = objects.write(commit_text.ptr, commit_text.size, GIT_OBJECT_COMMIT, "");
    git_buf_dispose(&commit_text);

    if (m_options.before_push) m_options.before_push(attempt);
    // One pack of the new objects serves a file:// remote and the cache.
    const std::string pack = write_pack(repo.get(), objects.objects());
    PushOutcome outcome = url.scheme == "file" ? push_local(spec, url, pack, commit_id, heads.branch, repo.get(), dir)
                                               : push_network(repo.get(), spec, url, commit_id);
    if (outcome == PushOutcome::pushed) {
      if (url.scheme != "file" && !store_pack(repo.get(), pack))
        fail_git("cannot store new objects in the git cache");
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
