// Level-1 logical clouds: the objects of logical-clouds.md, the user's key,
// CSR and kubeconfig (OpenSSL), and the per-cluster status.

#include "core/lifecycle/lc_dcm.hpp"

#include <memory>

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "core/lifecycle/credentials.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"

namespace emco::lifecycle::lc {

using nlohmann::json;
using resource::Key;
namespace ac = emco::appcontext;

namespace {

json spec_of(const store::Resource& r) {
  json d = json::parse(r.data);
  json s = d.value("spec", json::object());
  return s.is_object() ? s : json::object();
}

std::string name_of(const store::Resource& r) { return r.key.parts.back().second; }

std::vector<std::string> strings(const json& j, const char* field) {
  std::vector<std::string> out;
  if (j.contains(field) && j[field].is_array())
    for (const auto& e : j[field])
      if (e.is_string()) out.push_back(e.get<std::string>());
  return out;
}

std::string describe(const Cloud& c) { return "logical cloud '" + c.project + "/" + c.name + "'"; }

// The ServiceAccount subject GitOps reconcilers run as (logical-clouds.md:
// non-Anthos "<lc>-sa" in the namespace — not the "<ns>-sa" created beside
// it, an upstream inconsistency kept for compatibility; Anthos: the RepoSync
// reconciler of the cloud's namespace).
json gitops_subject(const Cloud& c, const ClusterRef& ref) {
  if (ref.gitops == "anthos") {
    std::string repo_sync = "repo-sync-" + c.name;
    return {{"kind", "ServiceAccount"},
            {"name", "ns-reconciler-" + c.ns + "-" + repo_sync + "-" + std::to_string(repo_sync.size())},
            {"namespace", "config-management-system"}};
  }
  return {{"kind", "ServiceAccount"}, {"name", c.name + "-sa"}, {"namespace", c.ns}};
}

void put(ac::AppContext& ctx, ac::Cluster& cl, const json& obj) {
  std::string key = obj["metadata"]["name"].get<std::string>() + "+" + obj["kind"].get<std::string>();
  cl.resources.push_back({key, ctx.intern(obj.dump())});
}

template <class T, void (*F)(T*)>
struct Free {
  void operator()(T* p) const { F(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Free<EVP_PKEY, EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, Free<BIO, BIO_free_all>>;
using ReqPtr = std::unique_ptr<X509_REQ, Free<X509_REQ, X509_REQ_free>>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

PkeyPtr load_key(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) fail(ErrorKind::failed, "the logical cloud's private key cannot be read");
  return key;
}

}  // namespace

Cloud load(store::Store& st, const Key& lc) {
  auto r = st.get(lc);
  if (!r) fail(ErrorKind::not_found, "logical cloud '" + resource::resource_anchor(resource::kind("logicalCloud"), lc) + "' does not exist");
  Cloud c;
  c.key = lc;
  c.project = *lc.get("project");
  c.name = *lc.get("logicalCloud");
  json s = spec_of(*r);
  c.level = s.value("level", "1");
  c.ns = s.value("namespace", "");
  c.user = s.value("user", json::object()).value("userName", "");
  json labels = s.value("labels", json::object());
  if (labels.is_object())
    for (auto it = labels.begin(); it != labels.end(); ++it)
      if (it->is_string()) c.labels[it.key()] = it->get<std::string>();
  for (const auto& p : st.list(resource::kind("userPermission"), lc)) {
    json ps = spec_of(p);
    c.permissions.push_back({name_of(p), ps.value("namespace", ""), strings(ps, "apiGroups"), strings(ps, "resources"),
                             strings(ps, "verbs")});
  }
  for (const auto& q : st.list(resource::kind("clusterQuota"), lc)) {
    Quota quota{name_of(q), {}};
    json qs = spec_of(q);
    for (auto it = qs.begin(); it != qs.end(); ++it)
      quota.hard[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
    c.quotas.push_back(std::move(quota));
  }
  for (const auto& ref : st.list(resource::kind("clusterReference"), lc)) {
    json rs = spec_of(ref);
    ClusterRef cr{name_of(ref), rs.value("clusterProvider", "") + "+" + rs.value("cluster", ""), ""};
    Key ck;
    ck.parts = {{"clusterProvider", rs.value("clusterProvider", "")}, {"cluster", rs.value("cluster", "")}};
    if (auto cluster = st.get(ck)) {
      json cs = spec_of(*cluster);
      if (cs.contains("gitOps") && cs["gitOps"].is_object()) cr.gitops = cs["gitOps"].value("gitOpsType", "");
    }
    c.clusters.push_back(std::move(cr));
  }
  return c;
}

void check_level1(const Cloud& c) {
  const std::string anchor = "projects/" + c.project + "/logical-clouds/" + c.name;
  if (c.ns.empty())
    fail(ErrorKind::invalid, describe(c) + " has no spec.namespace", "a standard or privileged logical cloud needs one");
  if (c.user.empty())
    fail(ErrorKind::invalid, describe(c) + " has no spec.user.userName",
         "a standard or privileged logical cloud needs the user its credentials are issued for");
  if (c.clusters.empty())
    fail(ErrorKind::conflict, describe(c) + " has no cluster references", "add one under '" + anchor + "/cluster-references' first");
  bool primary = false;
  for (const auto& p : c.permissions) primary = primary || p.ns == c.ns;
  if (!primary)
    fail(ErrorKind::conflict, describe(c) + " has no user permission for its namespace '" + c.ns + "'",
         "level-1 logical clouds need one: add it under '" + anchor + "/user-permissions' with namespace: " + c.ns);
}

std::string csr_name(const Cloud& c) { return c.name + "-" + c.ns + "-user-csr"; }

ac::AppContext build_context(const Cloud& c, const std::string& csr_pem, const ac::AppContext* previous,
                             const std::string& created) {
  ac::AppContext ctx;
  ctx.id = random_context_id();
  ctx.owner = {"logicalCloud", c.key};
  ctx.created = created;
  ctx.meta = {{"Project", c.project},      {"LogicalCloud", c.name}, {"LogicalCloudNamespace", c.ns},
              {"LogicalCloudLevel", "1"}, {"Level", "0"},           {"Namespace", "default"}};
  const ac::App* old_app = previous ? previous->find_app("logical-cloud") : nullptr;
  ac::App app;
  app.name = "logical-cloud";
  const json user_subject = {{"kind", "User"}, {"name", c.user}, {"apiGroup", "rbac.authorization.k8s.io"}};
  for (const auto& ref : c.clusters) {
    ac::Cluster cl;
    cl.name = ref.cluster;
    json ns_obj = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", c.ns}}}};
    if (!c.labels.empty()) ns_obj["metadata"]["labels"] = c.labels;
    put(ctx, cl, ns_obj);
    if (ref.gitops.empty()) {
      const std::string key = csr_name(c) + "+CertificateSigningRequest";
      const ac::Cluster* old_cl = old_app ? old_app->find_cluster(ref.cluster) : nullptr;
      const ac::Resource* old_csr = old_cl ? old_cl->find(key) : nullptr;
      if (old_csr) {
        cl.resources.push_back({key, ctx.intern(old_csr->text())});
      } else {
        json csr = {{"apiVersion", "certificates.k8s.io/v1"},
                    {"kind", "CertificateSigningRequest"},
                    {"metadata", {{"name", csr_name(c)}}},
                    {"spec",
                     {{"request", base64_encode(csr_pem)},
                      {"signerName", "kubernetes.io/kube-apiserver-client"},
                      {"usages", {"digital signature", "key encipherment", "client auth"}}}}};
        put(ctx, cl, csr);
      }
    } else if (ref.gitops != "anthos") {
      put(ctx, cl, {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", c.ns + "-sa"}, {"namespace", c.ns}}}});
    }
    for (const auto& q : c.quotas)
      put(ctx, cl,
          {{"apiVersion", "v1"}, {"kind", "ResourceQuota"}, {"metadata", {{"name", q.name}, {"namespace", c.ns}}},
           {"spec", {{"hard", q.hard}}}});
    for (size_t i = 0; i < c.permissions.size(); ++i) {
      const auto& p = c.permissions[i];
      const bool cluster_wide = p.ns.empty();
      const std::string n = std::to_string(i);
      json rules = json::array({{{"apiGroups", p.api_groups}, {"resources", p.resources}, {"verbs", p.verbs}}});
      json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                   {"kind", cluster_wide ? "ClusterRole" : "Role"},
                   {"metadata", {{"name", c.name + (cluster_wide ? "-clusterRole" : "-role") + n}}},
                   {"rules", rules}};
      json binding = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                      {"kind", cluster_wide ? "ClusterRoleBinding" : "RoleBinding"},
                      {"metadata", {{"name", c.name + (cluster_wide ? "-clusterRoleBinding" : "-roleBinding") + n}}},
                      {"subjects", json::array({user_subject})},
                      {"roleRef",
                       {{"apiGroup", "rbac.authorization.k8s.io"},
                        {"kind", role["kind"]},
                        {"name", role["metadata"]["name"]}}}};
      if (!cluster_wide) {
        role["metadata"]["namespace"] = p.ns;
        binding["metadata"]["namespace"] = p.ns;
      }
      if (!ref.gitops.empty()) binding["subjects"].push_back(gitops_subject(c, ref));
      put(ctx, cl, role);
      put(ctx, cl, binding);
    }
    app.clusters.push_back(std::move(cl));
  }
  std::sort(app.clusters.begin(), app.clusters.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  ctx.apps.push_back(std::move(app));
  return ctx;
}

std::string generate_key() {
  PkeyPtr key(EVP_RSA_gen(4096));
  if (!key) fail(ErrorKind::failed, "cannot generate an RSA key for the logical cloud");
  BioPtr bio(BIO_new(BIO_s_mem()));
  // PKCS#1 ("RSA PRIVATE KEY"), as upstream dcm stores it.
  if (PEM_write_bio_PrivateKey_traditional(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    fail(ErrorKind::failed, "cannot encode the logical cloud's key");
  return bio_text(bio.get());
}

std::string make_csr(const std::string& key_pem, const std::string& common_name) {
  PkeyPtr key = load_key(key_pem);
  ReqPtr req(X509_REQ_new());
  X509_NAME* name = X509_REQ_get_subject_name(req.get());
  if (!req || X509_REQ_set_version(req.get(), 0) != 1 ||
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(common_name.c_str()),
                                 -1, -1, 0) != 1 ||
      X509_REQ_set_pubkey(req.get(), key.get()) != 1 || X509_REQ_sign(req.get(), key.get(), EVP_sha256()) <= 0)
    fail(ErrorKind::failed, "cannot make the certificate request of user '" + common_name + "'");
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509_REQ(bio.get(), req.get()) != 1)
    fail(ErrorKind::failed, "cannot encode the certificate request of user '" + common_name + "'");
  return bio_text(bio.get());
}

Status status(store::Store& st, const Key& lc) {
  Cloud c = load(st, lc);
  auto r = st.get(lc);
  Status out;
  out.level = c.level;
  out.state = current_state(r->state_info);
  json si = r->state_info.empty() ? json::object() : json::parse(r->state_info);
  std::string status_ctx = si.value("statusctxid", "");
  if (si.contains("actions") && !si["actions"].empty()) out.context = si["actions"].back().value("instance", "");
  std::map<std::string, ClusterStatus> by_cluster;
  for (const auto& ref : c.clusters) by_cluster[ref.cluster] = {ref.cluster, ref.gitops, {}, false};
  if (!out.context.empty() && ac::exists(st, out.context)) {
    ac::AppContext ctx = ac::load(st, out.context);
    out.context_status = ctx.status;
    const std::string sid = status_ctx.empty() ? ctx.status_id() : status_ctx;
    std::map<std::string, ac::ResourceState> recorded;
    for (auto& s : ac::resource_states(st, sid)) recorded[s.cluster + "\n" + s.resource] = s;
    for (const auto& app : ctx.apps)
      for (const auto& cl : app.clusters) {
        auto& cs = by_cluster[cl.name];
        cs.cluster = cl.name;
        for (const auto& res : cl.resources) {
          auto it = recorded.find(cl.name + "\n" + res.name);
          ObjectStatus os{res.name, ac::resource_status::pending, ""};
          if (it != recorded.end()) os = {res.name, it->second.status, it->second.message};
          cs.objects.push_back(std::move(os));
        }
      }
  }
  for (const auto& cl : tenant_clusters(st, lc))
    if (by_cluster.count(cl)) by_cluster[cl].credentials = true;
  for (auto& [_, cs] : by_cluster) out.clusters.push_back(std::move(cs));
  return out;
}

}  // namespace emco::lifecycle::lc
