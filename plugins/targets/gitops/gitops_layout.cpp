#include "plugins/targets/gitops/gitops_layout.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::gitops {

using nlohmann::json;

GitOpsType parse_gitops_type(std::string_view text) {
  if (text == "fluxcd" || text == "fluxv2") return GitOpsType::fluxcd;
  if (text == "anthos") return GitOpsType::anthos;
  if (text == "azureArcV2" || text == "azureArc")
    fail(ErrorKind::invalid, "gitOpsType '" + std::string(text) + "' is not supported by emco",
         "use 'fluxcd' (or its alias 'fluxv2') or 'anthos'");
  std::string hint = "gitOpsType is one of 'fluxcd', 'fluxv2', 'anthos'";
  std::string near = closest_match(text, {"fluxcd", "fluxv2", "anthos"});
  if (!near.empty()) hint = "did you mean '" + near + "'?";
  fail(ErrorKind::invalid, "unknown gitOpsType '" + std::string(text) + "'", hint);
}

std::string_view gitops_type_name(GitOpsType type) {
  return type == GitOpsType::anthos ? "anthos" : "fluxcd";
}

FluxTiming flux_timing(const std::map<std::string, std::string>& kv) {
  FluxTiming out;
  auto read = [&](const char* key, long& value) {
    auto it = kv.find(key);
    if (it == kv.end() || trim(it->second).empty()) return;
    std::string text = trim(it->second);
    long parsed = 0;
    bool ok = text.size() <= 9;
    for (char c : text) {
      if (!std::isdigit(static_cast<unsigned char>(c))) ok = false;
      else parsed = parsed * 10 + (c - '0');
    }
    if (!ok || parsed < 1)
      fail(ErrorKind::invalid, "invalid value '" + text + "' for '" + key + "'", "give a whole number of seconds");
    value = parsed;
  };
  read("syncInterval", out.sync_interval);
  read("retryInterval", out.retry_interval);
  read("timeOut", out.timeout);
  return out;
}

std::string go_duration(long seconds) {
  if (seconds == 0) return "0s";
  long h = seconds / 3600, m = (seconds % 3600) / 60, s = seconds % 60;
  std::string out;
  if (h) out += std::to_string(h) + "h";
  if (h || m) out += std::to_string(m) + "m";
  out += std::to_string(s) + "s";
  return out;
}

namespace {

void check_name(std::string_view value, const char* what) {
  if (value.empty()) fail(ErrorKind::invalid, std::string(what) + " is empty in a gitops operation");
  if (value.find('/') != std::string_view::npos || value == "." || value == "..")
    fail(ErrorKind::invalid, std::string(what) + " '" + std::string(value) + "' cannot be used in a git path");
}

// Go's encoding/json escapes these inside strings; they cannot occur outside
// strings in JSON, so a byte-wise replacement is exact.
std::string go_json(const json& value) {
  std::string text = value.dump();
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
      out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else out += c;
  }
  return out;
}

bool keeps_no_namespace(const std::string& kind, GitOpsType type) {
  if (kind == "Namespace") return true;
  return type == GitOpsType::anthos && (kind == "ClusterRole" || kind == "ClusterRoleBinding" || kind == "RepoSync");
}

json with_namespace(const json& object, GitOpsType type, const std::string& namespace_name) {
  if (!object.is_object()) fail(ErrorKind::invalid, "a gitops resource must be an object");
  json copy = object;
  std::string kind = copy.value("kind", "");
  if (keeps_no_namespace(kind, type)) return copy;
  json& meta = copy["metadata"];
  if (!meta.is_object()) meta = json::object();
  auto ns = meta.find("namespace");
  if (ns == meta.end() || !ns->is_string() || ns->get<std::string>().empty()) meta["namespace"] = namespace_name;
  return copy;
}

// Plain YAML scalars where unambiguous, JSON-quoted strings otherwise.
bool plain_safe(const std::string& s) {
  if (s.empty()) return false;
  static const std::vector<std::string> reserved{"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"};
  if (std::find(reserved.begin(), reserved.end(), to_lower(s)) != reserved.end()) return false;
  if (std::isdigit(static_cast<unsigned char>(s[0]))) {
    // Digits with only number-ish characters (1e5, 1_000, 0x1f, 2024-01-02)
    // would read back as numbers or dates; "30s" or "1m0s" stay plain.
    if (s.size() > 1 && (s[1] == 'x' || s[1] == 'o' || s[1] == 'X' || s[1] == 'O')) return false;
    if (s.find_first_not_of("0123456789._+-eE") == std::string::npos) return false;
  } else if (!std::isalpha(static_cast<unsigned char>(s[0])) && s[0] != '/' && s[0] != '_') {
    return false;
  }
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("-_./+").find(c) == std::string_view::npos)
      return false;
  return true;
}

void emit_yaml(const json& value, int indent, std::string& out) {
  // Called for object members; scalars are written by the caller's line.
  for (auto it = value.begin(); it != value.end(); ++it) {
    out.append(static_cast<size_t>(indent), ' ');
    out += it.key();
    out += ':';
    const json& v = it.value();
    if (v.is_object()) {
      if (v.empty()) {
        out += " {}\n";
      } else {
        out += '\n';
        emit_yaml(v, indent + 2, out);
      }
    } else if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      out += ' ';
      out += plain_safe(s) ? s : json(s).dump();
      out += '\n';
    } else {
      out += ' ';
      out += v.dump();
      out += '\n';
    }
  }
}

std::string to_yaml(const json& object) {
  std::string out;
  emit_yaml(object, 0, out);
  return out;
}

std::string context_dir(const GitOpsCluster& cluster, const ContextMeta& meta) {
  return cluster_base_dir(cluster, meta) + "/context/" + meta.app_context_id;
}

std::string flux_repository_path(const GitOpsCluster& cluster, const ContextMeta& meta) {
  return "clusters/" + cluster.id() + "/" + meta.app_context_id + ".yaml";
}

std::string flux_kustomization_path(const GitOpsCluster& cluster, const ContextMeta& meta) {
  return "clusters/" + cluster.id() + "/kust" + meta.app_context_id + ".yaml";
}

std::string repo_sync_path(const GitOpsCluster& cluster, const ContextMeta& meta, std::string_view app) {
  return app_dir(cluster, meta, app) + "/repo-sync-" + meta.logical_cloud + "+RepoSync.json";
}

}  // namespace

std::string cluster_base_dir(const GitOpsCluster& cluster, const ContextMeta& meta) {
  if (cluster.type == GitOpsType::anthos && meta.level == "1")
    return concat({"namespaces/", meta.namespace_name, "/", cluster.provider, "+", cluster.cluster});
  return concat({"clusters/", cluster.provider, "+", cluster.cluster});
}

std::string app_dir(const GitOpsCluster& cluster, const ContextMeta& meta, std::string_view app) {
  return concat({context_dir(cluster, meta), "/app/", app});
}

// Built in one piece: a fleet's commit makes millions of these paths, and
// joining them step by step (with a temporary per step) was a tenth of it.
std::string resource_path_in_base(const ContextMeta& meta, std::string_view app, std::string_view name,
                                  std::string_view kind) {
  return concat({"context/", meta.app_context_id, "/app/", app, "/", name, "+", kind, ".yaml"});
}

std::string status_path_in_base(const ContextMeta& meta, std::string_view app, std::string_view status_context_id) {
  return concat({"context/", meta.app_context_id, "/app/", app, "/", status_context_id, "-", app, ".yaml"});
}

std::string resource_path(const GitOpsCluster& cluster, const ContextMeta& meta, std::string_view app,
                          std::string_view name, std::string_view kind) {
  return concat({cluster_base_dir(cluster, meta), "/", resource_path_in_base(meta, app, name, kind)});
}

std::string status_path(const GitOpsCluster& cluster, const ContextMeta& meta, std::string_view app,
                        std::string_view status_context_id) {
  return concat({cluster_base_dir(cluster, meta), "/", status_path_in_base(meta, app, status_context_id)});
}

std::string resource_content(const json& object, GitOpsType type, const std::string& namespace_name) {
  return go_json(with_namespace(object, type, namespace_name));
}

std::string status_content(const json& object, GitOpsType type, const std::string& namespace_name) {
  json copy = with_namespace(object, type, namespace_name);
  if (type == GitOpsType::anthos) copy.erase("status");
  return go_json(copy);
}

std::map<std::string, std::string> flux_objects(const GitOpsCluster& cluster, const ContextMeta& meta) {
  std::map<std::string, std::string> out;
  if (cluster.type != GitOpsType::fluxcd) return out;
  const std::string& ctx = meta.app_context_id;
  std::string source_name = ctx;
  std::string kust_namespace = meta.namespace_name;
  if (meta.is_logical_cloud_context()) {
    source_name = "flux-system";
    kust_namespace = "flux-system";
  } else {
    json repo = {{"apiVersion", "source.toolkit.fluxcd.io/v1beta1"},
                 {"kind", "GitRepository"},
                 {"metadata", {{"name", ctx}, {"namespace", meta.namespace_name}}},
                 {"spec", {{"interval", "30s"}, {"ref", {{"branch", cluster.remote.branch}}}, {"url", cluster.remote.url}}}};
    out[flux_repository_path(cluster, meta)] = to_yaml(repo);
  }
  json spec = {{"interval", go_duration(cluster.flux.sync_interval)},
               {"path", "clusters/" + cluster.id() + "/context/" + ctx},
               {"prune", true},
               {"retryInterval", go_duration(cluster.flux.retry_interval)},
               {"sourceRef", {{"kind", "GitRepository"}, {"name", source_name}}},
               {"timeout", go_duration(cluster.flux.timeout)}};
  if (meta.level == "1") spec["serviceAccountName"] = meta.logical_cloud_namespace + "-sa";
  json kust = {{"apiVersion", "kustomize.toolkit.fluxcd.io/v1beta2"},
               {"kind", "Kustomization"},
               {"metadata", {{"name", "kust" + ctx}, {"namespace", kust_namespace}}},
               {"spec", spec}};
  out[flux_kustomization_path(cluster, meta)] = to_yaml(kust);
  return out;
}

std::map<std::string, std::string> anthos_objects(const GitOpsCluster& cluster, const ContextMeta& meta,
                                                  const std::vector<std::string_view>& apps, const std::string& stamp) {
  std::map<std::string, std::string> out;
  if (cluster.type != GitOpsType::anthos) return out;
  out[context_dir(cluster, meta) + "/deployed"] = stamp;
  if (meta.is_logical_cloud_context()) {
    json sync = {{"apiVersion", "configsync.gke.io/v1beta1"},
                 {"kind", "RepoSync"},
                 {"metadata", {{"name", "repo-sync-" + meta.logical_cloud}, {"namespace", meta.logical_cloud_namespace}}},
                 {"spec",
                  {{"git",
                    {{"auth", "none"},
                     {"branch", cluster.remote.branch},
                     {"dir", "/namespaces/" + meta.logical_cloud_namespace + "/" + cluster.id()},
                     {"noSSLVerify", false},
                     {"repo", cluster.remote.url},
                     {"revision", "HEAD"}}}}}};
    std::string text = go_json(sync);
    for (const auto& app : apps) out[repo_sync_path(cluster, meta, app)] = text;
  }
  return out;
}

std::string_view operation_name(GitOpsOperationKind kind) {
  switch (kind) {
    case GitOpsOperationKind::instantiate: return "instantiate";
    case GitOpsOperationKind::update: return "update";
    case GitOpsOperationKind::terminate: return "terminate";
  }
  return "instantiate";
}

std::string commit_message(const GitOpsOperation& op) {
  return "emco: " + std::string(operation_name(op.kind)) + " " + op.project + "/" + op.composite_app + "/" +
         op.composite_app_version + "/" + op.dig + " revision " + std::to_string(op.revision) + " (context " +
         op.context.app_context_id + ")";
}

namespace {

// flux_objects() for every cluster of an operation, built once per
// registration: the clusters of a fleet share their remote and timing and
// differ only in their id, which appears in the paths and in the
// Kustomization's spec.path. An id of plain-scalar characters leaves that
// YAML's quoting as it is for the placeholder, so substituting is exact;
// any other id is built in full.
class FluxObjects {
public:
  explicit FluxObjects(const ContextMeta& meta) : m_meta(meta) {}

  std::map<std::string, std::string> of(const GitOpsCluster& cluster) {
    if (cluster.type != GitOpsType::fluxcd || !substitutable(cluster.id())) return flux_objects(cluster, m_meta);
    const std::string key = std::string(gitops_type_name(cluster.type)) + '\n' + cluster.remote.url + '\n' +
                            cluster.remote.branch + '\n' + std::to_string(cluster.flux.sync_interval) + '\n' +
                            std::to_string(cluster.flux.retry_interval) + '\n' + std::to_string(cluster.flux.timeout);
    auto it = m_templates.find(key);
    if (it == m_templates.end()) {
      GitOpsCluster stand_in = cluster;
      stand_in.provider = k_placeholder_provider;
      stand_in.cluster = k_placeholder_cluster;
      it = m_templates.emplace(key, flux_objects(stand_in, m_meta)).first;
    }
    const std::string id = cluster.id();
    std::map<std::string, std::string> out;
    for (const auto& [path, text] : it->second) out.emplace(substitute(path, id), substitute(text, id));
    return out;
  }

private:
  static constexpr const char* k_placeholder_provider = "emcoplaceholderprovider";
  static constexpr const char* k_placeholder_cluster = "emcoplaceholdercluster";

  static bool substitutable(const std::string& id) {
    for (char c : id)
      if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("-_.+").find(c) == std::string_view::npos)
        return false;
    return true;
  }
  static std::string substitute(const std::string& text, const std::string& id) {
    static const std::string placeholder = std::string(k_placeholder_provider) + "+" + k_placeholder_cluster;
    std::string out;
    size_t from = 0;
    for (size_t at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, from)) {
      out.append(text, from, at - from);
      out += id;
      from = at + placeholder.size();
    }
    out.append(text, from, std::string::npos);
    return out;
  }

  const ContextMeta& m_meta;
  std::map<std::string, std::map<std::string, std::string>> m_templates;
};

}  // namespace

namespace {

// Names become path components: none may be empty or hold a '/'.
void check_names(const GitOpsOperation& op) {
  check_name(op.context.app_context_id, "app context id");
  for (const ClusterWork& work : op.clusters) {
    check_name(work.cluster.provider, "cluster provider");
    check_name(work.cluster.cluster, "cluster name");
    for (const ResourceChange& r : work.resources) {
      check_name(r.app, "app name");
      check_name(r.name, "resource name");
      check_name(r.kind, "resource kind");
    }
    for (const auto& [app, object] : work.status) check_name(app, "app name");
  }
}

// One cluster's changes at a time, for the clusters of one operation.
class ClusterChanges {
public:
  explicit ClusterChanges(const GitOpsOperation& op)
      : m_op(op),
        m_status_ctx(op.status_context_id.empty() ? op.context.app_context_id : op.status_context_id),
        m_stamp(op.deployed_stamp.empty() ? std::to_string(op.revision) : op.deployed_stamp),
        m_flux(op.context) {}

  // Everything `work` changes, relative to its cluster's base directory
  // (cluster_base_dir), which holds all of it.
  ChangeGroup of(const ClusterWork& work) {
    const GitOpsCluster& cluster = work.cluster;
    const bool terminate = m_op.kind == GitOpsOperationKind::terminate;
    ChangeGroup group;
    group.dir = cluster_base_dir(cluster, m_op.context);
    auto& changes = group.changes;
    changes.reserve(work.resources.size() + work.status.size());
    // A path the layout gives in full (the Flux and Anthos objects).
    auto add = [&](std::string path, std::optional<FileText> content) {
      if (path.size() <= group.dir.size() + 1 || path.compare(0, group.dir.size(), group.dir) != 0 ||
          path[group.dir.size()] != '/')
        fail(ErrorKind::internal, "GitOps path '" + path + "' lies outside its cluster's directory '" + group.dir + "'");
      path.erase(0, group.dir.size() + 1);
      changes.emplace_back(std::move(path), std::move(content));
    };
    std::vector<std::string_view> apps;
    auto note_app = [&](std::string_view app) {
      if (std::find(apps.begin(), apps.end(), app) == apps.end()) apps.push_back(app);
    };
    for (const ResourceChange& r : work.resources) {
      note_app(r.app);
      std::string path = resource_path_in_base(m_op.context, r.app, r.name, r.kind);
      if (terminate || !r.object) changes.emplace_back(std::move(path), std::nullopt);
      else changes.emplace_back(std::move(path), content_of(r.object, cluster.type, false));
    }
    for (const auto& [app, object] : work.status) {
      note_app(app);
      std::string path = status_path_in_base(m_op.context, app, m_status_ctx);
      if (terminate || !object) changes.emplace_back(std::move(path), std::nullopt);
      else changes.emplace_back(std::move(path), content_of(object, cluster.type, true));
    }

    // A cluster an update leaves is cleaned up as a terminate would.
    const bool leaving =
        terminate || (m_op.kind == GitOpsOperationKind::update && m_op.departed.count(cluster.id()));
    std::map<std::string, std::string> config = m_flux.of(cluster);
    if (m_op.kind != GitOpsOperationKind::update || leaving) {
      auto anthos = anthos_objects(cluster, m_op.context, apps, m_stamp);
      config.insert(anthos.begin(), anthos.end());
    }
    for (auto& [path, text] : config) {
      if (leaving) add(path, std::nullopt);
      else add(path, std::move(text));
    }
    if (leaving) add(context_dir(cluster, m_op.context) + "/", std::nullopt);
    return group;
  }

private:
  // An object several clusters share is serialized once per Git flavour;
  // one that a single cluster holds is not remembered (at 100,000 clusters
  // their texts would all stay in memory until the commit is pushed).
  FileText content_of(const std::shared_ptr<const json>& object, GitOpsType type, bool status) {
    const std::string& ns = m_op.context.namespace_name;
    auto serialize = [&] { return status ? status_content(*object, type, ns) : resource_content(*object, type, ns); };
    if (object.use_count() < 2) return serialize();
    auto& cache = m_serialized[type == GitOpsType::anthos ? 1 : 0];
    auto it = cache.find(object.get());
    if (it == cache.end()) it = cache.emplace(object.get(), serialize()).first;
    return it->second;
  }

  const GitOpsOperation& m_op;
  const std::string m_status_ctx;
  const std::string m_stamp;
  FluxObjects m_flux;
  std::unordered_map<const json*, FileText> m_serialized[2];
};

}  // namespace

std::vector<RepositoryCommit> plan_commit_groups(const GitOpsOperation& op) {
  check_names(op);
  std::vector<RepositoryCommit> commits;
  std::vector<std::vector<const ClusterWork*>> members;
  std::map<std::string, size_t> by_repo;
  for (const ClusterWork& work : op.clusters) {
    const GitOpsCluster& cluster = work.cluster;
    auto [slot, fresh] = by_repo.try_emplace(cluster.remote.url + '\n' + cluster.remote.branch, commits.size());
    if (fresh) {
      RepositoryCommit commit;
      commit.remote = cluster.remote;
      commit.request.message = commit_message(op);
      commits.push_back(std::move(commit));
      members.emplace_back();
    }
    commits[slot->second].cluster_ids.push_back(cluster.id());
    members[slot->second].push_back(&work);
  }
  for (size_t i = 0; i < commits.size(); ++i)
    commits[i].request.groups = [&op, clusters = std::move(members[i])](const ChangeGroupSink& sink) {
      ClusterChanges changes(op);
      for (const ClusterWork* work : clusters) sink(changes.of(*work));
    };
  return commits;
}

std::vector<RepositoryCommit> plan_commits(const GitOpsOperation& op) {
  std::vector<RepositoryCommit> commits = plan_commit_groups(op);
  for (RepositoryCommit& commit : commits) {
    ChangeSet& all = commit.request.changes;
    auto at = all.end();
    commit.request.groups([&](ChangeGroup&& group) {
      for (auto& [path, content] : group.changes) at = all.insert_or_assign(at, group.dir + "/" + path, std::move(content));
    });
    commit.request.groups = nullptr;
  }
  return commits;
}

}  // namespace emco::gitops
