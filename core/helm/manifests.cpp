#include "core/helm/manifests.hpp"

#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <unordered_map>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::helm {

const std::vector<std::string>& install_order() {
  static const std::vector<std::string> order = {
      "PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
      "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
      "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList",
      "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
      "Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
      "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService"};
  return order;
}

namespace {

// Go's strings.TrimSpace for the ASCII whitespace Helm output contains.
std::string_view go_trim(std::string_view s) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

int kind_rank(const std::string& kind) {
  static const std::unordered_map<std::string, int> ranks = [] {
    std::unordered_map<std::string, int> m;
    const auto& order = install_order();
    for (size_t i = 0; i < order.size(); ++i) m[order[i]] = static_cast<int>(i);
    return m;
  }();
  auto it = ranks.find(kind);
  return it == ranks.end() ? -1 : it->second;
}

// Helm's lessByKind.
bool less_by_kind(const std::string& a, const std::string& b) {
  int ra = kind_rank(a), rb = kind_rank(b);
  if (ra < 0 && rb < 0) return a != b && a < b;
  if (ra < 0) return false;
  if (rb < 0) return true;
  return ra < rb;
}

// goyaml.v2's wording for the problems yaml-cpp reports differently.
std::string goyaml_message(const std::string& yaml_cpp_msg) {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"illegal map value", "mapping values are not allowed in this context"},
      {"end of map not found", "did not find expected key"},
      {"end of sequence not found", "did not find expected '-' indicator"},
      {"end of map flow not found", "did not find expected ',' or '}'"},
      {"end of sequence flow not found", "did not find expected ',' or ']'"},
      {"unknown token", "found character that cannot start any token"},
      {"block sequence entries are not allowed in this context", "block sequence entries are not allowed in this context"},
      {"unexpected end of", "found unexpected end of stream"},
      {"end of string", "found unexpected end of stream"},
      {"illegal tab when looking for indentation", "found a tab character that violates indentation"},
  };
  for (const auto& [from, to] : table)
    if (yaml_cpp_msg.find(from) != std::string::npos) return to;
  return yaml_cpp_msg;
}

std::string scalar_text(const YAML::Node& node) {
  if (!node || node.IsNull()) return "";
  if (node.IsScalar()) return node.Scalar();
  return "";
}

}  // namespace

std::vector<std::string> split_manifests(std::string_view text) {
  static const RE2 sep("(?:^|\\s*\n)---\\s*");
  std::string_view big = go_trim(text);
  std::vector<std::string> docs;
  size_t pos = 0;
  auto add = [&](std::string_view piece) {
    if (piece.empty()) return;
    docs.emplace_back(go_trim(piece));
  };
  re2::StringPiece input(big.data(), big.size());
  while (pos <= big.size()) {
    re2::StringPiece m;
    if (!sep.Match(input, pos, big.size(), RE2::UNANCHORED, &m, 1)) break;
    auto start = static_cast<size_t>(m.data() - big.data());
    auto end = start + m.size();
    add(big.substr(pos, start - pos));
    pos = end;
    if (m.empty()) ++pos;  // cannot happen with this pattern; guards the loop anyway
  }
  if (pos <= big.size()) add(big.substr(pos));
  return docs;
}

ManifestHead parse_manifest_head(const std::string& doc) {
  ManifestHead head;
  YAML::Node root;
  try {
    root = YAML::Load(doc);
  } catch (const YAML::Exception& e) {
    fail(ErrorKind::invalid, "error converting YAML to JSON: yaml: line " + std::to_string(e.mark.line + 1) + ": " +
                                 goyaml_message(e.msg));
  }
  if (!root || root.IsNull()) return head;
  if (!root.IsMap()) {
    fail(ErrorKind::invalid, std::string("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ") +
                                 (root.IsSequence() ? "array" : "string") +
                                 " into Go value of type releaseutil.SimpleHead");
  }
  head.api_version = scalar_text(root["apiVersion"]);
  head.kind = scalar_text(root["kind"]);
  YAML::Node meta = root["metadata"];
  if (meta && meta.IsMap()) {
    head.has_metadata = true;
    head.name = scalar_text(meta["name"]);
    YAML::Node ann = meta["annotations"];
    if (ann && ann.IsMap())
      for (const auto& kv : ann) head.annotations[kv.first.as<std::string>()] = scalar_text(kv.second);
  }
  return head;
}

void sort_by_kind(std::vector<Manifest>& manifests) {
  std::stable_sort(manifests.begin(), manifests.end(),
                   [](const Manifest& a, const Manifest& b) { return less_by_kind(a.head.kind, b.head.kind); });
}

void sort_by_kind(std::vector<Hook>& hooks) {
  std::stable_sort(hooks.begin(), hooks.end(),
                   [](const Hook& a, const Hook& b) { return less_by_kind(a.kind, b.kind); });
}

SortedManifests sort_manifests(const std::map<std::string, std::string>& files) {
  static const std::map<std::string, std::string> events = {
      {"pre-install", "pre-install"},   {"post-install", "post-install"},   {"pre-delete", "pre-delete"},
      {"post-delete", "post-delete"},   {"pre-upgrade", "pre-upgrade"},     {"post-upgrade", "post-upgrade"},
      {"pre-rollback", "pre-rollback"}, {"post-rollback", "post-rollback"}, {"test", "test"},
      {"test-success", "test"}};
  SortedManifests out;
  for (const auto& [path, content] : files) {  // std::map: sorted like Go's sort.Strings
    auto base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
    if (starts_with(base, "_")) continue;
    if (go_trim(content).empty()) continue;
    for (auto& doc : split_manifests(content)) {
      ManifestHead head;
      try {
        head = parse_manifest_head(doc);
      } catch (const Error& e) {
        fail(ErrorKind::failed, "YAML parse error on " + path + ": " + e.message());
      }
      auto hook_it = head.annotations.find("helm.sh/hook");
      if (hook_it == head.annotations.end()) {
        out.manifests.push_back({path, std::move(doc), std::move(head)});
        continue;
      }
      Hook hook;
      hook.source = path;
      hook.kind = head.kind;
      hook.name = head.name;
      auto weight_it = head.annotations.find("helm.sh/hook-weight");
      if (weight_it != head.annotations.end()) {
        // strconv.Atoi: optional sign and decimal digits only, else 0.
        const std::string& w = weight_it->second;
        size_t i = (!w.empty() && (w[0] == '+' || w[0] == '-')) ? 1 : 0;
        bool ok = i < w.size() && w.size() - i <= 18 &&
                  std::all_of(w.begin() + static_cast<long>(i), w.end(), [](char c) { return c >= '0' && c <= '9'; });
        hook.weight = ok ? static_cast<int>(std::stoll(w)) : 0;
      }
      bool unknown = false;
      for (const auto& raw : split(hook_it->second, ',')) {
        auto ev = events.find(to_lower(trim(raw)));
        if (ev == events.end()) {
          unknown = true;
          break;
        }
        hook.events.push_back(ev->second);
      }
      if (unknown) {
        out.log_lines.push_back("manifest_sorter.go:190: info: skipping unknown hook: \"" + hook_it->second + "\"");
        continue;
      }
      auto del_it = head.annotations.find("helm.sh/hook-delete-policy");
      if (del_it != head.annotations.end())
        for (const auto& p : split(del_it->second, ',')) hook.delete_policies.push_back(trim(p));
      hook.content = std::move(doc);
      out.hooks.push_back(std::move(hook));
    }
  }
  sort_by_kind(out.hooks);
  sort_by_kind(out.manifests);
  return out;
}

}  // namespace emco::helm
