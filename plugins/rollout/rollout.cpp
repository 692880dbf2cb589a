// Rollout strategies (plugin.hpp): the kind, its check, and the
// RolloutSource that reads a DIG's strategy.

#include "plugins/rollout/plugin.hpp"

#include <cctype>

#include <nlohmann/json.hpp>

#include "core/store/store.hpp"
#include "core/util/error.hpp"
#include "core/util/go_duration.hpp"

namespace emco::plugins::rollout {

using nlohmann::json;
using resource::Key;
namespace ro = emco::lifecycle::rollout;

namespace {

constexpr const char* k_kind = "rolloutStrategy";

// "3", 3 or "25%".
ro::Amount amount(const json& v, const std::string& field, bool allow_zero) {
  ro::Amount a;
  std::string text = v.is_string() ? v.get<std::string>() : v.is_number_integer() ? std::to_string(v.get<long long>()) : "";
  if (!text.empty() && text.back() == '%') {
    a.percent = true;
    text.pop_back();
  }
  bool digits = !text.empty() && text.size() <= 9;
  for (char c : text) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (digits) a.value = std::stoll(text);
  if (!digits || (a.percent && a.value > 100) || (!allow_zero && a.value == 0))
    fail(ErrorKind::invalid, "spec." + field + " " + v.dump() + " is not a " + (allow_zero ? "" : "positive ") +
                                 "count of clusters or a percentage",
         "e.g. " + field + ": 3 or " + field + ": 25%");
  return a;
}

std::chrono::milliseconds duration(const json& spec, const std::string& field, std::chrono::milliseconds dflt) {
  if (!spec.contains(field)) return dflt;
  std::int64_t ns = 0;
  const std::string text = spec[field].is_string() ? spec[field].get<std::string>() : "";
  if (!parse_go_duration(text, ns) || ns < 0)
    fail(ErrorKind::invalid, "spec." + field + " " + spec[field].dump() + " is not a Go duration", "e.g. 30s, 5m, 1h30m");
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(ns));
}

ro::Strategy parse(const store::Resource& r) {
  const json spec = json::parse(r.data).value("spec", json::object());
  ro::Strategy s;
  s.name = r.key.parts.back().second;
  int ways = 0;
  if (spec.contains("waves")) {
    ++ways;
    s.waves = spec["waves"].get<size_t>();
  }
  if (spec.contains("waveSize")) {
    ++ways;
    s.wave_size = amount(spec["waveSize"], "waveSize", false);
  }
  if (spec.contains("groups")) {
    ++ways;
    for (const auto& g : spec["groups"]) s.groups.push_back(g.get<std::string>());
    if (s.groups.empty()) fail(ErrorKind::invalid, "spec.groups is empty", "name the cluster labels, in rollout order");
  }
  if (ways > 1)
    fail(ErrorKind::invalid, "a rollout strategy splits the clusters one way: spec.waves, spec.waveSize or spec.groups",
         "keep one of them");
  if (spec.contains("maxConcurrency")) s.max_concurrency = amount(spec["maxConcurrency"], "maxConcurrency", false);
  if (spec.contains("maxUnavailable")) s.max_unavailable = amount(spec["maxUnavailable"], "maxUnavailable", false);
  if (spec.contains("maxFailures")) s.max_failures = amount(spec["maxFailures"], "maxFailures", true);
  s.min_success = duration(spec, "minSuccessTime", s.min_success);
  s.progress_deadline = duration(spec, "progressDeadline", s.progress_deadline);
  if (s.progress_deadline.count() == 0)
    fail(ErrorKind::invalid, "spec.progressDeadline must be longer than 0", "e.g. progressDeadline: 10m");
  s.rollback_on_failure = spec.value("rollbackOnFailure", false);
  return s;
}

class Strategies : public lifecycle::RolloutSource {
public:
  std::optional<ro::Strategy> strategy(const store::Store& st, const Key& dig) const override {
    auto found = st.list(resource::kind(k_kind), dig);
    if (found.empty()) return std::nullopt;
    const auto& k = resource::kind(k_kind);
    if (found.size() > 1)
      fail(ErrorKind::invalid,
           store::describe(resource::kind("deploymentIntentGroup"), dig) + " has " + std::to_string(found.size()) +
               " rollout strategies ('" + found[0].key.parts.back().second + "', '" + found[1].key.parts.back().second +
               "'); it can follow one",
           "delete the others: 'emco delete " + resource::resource_anchor(k, found[1].key) + "'");
    try {
      return parse(found.front());
    } catch (const Error& e) {
      throw e.with_context(store::describe(k, found.front().key));
    }
  }
};

void check(const store::Store&, const store::Resource& r) { parse(r); }

}  // namespace

void install(lifecycle::Runtime& runtime) {
  using namespace emco::resource;
  runtime.kinds.push_back({.id = k_kind,
                           .parent = "deploymentIntentGroup",
                           .elements = {k_kind},
                           .collection = "emco-rollout-strategies",
                           .service = "emco",
                           .display = "rollout strategy",
                           .spec = obj({opt("waves", integer(1, 1000000)), opt("waveSize", any()),
                                        opt("groups", array(name_str())), opt("maxConcurrency", any()),
                                        opt("maxUnavailable", any()), opt("maxFailures", any()),
                                        opt("minSuccessTime", str()), opt("progressDeadline", str()),
                                        opt("rollbackOnFailure", boolean())})});
  runtime.checks[k_kind] = {.put = check};
  runtime.rollouts = std::make_unique<Strategies>();
  runtime.plugins.push_back({.name = "rollout",
                             .summary = "rollout strategies: a DIG's instantiate and update delivered in waves of "
                                        "clusters with health gates (an emco extension)",
                             .services = {"emco"},
                             .runs = true});
}

}  // namespace emco::plugins::rollout
