#include "plugins/targets/gitops/gitops_target.hpp"
#include "plugins/targets/gitops/git_stream.hpp"

#include <nlohmann/json.hpp>

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/string_hash.hpp"
#include "core/util/strings.hpp"
#include "plugins/targets/kube/kube_target.hpp"

namespace emco::gitops {

using nlohmann::json;

namespace {

std::string value_of(const std::map<std::string, std::string>& kv, const std::string& key) {
  auto it = kv.find(key);
  return it == kv.end() ? std::string() : trim(it->second);
}

std::string read_text_file(const std::string& path, const std::string& what, const std::string& object) {
  try {
    return read_input_file(path, {.what = what, .max_bytes = std::size_t{1} << 20});
  } catch (const Error& e) {
    throw Error(e.kind(), e.message() + " (named by cluster sync object '" + object + "')",
                "the file must exist and be readable when emco delivers");
  }
}

}  // namespace

GitOpsCluster registered_cluster(const std::string& provider, const std::string& cluster, std::string_view type,
                                 const std::string& reference_name, const std::map<std::string, std::string>& reference_kv,
                                 const std::string& resource_name, const std::map<std::string, std::string>& resource_kv) {
  GitOpsCluster c;
  c.provider = provider;
  c.cluster = cluster;
  c.type = parse_gitops_type(type);
  const std::string where = "cluster sync object '" + reference_name + "' of cluster '" + provider + "/" + cluster + "'";
  GitRemoteSpec& remote = c.remote;
  remote.url = value_of(reference_kv, "url");
  if (remote.url.empty())
    fail(ErrorKind::invalid, "missing information for git: " + where + " has no 'url'",
         "add {url: <repository url>} to its kv (and branch, userName, gitToken as needed)");
  std::string branch = value_of(reference_kv, "branch");
  if (!branch.empty()) remote.branch = branch;
  RemoteUrl url = parse_remote_url(remote.url);
  std::string user = value_of(reference_kv, "userName");
  std::string token = value_of(reference_kv, "gitToken");
  std::string password = value_of(reference_kv, "password");
  // Key material inline (kept in the workspace) or as the path of a file
  // read when the cluster is used; not both.
  auto material = [&](const char* inline_key, const char* file_key, const char* what) -> std::string {
    // As given: a PEM or known_hosts text keeps its last newline.
    auto raw = reference_kv.find(inline_key);
    std::string value = raw == reference_kv.end() || trim(raw->second).empty() ? std::string() : raw->second;
    std::string file = value_of(reference_kv, file_key);
    if (!value.empty() && !file.empty())
      fail(ErrorKind::invalid, where + " has both '" + inline_key + "' and '" + file_key + "'",
           std::string("keep one: the ") + what + " inline, or the path of a file holding it");
    return file.empty() ? value : read_text_file(file, what, reference_name);
  };
  if (url.scheme == "https" || url.scheme == "http") {
    if (!password.empty()) {
      if (user.empty()) fail(ErrorKind::invalid, where + " has a 'password' but no 'userName'");
      remote.credentials = UserPassword{user, password};
    } else if (!token.empty()) {
      HttpsToken t;
      t.token = token;
      if (!user.empty()) t.user = user;
      remote.credentials = t;
    }
    remote.ca_pem = material("caCert", "caFile", "CA certificate");
  } else if (url.scheme == "ssh") {
    std::string private_key = material("sshKey", "sshKeyFile", "ssh key");
    if (!private_key.empty()) {
      SshKey key;
      key.private_key = std::move(private_key);
      key.passphrase = value_of(reference_kv, "sshPassphrase");
      key.user = user.empty() ? url.user : user;
      remote.credentials = key;
    }
    remote.known_hosts = material("knownHosts", "knownHostsFile", "known_hosts");
  }
  try {
    validate(remote);
  } catch (const Error& e) {
    throw e.with_context(where);
  }
  if (c.type == GitOpsType::fluxcd) {
    try {
      c.flux = flux_timing(resource_kv);
    } catch (const Error& e) {
      throw e.with_context("cluster sync object '" + resource_name + "'");
    }
  }
  return c;
}

// One repository's staged changes for one engine run.
class GitOpsTargets::RepositoryBatch : public sync::Batch {
public:
  RepositoryBatch(std::shared_ptr<GitDelivery> delivery, const DescribeOperation& describe)
      : m_delivery(std::move(delivery)), m_describe(describe) {}

  void add_cluster(const GitOpsCluster& cluster) {
    std::lock_guard lock(m_mutex);
    if (m_clusters.count(cluster.id())) return;
    m_order.push_back(cluster.id());
    m_clusters[cluster.id()].cluster = cluster;
  }

  void stage(const sync::Staged& step) override {
    auto plus = step.resource.rfind('+');
    if (plus == std::string::npos || plus == 0 || plus + 1 == step.resource.size())
      throw sync::TargetError(false, false, "resource key '" + std::string(step.resource) + "' is not <name>+<Kind>");
    // One lock per step (other threads may add clusters meanwhile); the
    // object is parsed outside it, the first time it is seen.
    std::unique_lock lock(m_mutex);
    const std::string_view resource = name_of(step.resource, m_last_resource);
    ResourceChange change{name_of(step.app, m_last_app), resource.substr(0, plus), resource.substr(plus + 1), nullptr};
    if (!step.remove) change.object = object_of(step.manifest, lock);
    // A job's steps come one after another: its cluster is looked up once.
    if (m_last_cluster == nullptr || *m_last_cluster_id != step.cluster) {
      auto it = m_clusters.find(step.cluster);
      if (it == m_clusters.end())
        throw sync::TargetError(false, false,
                                "cluster '" + std::string(step.cluster) + "' is not a GitOps cluster of this repository");
      m_last_cluster_id = &it->first;
      m_last_cluster = &it->second;
    }
    m_last_cluster->resources.push_back(std::move(change));
  }

  std::string commit(std::chrono::steady_clock::time_point deadline) override {
    std::lock_guard lock(m_mutex);
    NetworkDeadline network(deadline);
    try {
      GitOpsOperation op = m_describe();
      op.clusters.clear();
      // The operation borrows the staged work (moved in, and back when the
      // delivery ends, also by an exception) instead of copying it: the batch
      // keeps it for a retry, and a copy of every staged change was a sixth of
      // a 10,000-cluster commit's memory. Each commit's changes are made
      // cluster by cluster as its tree is built (plan_commit_groups): the
      // whole change set of a 100,000-cluster commit was a third of its peak.
      std::vector<std::string> lent;
      auto give_back = [&] {
        for (size_t i = 0; i < lent.size(); ++i) m_clusters.at(lent[i]) = std::move(op.clusters[i]);
      };
      op.clusters.reserve(m_order.size());
      lent.reserve(m_order.size());
      for (const auto& id : m_order) {
        ClusterWork& work = m_clusters.at(id);
        if (work.resources.empty() && op.kind != GitOpsOperationKind::terminate) continue;
        lent.push_back(id);
        op.clusters.push_back(std::move(work));  // no reallocation: reserved above
      }
      std::string head;
      try {
        for (const auto& c : plan_commit_groups(op)) head = m_delivery->deliver(c.remote, c.request).commit_id;
      } catch (...) {
        give_back();
        throw;
      }
      give_back();
      return "commit " + (head.empty() ? std::string("(none)") : head);
    } catch (const Error& e) {
      // Transport failures (unreachable, authentication, TLS, host key)
      // and the disk refusing (full, an I/O error) are worth retrying; a
      // rejection or bad input is not.
      bool transport = e.kind() == ErrorKind::unreachable;
      bool disk = e.kind() == ErrorKind::workspace;
      std::string message = e.message();
      if (!e.hint().empty()) message += " (" + e.hint() + ")";
      throw sync::TargetError(transport || disk, transport, message);
    }
  }

  // The staged resources' files in the repository against what commit()
  // would write for them (plan_commits of the operation at hand).
  std::vector<sync::StagedDrift> drifted(std::chrono::steady_clock::time_point deadline) override {
    std::lock_guard lock(m_mutex);
    NetworkDeadline network(deadline);
    try {
      GitOpsOperation op = m_describe();
      op.kind = GitOpsOperationKind::update;  // resources written, nothing removed
      op.departed.clear();
      op.clusters.clear();
      for (const auto& id : m_order)
        if (!m_clusters.at(id).resources.empty()) op.clusters.push_back(m_clusters.at(id));
      std::vector<sync::StagedDrift> out;
      for (const auto& commit : plan_commits(op)) {
        std::vector<sync::StagedDrift> steps;
        std::vector<std::string> paths;
        const std::unordered_set<std::string> in_commit(commit.cluster_ids.begin(), commit.cluster_ids.end());
        for (const auto& work : op.clusters) {
          if (!in_commit.count(work.cluster.id())) continue;
          for (const auto& r : work.resources) {
            if (!r.object) continue;
            steps.push_back({std::string(r.app), work.cluster.id(), concat({r.name, "+", r.kind}), false,
                             resource_path(work.cluster, op.context, r.app, r.name, r.kind)});
            paths.push_back(steps.back().where);
          }
        }
        auto found = m_delivery->read(commit.remote, paths);
        for (auto& step : steps) {
          const auto& have = found.at(step.where);
          const auto& want = commit.request.changes.at(step.where);
          if (have && want && *have == *want) continue;
          step.deleted = !have;
          out.push_back(std::move(step));
        }
      }
      return out;
    } catch (const Error& e) {
      bool transport = e.kind() == ErrorKind::unreachable;
      std::string message = e.message();
      if (!e.hint().empty()) message += " (" + e.hint() + ")";
      throw sync::TargetError(transport, transport, message);
    }
  }

private:
  // The batch's copy of `name` (m_mutex held): a fleet's steps repeat the
  // same few app and resource names. `last` (the copy this kind of name got
  // the last time) is tried before the set: a job's steps share their app.
  std::string_view name_of(std::string_view name, const std::string*& last) {
    if (last && *last == name) return *last;
    auto it = m_names.find(name);
    if (it == m_names.end()) it = m_names.emplace(name).first;
    last = &*it;
    return *it;
  }

  // The parsed object of `manifest`, parsed once per distinct text (`lock`
  // holds m_mutex and is let go while parsing). The engine hands the same
  // shared text to every cluster that gets the object: it is found by
  // address first, without hashing the whole text for each step.
  std::shared_ptr<const json> object_of(const sync::SharedText& manifest, std::unique_lock<std::mutex>& lock) {
    const std::string& text = manifest.str();
    if (auto seen = m_objects_at.find(&text); seen != m_objects_at.end()) return seen->second.second;
    std::shared_ptr<const json> object;
    if (auto known = m_objects.find(text); known != m_objects.end()) {
      object = known->second;
    } else {
      lock.unlock();
      auto parsed = parse_object(text);
      lock.lock();
      object = m_objects.try_emplace(text, std::move(parsed)).first->second;
    }
    m_objects_at.try_emplace(&text, manifest, object);
    return object;
  }

  static std::shared_ptr<const json> parse_object(const std::string& manifest) {
    std::vector<json> docs;
    try {
      docs = kube::parse_manifests(manifest);
    } catch (const std::exception& e) {
      throw sync::TargetError(false, false, std::string("cannot read the resource: ") + e.what());
    }
    if (docs.size() != 1)
      throw sync::TargetError(false, false, "expected one object in a resource, found " + std::to_string(docs.size()));
    return std::make_shared<const json>(std::move(docs[0]));
  }

  std::shared_ptr<GitDelivery> m_delivery;
  DescribeOperation m_describe;
  std::mutex m_mutex;
  std::vector<std::string> m_order;
  // Looked up once per staged job (a million at 100,000 clusters): hashed; m_order keeps the
  // clusters' order.
  StringMap<ClusterWork> m_clusters;
  // The last staged step's cluster: its key and work in m_clusters (elements stay put when it rehashes).
  const std::string* m_last_cluster_id = nullptr;
  ClusterWork* m_last_cluster = nullptr;
  // The names staged resources view (name_of); a node's string stays put.
  std::unordered_set<std::string, StringHash, std::equal_to<>> m_names;
  const std::string* m_last_app = nullptr;
  const std::string* m_last_resource = nullptr;
  // Identical manifests (the same object on many clusters) are parsed once
  // and shared, so the layout serializes them once.
  std::unordered_map<std::string, std::shared_ptr<const json>> m_objects;
  // The same by the text's address; the SharedText keeps that address from
  // being reused by another text while the batch lives.
  std::unordered_map<const std::string*, std::pair<sync::SharedText, std::shared_ptr<const json>>> m_objects_at;
};

namespace {

class GitOpsTarget : public sync::Target {
public:
  GitOpsTarget(std::shared_ptr<GitOpsTargets::RepositoryBatch> batch, std::shared_ptr<sync::Target> reader)
      : m_batch(std::move(batch)), m_reader(std::move(reader)) {}

  // Reachability shows when the batch is pushed.
  void probe() override {}
  void apply(std::string_view, bool) override {
    throw sync::TargetError(false, false, "a GitOps cluster is delivered through its repository, not applied to");
  }
  bool remove(std::string_view) override {
    throw sync::TargetError(false, false, "a GitOps cluster is delivered through its repository, not deleted from");
  }
  sync::ObjectState state(std::string_view manifest) override {
    if (m_reader) return m_reader->state(manifest);
    sync::ObjectState s;
    s.reason = "delivered through git; the cluster has no kubeconfig to read it back";
    return s;
  }
  std::string read(std::string_view manifest) override { return m_reader ? m_reader->read(manifest) : std::string(); }
  sync::Batch* batch() override { return m_batch.get(); }

private:
  std::shared_ptr<GitOpsTargets::RepositoryBatch> m_batch;
  std::shared_ptr<sync::Target> m_reader;
};

}  // namespace

GitOpsTargets::GitOpsTargets(std::filesystem::path cache_root, DescribeOperation describe, DeliveryOptions options)
    : m_delivery(std::make_shared<GitDelivery>(std::move(cache_root), std::move(options))),
      m_describe(std::move(describe)) {}

std::shared_ptr<sync::Target> GitOpsTargets::target(const GitOpsCluster& cluster, std::shared_ptr<sync::Target> reader) {
  std::shared_ptr<RepositoryBatch> batch;
  {
    std::lock_guard lock(m_mutex);
    auto& slot = m_batches[cluster.remote.url + '\n' + cluster.remote.branch];
    batch = slot.lock();
    if (!batch) {
      batch = std::make_shared<RepositoryBatch>(m_delivery, m_describe);
      slot = batch;
    }
  }
  batch->add_cluster(cluster);
  return std::make_shared<GitOpsTarget>(std::move(batch), std::move(reader));
}

}  // namespace emco::gitops
