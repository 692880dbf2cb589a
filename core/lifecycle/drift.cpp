// Drift detection and repair (drift.hpp): the running revision's objects read
// back through the delivery Targets, compared field by field with the plan
// by the managed-fields code (core/k8s), clusters in parallel.

#include "core/lifecycle/drift.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/k8s/managed_fields.hpp"
#include "core/k8s/schema.hpp"
#include "core/k8s/yaml.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/plan/object.hpp"
#include "core/plan/plan.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/parallel.hpp"
#include "core/util/strings.hpp"

namespace emco::lifecycle::drift {

using nlohmann::json;
namespace ac = emco::appcontext;

namespace {

constexpr const char* k_repairs_meta = "drift.repairs";
constexpr const char* k_deployment_label = "emco/deployment-id";  // core/plan's label on every object

// The intent as the API server takes it: list-map keys defaulted, a Secret's
// stringData folded into data (the server stores only data).
json prepared(json intent, const k8s::Schema& schema) {
  if (intent.value("kind", "") == "Secret" && intent.contains("stringData") && intent["stringData"].is_object()) {
    if (!intent.contains("data") || !intent["data"].is_object()) intent["data"] = json::object();
    for (const auto& [k, v] : intent["stringData"].items())
      if (v.is_string()) intent["data"][k] = base64_encode(v.get<std::string>());
    intent.erase("stringData");
  }
  k8s::default_list_keys(intent, schema);
  return intent;
}

const k8s::Schema& schema_of(const json& object) {
  return k8s::Schema::for_kind(controllers::api_group(object.value("apiVersion", "")), object.value("kind", ""));
}

std::vector<Field> fields_of(const json& intent, const json& live) {
  std::vector<Field> out;
  for (auto& d : k8s::drifted_fields(live, intent, schema_of(intent)))
    out.push_back({std::move(d.path), std::move(d.manager), std::move(d.operation), std::move(d.time),
                   std::move(d.planned), std::move(d.live)});
  return out;
}

struct Planned {
  std::string app;
  const ac::Resource* resource;
};

// One parsed intent per distinct manifest (a fleet shares most of them).
struct Intent {
  json object;  // prepared(); null when the manifest is not one object
  std::string api_version, kind, name;
};

std::string meta_value(const ac::AppContext& c, const char* name) {
  auto it = c.meta.find(name);
  return it == c.meta.end() ? std::string() : it->second;
}

// Each repository's staged steps against its files (Batch::drifted), on
// this thread; a repository that cannot be read fails its clusters.
void compare_repositories(const std::vector<std::string>& names, const std::vector<std::shared_ptr<sync::Target>>& batching,
                          std::vector<ClusterResult>& results, std::vector<std::vector<Object>>& found,
                          std::chrono::seconds timeout) {
  std::map<sync::Batch*, std::vector<size_t>> clusters_of;
  for (size_t i = 0; i < names.size(); ++i)
    if (batching[i]) clusters_of[batching[i]->batch()].push_back(i);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < names.size(); ++i) index[names[i]] = i;
  for (const auto& [batch, clusters] : clusters_of) {
    try {
      for (auto& d : batch->drifted(std::chrono::steady_clock::now() + timeout)) {
        auto it = index.find(d.cluster);
        if (it == index.end()) continue;
        Object o{d.app, d.cluster, d.resource, d.deleted ? Kind::deleted : Kind::changed, {}, {}, d.where};
        found[it->second].push_back(std::move(o));
      }
    } catch (const sync::TargetError& e) {
      for (size_t i : clusters) {
        results[i].reachable = false;
        results[i].unreachable = e.unreachable();
        results[i].error = e.message();
        results[i].objects = 0;
        found[i].clear();
      }
    }
  }
}

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::changed:
      return "changed";
    case Kind::deleted:
      return "deleted";
    case Kind::extra:
      return "extra";
  }
  return "";
}

bool Report::unreachable() const {
  return std::any_of(clusters.begin(), clusters.end(), [](const ClusterResult& c) { return !c.reachable; });
}

std::vector<Field> compare(std::string_view planned, std::string_view live) {
  json intent = k8s::parse_json_or_yaml(planned);
  if (!intent.is_object()) fail(ErrorKind::invalid, "the planned manifest is not one object");
  json live_object = live.empty() ? json() : json::parse(live);
  const k8s::Schema& schema = schema_of(intent);
  return fields_of(prepared(std::move(intent), schema), live_object);
}

Report check(store::Store& st, const Runtime& runtime, const resource::Key& dig, const Options& options) {
  const auto& k = resource::kind("deploymentIntentGroup");
  if (!st.get(dig)) fail(ErrorKind::not_found, store::describe(k, dig) + " does not exist");
  Report report;
  auto running = plan::running_context(st, dig);
  if (!running) return report;
  ac::AppContext c = ac::load(st, *running);
  for (const auto& a : options.apps)
    if (!c.find_app(a)) fail(ErrorKind::not_found, "app '" + a + "' is not part of " + store::describe(k, dig));
  report.context = c.id;
  report.status_context = c.status_id();
  report.revision = c.revision;
  const std::string ns = meta_value(c, "Namespace");
  sync::TargetFactory factory = options.factory ? options.factory : cluster_targets(st, c.id, &runtime, true);

  // Every planned object by cluster (main resources: hooks run and go), and
  // each distinct manifest parsed once.
  std::map<std::string, std::vector<Planned>> by_cluster;
  std::map<std::string, Intent> intents;  // by content hash
  std::set<std::string> label_values;     // emco/deployment-id of this DIG's apps
  for (const auto& a : c.apps) {
    label_values.insert(report.status_context + "-" + a.name);
    if (!selected(options.apps, a.name)) continue;
    for (const auto& cl : a.clusters) {
      if (!selected(options.clusters, cl.name)) continue;
      auto& list = by_cluster[cl.name];
      for (const auto& r : cl.resources) {
        list.push_back({a.name, &r});
        auto [it, fresh] = intents.try_emplace(r.hash());
        if (!fresh) continue;
        try {
          json o = k8s::parse_json_or_yaml(r.text());
          if (!o.is_object()) continue;
          it->second.api_version = o.value("apiVersion", "");
          it->second.kind = o.value("kind", "");
          it->second.name = o.value("metadata", json::object()).value("name", "");
          it->second.object = prepared(std::move(o), k8s::Schema::for_kind(controllers::api_group(it->second.api_version), it->second.kind));
        } catch (const Error&) {
          // Delivery failed it the same way; nothing on the cluster to compare.
        }
      }
    }
  }

  std::vector<std::string> names;
  for (const auto& [name, list] : by_cluster) names.push_back(name);
  report.clusters.resize(names.size());
  std::vector<std::vector<Object>> found(names.size());
  // GitOps clusters: their targets (which keep the repository's batch) by cluster.
  std::vector<std::shared_ptr<sync::Target>> batching(names.size());
  parallel_for(names.size(), static_cast<size_t>(std::max(1, options.parallel)), [&](size_t i) {
    const std::string& cluster = names[i];
    ClusterResult& result = report.clusters[i];
    result.cluster = cluster;
    std::vector<Object>& out = found[i];
    const auto& planned = by_cluster.at(cluster);
    auto failed = [&](bool unreachable, const std::string& message) {
      result.reachable = false;
      result.unreachable = unreachable;
      result.error = message;
      result.objects = 0;
      out.clear();
    };
    std::shared_ptr<sync::Target> target;
    try {
      target = factory(cluster, ns);
    } catch (const Error& e) {
      return failed(e.kind() == ErrorKind::unreachable, e.message());
    }
    if (sync::Batch* batch = target->batch()) {
      // Compared in the repository once every cluster's steps are staged.
      try {
        for (const auto& p : planned) {
          if (intents.at(p.resource->hash()).object.is_null()) continue;
          batch->stage({p.app, cluster, p.resource->name, p.resource->text(), false});
          ++result.objects;
        }
      } catch (const sync::TargetError& e) {
        return failed(e.unreachable(), e.message());
      }
      batching[i] = target;
      return;
    }
    try {
      for (const auto& p : planned) {
        const Intent& intent = intents.at(p.resource->hash());
        if (intent.object.is_null()) continue;
        ++result.objects;
        std::string live = target->read(p.resource->text());
        Object o{p.app, cluster, p.resource->name, Kind::deleted, {}, p.resource->text()};
        if (!live.empty()) {
          o.fields = fields_of(intent.object, json::parse(live));
          if (o.fields.empty()) continue;
          o.kind = Kind::changed;
        }
        out.push_back(std::move(o));
      }
      if (!options.extra) return;
      // Objects of the kinds planned here that carry this DIG's label and
      // are not planned (for their app).
      std::set<std::pair<std::string, std::string>> kinds;         // apiVersion, kind
      std::set<std::tuple<std::string, std::string, std::string>> known;  // app, kind, name
      for (const auto& p : planned) {
        const Intent& intent = intents.at(p.resource->hash());
        if (intent.object.is_null()) continue;
        kinds.emplace(intent.api_version, intent.kind);
        known.emplace(p.app, intent.kind, intent.name);
      }
      for (const auto& [api_version, kind] : kinds) {
        json items = json::parse(target->list(api_version, kind, ""));
        for (const auto& item : items) {
          const json meta = item.value("metadata", json::object());
          std::string label = meta.value("labels", json::object()).value(k_deployment_label, "");
          if (!label_values.count(label)) continue;
          std::string app = label.substr(report.status_context.size() + 1);
          if (!selected(options.apps, app)) continue;
          std::string name = meta.value("name", "");
          if (known.count({app, kind, name})) continue;
          json shown = item;
          shown["apiVersion"] = api_version;
          shown["kind"] = kind;
          out.push_back({app, cluster, name + "+" + kind, Kind::extra, {}, shown.dump()});
        }
      }
    } catch (const sync::TargetError& e) {
      failed(e.unreachable(), e.message());
    } catch (const json::exception& e) {
      failed(false, std::string("cannot read the live objects: ") + e.what());
    }
  });
  compare_repositories(names, batching, report.clusters, found, options.timeout);
  for (size_t i = 0; i < names.size(); ++i)
    for (auto& o : found[i])
      if (!o.where.empty())  // GitOps: the planned manifest, for a repair
        for (const auto& p : by_cluster.at(names[i]))
          if (p.app == o.app && p.resource->name == o.resource) o.manifest = p.resource->text();
  for (auto& list : found)
    for (auto& o : list) report.objects.push_back(std::move(o));
  std::stable_sort(report.objects.begin(), report.objects.end(), [](const Object& a, const Object& b) {
    return std::tie(a.app, a.cluster) < std::tie(b.app, b.cluster);
  });
  return report;
}

RepairResult repair(store::Store& st, const Runtime& runtime, const Report& report,
                    const Options& options, bool prune_extra, Clock& clock) {
  RepairResult result;
  if (report.context.empty() || !report.drift()) return result;
  ac::Header h = ac::header(st, report.context);
  auto ns_it = h.meta.find("Namespace");
  const std::string ns = ns_it == h.meta.end() ? "" : ns_it->second;
  sync::TargetFactory factory =
      options.factory ? options.factory : cluster_targets(st, report.context, &runtime, true);

  std::map<std::string, std::vector<const Object*>> by_cluster;
  for (const auto& o : report.objects)
    if (o.kind != Kind::extra || prune_extra) by_cluster[o.cluster].push_back(&o);
  std::vector<std::string> names;
  for (const auto& [name, list] : by_cluster) names.push_back(name);
  std::mutex mutex;
  json repaired = json::array();
  std::vector<std::pair<std::shared_ptr<sync::Target>, const std::vector<const Object*>*>> batching;  // GitOps clusters
  parallel_for(names.size(), static_cast<size_t>(std::max(1, options.parallel)), [&](size_t i) {
    const auto& list = by_cluster.at(names[i]);
    auto fail_all = [&](size_t from, const std::string& why) {
      std::lock_guard lock(mutex);
      for (size_t j = from; j < list.size(); ++j)
        result.failures.push_back(list[j]->app + " " + list[j]->cluster + " " + list[j]->resource + ": " + why);
    };
    std::shared_ptr<sync::Target> target;
    try {
      target = factory(names[i], ns);
    } catch (const Error& e) {
      return fail_all(0, e.message());
    }
    if (sync::Batch* batch = target->batch()) {
      // The planned content goes back in one commit per repository, below.
      try {
        for (const Object* o : list)
          if (o->kind != Kind::extra) batch->stage({o->app, o->cluster, o->resource, o->manifest, false});
      } catch (const sync::TargetError& e) {
        return fail_all(0, e.message());
      }
      std::lock_guard lock(mutex);
      batching.emplace_back(target, &list);
      return;
    }
    for (size_t j = 0; j < list.size(); ++j) {
      const Object& o = *list[j];
      try {
        if (o.kind == Kind::extra) target->remove(o.manifest);
        else target->apply(o.manifest, false);  // server-side apply, emco's fields forced
      } catch (const sync::TargetError& e) {
        if (e.unreachable()) return fail_all(j, e.message());
        std::lock_guard lock(mutex);
        result.failures.push_back(o.app + " " + o.cluster + " " + o.resource + ": " + e.message());
        continue;
      }
      std::lock_guard lock(mutex);
      (o.kind == Kind::extra ? result.pruned : o.kind == Kind::deleted ? result.recreated : result.reapplied)++;
      repaired.push_back({{"app", o.app}, {"cluster", o.cluster}, {"resource", o.resource}, {"drift", kind_name(o.kind)}});
    }
  });

  std::map<sync::Batch*, std::vector<const std::vector<const Object*>*>> repositories;
  for (const auto& [target, list] : batching) repositories[target->batch()].push_back(list);
  for (const auto& [batch, lists] : repositories) {
    std::string note;
    try {
      note = batch->commit(std::chrono::steady_clock::now() + options.timeout);
    } catch (const sync::TargetError& e) {
      for (const auto* list : lists)
        for (const Object* o : *list)
          if (o->kind != Kind::extra) result.failures.push_back(o->app + " " + o->cluster + " " + o->resource + ": " + e.message());
      continue;
    }
    for (const auto* list : lists)
      for (const Object* o : *list) {
        if (o->kind == Kind::extra) {
          result.failures.push_back(o->app + " " + o->cluster + " " + o->resource +
                                    ": extra objects are not pruned from GitOps repositories");
          continue;
        }
        (o->kind == Kind::deleted ? result.recreated : result.reapplied)++;
        repaired.push_back({{"app", o->app}, {"cluster", o->cluster}, {"resource", o->resource},
                            {"drift", kind_name(o->kind)}, {"note", note}});
      }
  }

  json entry = {{"time", clock.now_rfc3339()}, {"repaired", repaired}};
  if (!result.failures.empty()) entry["failures"] = result.failures;
  st.write([&] {
    auto current = ac::header(st, report.context).meta;
    auto it = current.find(k_repairs_meta);
    json log = it == current.end() ? json::array() : json::parse(it->second, nullptr, false);
    if (!log.is_array()) log = json::array();
    log.push_back(entry);
    ac::set_meta(st, report.context, k_repairs_meta, log.dump());
  });
  return result;
}

json repair_log(store::Store& st, const std::optional<std::string>& running) {
  if (!running) return json::array();
  const auto field = ac::meta_field(st, *running, k_repairs_meta);
  if (!field) return json::array();
  json log = json::parse(*field, nullptr, false);
  return log.is_array() ? log : json::array();
}

json to_json(const Report& report) {
  auto value = [](const std::string& text) { return text.empty() ? json() : json::parse(text, nullptr, false); };
  json out = {{"context", report.context.empty() ? json() : json(report.context)},
              {"revision", report.revision},
              {"drift", report.drift()},
              {"clusters", json::array()},
              {"objects", json::array()}};
  for (const auto& c : report.clusters) {
    json j = {{"cluster", c.cluster}, {"objects", c.objects}, {"reachable", c.reachable}};
    if (!c.reachable) {
      j["error"] = c.error;
      j["unreachable"] = c.unreachable;
    }
    out["clusters"].push_back(std::move(j));
  }
  for (const auto& o : report.objects) {
    json j = {{"app", o.app}, {"cluster", o.cluster}, {"resource", o.resource}, {"drift", kind_name(o.kind)}};
    if (!o.where.empty()) j["file"] = o.where;
    if (o.kind == Kind::changed && o.where.empty()) {
      j["fields"] = json::array();
      for (const auto& f : o.fields)
        j["fields"].push_back({{"path", f.path}, {"manager", f.manager}, {"operation", f.operation}, {"time", f.time},
                               {"planned", value(f.planned)}, {"live", value(f.live)}});
    }
    out["objects"].push_back(std::move(j));
  }
  return out;
}

}  // namespace emco::lifecycle::drift
