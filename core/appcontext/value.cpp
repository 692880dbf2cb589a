#include "core/appcontext/value.hpp"

#include "core/util/sha256.hpp"

namespace emco::appcontext {

const std::vector<std::string>& hook_group_order() {
  static const std::vector<std::string> order = {"crd-install", "pre-install",  "post-install", "pre-delete",
                                                 "post-delete", "pre-upgrade", "post-upgrade", "pre-rollback",
                                                 "post-rollback"};
  return order;
}

ContentRef make_content(std::string text) {
  auto c = std::make_shared<Content>();
  c->hash = sha256_hex(text);
  c->text = std::move(text);
  return c;
}

Resource* Cluster::find(const std::string& resource_name) {
  for (auto& r : resources)
    if (r.name == resource_name) return &r;
  for (auto& g : hooks)
    for (auto& r : g.resources)
      if (r.name == resource_name) return &r;
  return nullptr;
}

const Resource* Cluster::find(const std::string& resource_name) const {
  return const_cast<Cluster*>(this)->find(resource_name);
}

void Cluster::put(Resource r) {
  for (auto& existing : resources) {
    if (existing.name == r.name) {
      existing.content = std::move(r.content);
      return;
    }
  }
  resources.push_back(std::move(r));
}

Cluster* App::find_cluster(const std::string& cluster) {
  for (auto& c : clusters)
    if (c.name == cluster) return &c;
  return nullptr;
}

const Cluster* App::find_cluster(const std::string& cluster) const {
  return const_cast<App*>(this)->find_cluster(cluster);
}

App* AppContext::find_app(const std::string& app) {
  for (auto& a : apps)
    if (a.name == app) return &a;
  return nullptr;
}

const App* AppContext::find_app(const std::string& app) const { return const_cast<AppContext*>(this)->find_app(app); }

ContentRef AppContext::intern(std::string text) {
  std::string hash = sha256_hex(text);
  auto it = m_interned.find(hash);
  if (it != m_interned.end()) {
    if (auto live = it->second.lock()) return live;
  }
  auto c = std::make_shared<Content>();
  c->hash = hash;
  c->text = std::move(text);
  m_interned[std::move(hash)] = c;
  return c;
}

size_t AppContext::resource_count() const {
  size_t n = 0;
  for (const auto& a : apps)
    for (const auto& c : a.clusters) {
      n += c.resources.size();
      for (const auto& g : c.hooks) n += g.resources.size();
    }
  return n;
}

}  // namespace emco::appcontext
