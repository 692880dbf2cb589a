#include "core/appcontext/diff.hpp"

#include <algorithm>
#include <set>

namespace emco::appcontext {

namespace {

// Resource name → hash in a cluster, main list then hooks, in order.
std::vector<std::pair<std::string, const std::string*>> entries(const Cluster& c) {
  std::vector<std::pair<std::string, const std::string*>> out;
  for (const auto& r : c.resources) out.emplace_back(r.name, &r.content->hash);
  for (const auto& g : c.hooks)
    for (const auto& r : g.resources) out.emplace_back(r.name, &r.content->hash);
  return out;
}

ClusterDiff diff_cluster(const std::string& app, const std::string& name, const Cluster* o, const Cluster* n) {
  ClusterDiff d;
  d.app = app;
  d.cluster = name;
  d.presence = !o ? ClusterDiff::Presence::added : !n ? ClusterDiff::Presence::removed : ClusterDiff::Presence::both;
  d.old_cluster = o;
  d.new_cluster = n;
  std::unordered_map<std::string, const std::string*> old_hashes;
  if (o)
    for (auto& [k, h] : entries(*o)) old_hashes[k] = h;
  std::set<std::string> seen;
  if (n) {
    for (auto& [k, h] : entries(*n)) {
      seen.insert(k);
      auto it = old_hashes.find(k);
      if (it == old_hashes.end())
        d.added.push_back(k);
      else if (*it->second != *h)
        d.changed.push_back(k);
      else
        d.unchanged.push_back(k);
    }
  }
  if (o)
    for (auto& [k, h] : entries(*o))
      if (!seen.count(k)) d.removed.push_back(k);
  return d;
}

void diff_app(std::vector<ClusterDiff>& out, const std::string& name, const App* o, const App* n) {
  if (o && n && !o->plan_digest.empty() && o->plan_digest == n->plan_digest) return;
  // Cluster name → (old, new), by name.
  std::map<std::string_view, std::pair<const Cluster*, const Cluster*>> clusters;
  if (o)
    for (const auto& c : o->clusters) clusters[c.name].first = &c;
  if (n)
    for (const auto& c : n->clusters) clusters[c.name].second = &c;
  for (const auto& [c, pair] : clusters) out.push_back(diff_cluster(name, std::string(c), pair.first, pair.second));
}

}  // namespace

std::vector<ClusterDiff> diff(const AppContext& old_ctx, const AppContext& new_ctx) {
  std::vector<ClusterDiff> out;
  for (const auto& a : new_ctx.apps) diff_app(out, a.name, old_ctx.find_app(a.name), &a);
  for (const auto& a : old_ctx.apps)
    if (!new_ctx.find_app(a.name)) diff_app(out, a.name, &a, nullptr);
  return out;
}

}  // namespace emco::appcontext
