#include "plugins/targets/kube/kube_target.hpp"

#include <nlohmann/json.hpp>

#include "core/k8s/yaml.hpp"
#include "core/util/strings.hpp"

namespace emco::kube {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string str_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

ClusterAccess access_from_text(const std::string& label, const std::string& text, const std::string& context) {
  return resolve_access(parse_kubeconfig(text, label.empty() ? "<inline>" : label, {}), context, label);
}

bool is_document_marker(std::string_view line) {
  if (!starts_with(line, "---")) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r';
}

}  // namespace

bool is_crd(const Gvk& gvk) { return gvk.group == "apiextensions.k8s.io" && gvk.kind == "CustomResourceDefinition"; }

ObjectRef ref_of(const json& object) {
  ObjectRef ref;
  ref.gvk = Gvk::of(str_field(object, "apiVersion"), str_field(object, "kind"));
  if (auto m = object.find("metadata"); m != object.end() && m->is_object()) {
    ref.ns = str_field(*m, "namespace");
    ref.name = str_field(*m, "name");
  }
  return ref;
}

std::vector<json> parse_manifests(std::string_view text) {
  std::vector<std::string> docs(1);
  for (const auto& line : split(text, '\n')) {
    if (is_document_marker(line)) {
      docs.emplace_back();
      // "--- {json}" or "--- key: value" keeps content after the marker.
      std::string rest = trim(std::string_view(line).substr(3));
      if (!rest.empty()) docs.back() += rest + "\n";
    } else if (trim(line) != "...") {
      docs.back() += line + "\n";
    }
  }
  std::vector<json> objects;
  for (size_t i = 0; i < docs.size(); ++i) {
    json doc;
    try {
      doc = k8s::parse_json_or_yaml(docs[i]);
    } catch (const Error& e) {
      throw e.with_context("manifest document " + std::to_string(i + 1));
    }
    if (doc.is_null()) continue;
    if (!doc.is_object())
      fail(ErrorKind::invalid, "manifest document " + std::to_string(i + 1) + " is not an object");
    if (ends_with(str_field(doc, "kind"), "List") && doc.contains("items") && doc["items"].is_array()) {
      for (auto& item : doc["items"]) objects.push_back(std::move(item));
    } else {
      objects.push_back(std::move(doc));
    }
  }
  return objects;
}

std::vector<size_t> apply_order(const std::vector<json>& objects) {
  std::vector<size_t> order;
  auto rank = [](const json& o) {
    Gvk g = ref_of(o).gvk;
    if (g.group.empty() && g.kind == "Namespace") return 0;
    if (is_crd(g)) return 1;
    return 2;
  };
  for (int r = 0; r < 3; ++r)
    for (size_t i = 0; i < objects.size(); ++i)
      if (rank(objects[i]) == r) order.push_back(i);
  return order;
}

KubeTarget::KubeTarget(const std::string& label, const std::string& kubeconfig_text, std::string ns,
                       KubeTargetOptions options)
    : KubeTarget(access_from_text(label, kubeconfig_text, options.context), std::move(ns), options) {}

KubeTarget::KubeTarget(ClusterAccess access, std::string ns, KubeTargetOptions options, HttpClientFactory factory)
    : m_options(std::move(options)), m_client(std::move(access), m_options.client, std::move(factory)), m_ns(std::move(ns)) {
  if (m_ns.empty()) m_ns = m_client.access().ns.empty() ? "default" : m_client.access().ns;
}

std::string KubeTarget::effective_ns(const ObjectRef& ref) const { return ref.ns.empty() ? m_ns : ref.ns; }

ProbeResult KubeTarget::probe() {
  ProbeResult p;
  auto start = Clock::now();
  try {
    json v = m_client.server_version(m_options.probe_timeout);
    p.reachable = true;
    p.version = str_field(v, "gitVersion");
    if (p.version.empty()) p.version = "v" + str_field(v, "major") + "." + str_field(v, "minor");
  } catch (const KubeError& e) {
    // Any HTTP answer means the server is there; only transport failures
    // (status 0) make it unreachable.
    p.reachable = e.http_status() != 0;
    p.error = e.category();
    p.message = e.message();
  }
  p.latency = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return p;
}

ApplyResult KubeTarget::apply(std::string_view manifest) {
  std::vector<json> objects = parse_manifests(manifest);
  if (objects.size() != 1)
    fail(ErrorKind::invalid, "cluster '" + m_client.label() + "': expected one object in the manifest, found " +
                                 std::to_string(objects.size()));
  return apply(objects[0]);
}

ApplyResult KubeTarget::apply(const json& object) {
  ApplyResult result;
  result.ref = ref_of(object);
  WriteResult w;
  bool crd = is_crd(result.ref.gvk);
  if (crd && m_options.crd_create_if_absent) {
    w = m_client.create_if_absent(object, m_ns);
    result.action = w.created ? ApplyAction::created : ApplyAction::exists;
  } else {
    w = m_client.apply(object, m_ns);
    result.action = w.created ? ApplyAction::created : ApplyAction::configured;
  }
  if (crd) m_client.wait_established(result.ref.name);  // rediscovers too
  if (result.ref.ns.empty() && !result.ref.gvk.kind.empty()) {
    ResourceInfo info = m_client.resource_for(result.ref.gvk);  // cached
    if (info.namespaced) result.ref.ns = m_ns;
  }
  result.resource_version = w.resource_version;
  result.uid = w.uid;
  result.generation = w.generation;
  return result;
}

std::vector<ApplyResult> KubeTarget::apply_all(std::string_view manifests) {
  std::vector<json> objects = parse_manifests(manifests);
  std::vector<ApplyResult> results;
  for (size_t i : apply_order(objects)) results.push_back(apply(objects[i]));
  return results;
}

bool KubeTarget::remove(const ObjectRef& ref, Propagation propagation) {
  return m_client.remove(ref.gvk, effective_ns(ref), ref.name, propagation);
}

json KubeTarget::read(const ObjectRef& ref) { return m_client.get(ref.gvk, effective_ns(ref), ref.name); }

Readiness KubeTarget::ready(const ObjectRef& ref) { return evaluate_readiness(read(ref)); }

}  // namespace emco::kube
