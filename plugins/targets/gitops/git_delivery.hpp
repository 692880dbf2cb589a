#pragma once
// Delivery to a git remote over libgit2: one commit per change set, pushed.
//
// GitDelivery keeps a bare cache of every remote under the directory it is
// given (the workspace's .emco/git/), one subdirectory per remote URL
// (<cache_key(url)>/). deliver() fetches the branch, applies a change set to
// the branch head entirely in memory (tree builders, no working tree), makes
// at most one commit and pushes it:
//   * nothing changed                   -> no commit, result.changed = false
//   * branch missing on the remote      -> created (from an empty tree, or
//                                          from the remote's default branch)
//   * push rejected as non-fast-forward -> fetch, re-apply on the new head,
//                                          retry (bounded by max_attempts)
//   * remote unreachable, auth refused,
//     host key / TLS certificate refused -> Error(unreachable)
//   * the disk refused (full, I/O error, read-only) under the cache or a
//     file:// remote                     -> Error(workspace): worth retrying
//                                          once the disk is fixed
//   * rejected by a server hook          -> Error(failed) with the server's words
//   * history unrelated to what this cache fetched or pushed before
//                                        -> Error(conflict)
// A failed deliver() leaves the cache's record of the remote branch
// (cached_head) as it was fetched; nothing it built is kept.
//
// Transports: file:// (and absolute paths; pushed with a compare-and-swap on
// the ref, no server hooks run), git://, http(s):// (smart HTTP), ssh://.
// Secrets never appear in errors, in the cache's config or in commits.
// Thread-safe across instances; calls on one remote are serialized with a
// lock file, also across processes.

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/targets/gitops/git_remote.hpp"

namespace emco::gitops {

// A file's new content in a change set. Immutable and shared: the clusters of a fleet mostly
// get the same manifests, and one text per path made a 100,000-cluster commit hold the same
// bytes hundreds of thousands of times.
class FileText {
public:
  FileText(std::string text) : m_text(std::make_shared<const std::string>(std::move(text))) {}  // NOLINT: implicit
  FileText(const char* text) : FileText(std::string(text)) {}                                   // NOLINT: implicit
  const std::string& str() const { return *m_text; }
  // Whether another FileText (a copy) holds this text too: a text many
  // changes share is worth remembering by its content, one used once is not.
  bool shared() const { return m_text.use_count() > 1; }
  friend bool operator==(const FileText& a, std::string_view b) { return a.str() == b; }

private:
  std::shared_ptr<const std::string> m_text;
};

// path -> new content, or std::nullopt to delete. A path ending in '/' with
// std::nullopt deletes that whole directory (writes below it still apply).
// Paths are relative, '/'-separated, without '.', '..' or '.git' components.
using ChangeSet = std::map<std::string, std::optional<FileText>>;

struct GitAuthor {
  std::string name = "emco";
  std::string email = "emco@localhost";
};

// Changes below one directory `dir` ("a/b": relative, '/'-separated, no
// trailing '/'), with paths relative to it (as in a ChangeSet), in any
// order; a path given twice keeps its last content. A list, not a map: a
// fleet's commit makes a group per cluster, and a map's nodes were a tenth
// of building it.
struct ChangeGroup {
  std::string dir;
  std::vector<std::pair<std::string, std::optional<FileText>>> changes;
};

// Called with each group of a request in turn (see CommitRequest::groups).
using ChangeGroupSink = std::function<void(ChangeGroup&&)>;

struct CommitRequest {
  ChangeSet changes;
  // More changes, one directory at a time, for commits too big to hold at
  // once (a fleet's: 3 million paths at 100,000 clusters): called once for
  // each attempt to build the commit, it hands every group to the sink;
  // each group's tree is built and its changes dropped before the next.
  // Groups name different directories, none inside another or holding a
  // path of `changes`; deliver() refuses overlaps as Error(invalid).
  // Empty = no groups.
  std::function<void(const ChangeGroupSink&)> groups;
  std::string message;
  GitAuthor author;
};

enum class NewBranchBase {
  empty,           // first commit of a new branch has no parent
  remote_default,  // new branch starts at the remote's default branch (HEAD)
};

struct DeliveryOptions {
  int max_attempts = 5;                       // pushes tried before giving up on races
  NewBranchBase new_branch_base = NewBranchBase::empty;
  // Called after each commit is built and before it is pushed (attempt
  // number from 1). Lets tests interleave a competing push; empty = none.
  std::function<void(int attempt)> before_push;
};

struct DeliveryResult {
  bool changed = false;    // a commit was made and pushed
  std::string commit_id;   // the pushed commit, or the unchanged head ("" if no branch)
  int attempts = 0;        // push attempts (0 when unchanged)
  size_t files_written = 0;  // files whose content changed or that were added
  size_t files_deleted = 0;  // files removed

  // The commit id, or "unchanged".
  std::string summary() const { return changed ? commit_id : "unchanged"; }
};

class GitDelivery {
public:
  // `cache_root` is created (mode 0700) when missing.
  explicit GitDelivery(std::filesystem::path cache_root, DeliveryOptions options = {});

  // Applies `request` on top of `remote`'s branch and pushes one commit
  // (contract in the file comment). Throws emco::Error.
  DeliveryResult deliver(const GitRemoteSpec& remote, const CommitRequest& request);

  // The content of `paths` in the branch head as the remote has it now
  // (fetched into the cache; the record of what emco pushed, cached_head,
  // is left alone): nullopt for a path that is not a file there, every
  // path nullopt when the branch does not exist. Throws emco::Error as
  // deliver() does for the fetch.
  std::map<std::string, std::optional<std::string>> read(const GitRemoteSpec& remote,
                                                         const std::vector<std::string>& paths);

  // The branch commit this cache last fetched or pushed, or "" (no network).
  std::string cached_head(const GitRemoteSpec& remote) const;

  // Where the bare cache of `remote` lives.
  std::filesystem::path cache_path(const GitRemoteSpec& remote) const;

private:
  std::filesystem::path m_cache_root;
  DeliveryOptions m_options;
};

}  // namespace emco::gitops
