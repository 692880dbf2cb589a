#include "plugins/dtc/dtc.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/plan/object.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::plugins::dtc {

using nlohmann::json;

void Dtc::add(const std::string& name, std::unique_ptr<SubController> sub) { m_subs[name] = std::move(sub); }

std::vector<std::string> registered_subcontrollers(const store::Store& st) {
  struct Registered {
    std::string name;
    long priority;
  };
  std::vector<Registered> subs;
  for (const auto& r : st.list(resource::kind("dtcController"))) {
    json spec = json::parse(r.data).value("spec", json::object());
    subs.push_back({r.key.parts.back().second, spec.value("priority", 0L)});
  }
  // Listed by name, so a stable sort leaves equal priorities in name order.
  std::stable_sort(subs.begin(), subs.end(), [](const Registered& a, const Registered& b) { return a.priority > b.priority; });
  std::vector<std::string> out;
  for (const auto& s : subs) out.push_back(s.name);
  return out;
}

void Dtc::update(const controllers::Call& call, appcontext::AppContext& ctx) const {
  auto subs = registered_subcontrollers(call.store);
  if (subs.empty()) return;  // upstream: no sub-controller, nothing happens
  TrafficGroup tg = load(call);
  std::vector<Error> errors;
  for (const auto& s : subs) {
    auto it = m_subs.find(s);
    if (it == m_subs.end()) {
      std::vector<std::string> known;
      for (const auto& [name, impl] : m_subs) known.push_back(name);
      errors.emplace_back(ErrorKind::invalid,
                          "dtc sub-controller '" + s + "' (dtc-controllers/" + s + ") has no implementation built into emco",
                          "remove its registration; built-in dtc sub-controllers: " + join(known, ", "));
      continue;
    }
    try {
      it->second->update(tg, call, ctx);
    } catch (const Error& e) {
      errors.push_back(e.with_context("sub-controller '" + s + "'"));
    }
  }
  if (errors.empty()) return;
  std::string message = errors.front().message();
  for (size_t i = 1; i < errors.size(); ++i) message += "; " + errors[i].message();
  fail(errors.front().kind(), message, errors.front().hint());
}

appcontext::App& app_of(appcontext::AppContext& ctx, const std::string& app, const std::string& where) {
  appcontext::App* a = ctx.find_app(app);
  if (!a)
    fail(ErrorKind::invalid, where + ": app '" + app + "' is not part of the composite app",
         "name an app of the composite app");
  return *a;
}

void put_object(appcontext::AppContext& ctx, appcontext::Cluster& cluster, const std::string& key, const json& object) {
  cluster.put({key, ctx.intern(controllers::object_yaml(object))});
}

std::pair<std::string, std::string> split_cluster(const std::string& cluster) {
  auto plus = cluster.find('+');
  return {cluster.substr(0, plus), cluster.substr(plus + 1)};
}

}  // namespace emco::plugins::dtc
