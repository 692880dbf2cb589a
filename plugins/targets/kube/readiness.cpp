#include "plugins/targets/kube/readiness.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace emco::kube {
namespace {

using json = nlohmann::json;

const json& at(const json& j, const char* key) {
  static const json k_null;
  if (!j.is_object()) return k_null;
  auto it = j.find(key);
  return it == j.end() ? k_null : *it;
}

// A JSON number as an integer in [lo, hi]; `fallback` for anything else. A
// broken or hostile server may send any number (1e300, 2^64-1, -5): clamping
// keeps every conversion and the arithmetic below defined.
long long clamped(const json& v, long long fallback, long long lo, long long hi) {
  if (v.is_number_unsigned())
    return v.get<unsigned long long>() > static_cast<unsigned long long>(hi) ? hi : static_cast<long long>(v.get<unsigned long long>());
  if (v.is_number_integer()) return std::clamp(v.get<long long>(), lo, hi);
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isnan(d)) return fallback;
    if (d <= static_cast<double>(lo)) return lo;
    if (d >= static_cast<double>(hi)) return hi;
    return static_cast<long long>(d);
  }
  return fallback;
}

// Counts (replicas, partition, ...) are int32 in the API.
long long num(const json& j, const char* key, long long fallback = 0) {
  return clamped(at(j, key), fallback, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max());
}

std::string str(const json& j, const char* key) {
  const json& v = at(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

bool condition_true(const json& status, const char* type) {
  const json& conds = at(status, "conditions");
  if (!conds.is_array()) return false;
  for (const auto& c : conds)
    if (str(c, "type") == type && str(c, "status") == "True") return true;
  return false;
}

// An intOrString like maxUnavailable against `total` (percentages round down,
// as Kubernetes does for maxUnavailable).
long long scaled(const json& v, long long total, long long fallback) {
  const long long lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
  if (v.is_number_integer()) return clamped(v, fallback, lo, hi);
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (!s.empty() && s.back() == '%') {
      try {
        double d = std::floor(std::stod(s.substr(0, s.size() - 1)) * static_cast<double>(total) / 100.0);
        return std::isfinite(d) ? clamped(json(d), fallback, lo, hi) : fallback;
      } catch (const std::exception&) {
        return fallback;
      }
    }
  }
  return fallback;
}

// The status describes an older spec.
bool stale(const json& obj) {
  const long long lo = std::numeric_limits<long long>::min(), hi = std::numeric_limits<long long>::max();
  long long generation = clamped(at(at(obj, "metadata"), "generation"), 0, lo, hi);
  const json& observed = at(at(obj, "status"), "observedGeneration");
  return observed.is_number() && clamped(observed, 0, lo, hi) < generation;
}

Readiness ok() { return {true, {}}; }
Readiness no(std::string why) { return {false, std::move(why)}; }

Readiness pod(const json& obj) {
  const json& status = at(obj, "status");
  const json& labels = at(at(obj, "metadata"), "labels");
  if (labels.is_object() && labels.contains("job-name")) {
    std::string phase = str(status, "phase");
    return phase == "Succeeded" ? ok() : no("job pod phase is " + (phase.empty() ? "unknown" : phase));
  }
  return condition_true(status, "Ready") ? ok() : no("pod is not Ready");
}

Readiness deployment(const json& obj) {
  const json& spec = at(obj, "spec");
  const json& status = at(obj, "status");
  if (at(spec, "paused").is_boolean() && at(spec, "paused").get<bool>()) return ok();
  if (stale(obj)) return no("status does not reflect the latest generation yet");
  long long replicas = num(spec, "replicas", 1);
  long long max_unavailable = 0;
  const json& strategy = at(spec, "strategy");
  if (str(strategy, "type") != "Recreate") {
    max_unavailable = scaled(at(at(strategy, "rollingUpdate"), "maxUnavailable"), replicas,
                             static_cast<long long>(std::floor(static_cast<double>(replicas) * 0.25)));
  }
  long long ready = num(status, "readyReplicas");
  long long expected = std::max<long long>(replicas - max_unavailable, 0);
  if (ready >= expected) return ok();
  return no(fmt::format("{}/{} replicas ready", ready, replicas));
}

Readiness stateful_set(const json& obj) {
  const json& spec = at(obj, "spec");
  const json& status = at(obj, "status");
  const json& strategy = at(spec, "updateStrategy");
  if (str(strategy, "type") == "OnDelete") return ok();
  if (stale(obj)) return no("status does not reflect the latest generation yet");
  long long replicas = num(spec, "replicas", 1);
  long long partition = num(at(strategy, "rollingUpdate"), "partition", 0);
  long long updated = num(status, "updatedReplicas", num(status, "readyReplicas"));
  long long ready = num(status, "readyReplicas");
  if (updated < replicas - partition) return no(fmt::format("{}/{} replicas updated", updated, replicas - partition));
  if (ready < replicas) return no(fmt::format("{}/{} replicas ready", ready, replicas));
  return ok();
}

Readiness daemon_set(const json& obj) {
  const json& spec = at(obj, "spec");
  const json& status = at(obj, "status");
  const json& strategy = at(spec, "updateStrategy");
  if (str(strategy, "type") == "OnDelete") return ok();
  if (stale(obj)) return no("status does not reflect the latest generation yet");
  long long desired = num(status, "desiredNumberScheduled");
  long long updated = num(status, "updatedNumberScheduled", desired);
  if (updated < desired) return no(fmt::format("{}/{} pods updated", updated, desired));
  long long max_unavailable = scaled(at(at(strategy, "rollingUpdate"), "maxUnavailable"), desired, 1);
  long long ready = num(status, "numberReady");
  if (ready >= desired - max_unavailable) return ok();
  return no(fmt::format("{}/{} pods ready", ready, desired));
}

Readiness job(const json& obj) {
  const json& spec = at(obj, "spec");
  const json& status = at(obj, "status");
  long long backoff_limit = num(spec, "backoffLimit", 6);
  long long failed = num(status, "failed");
  if (failed > backoff_limit) return no(fmt::format("job failed {} times (backoffLimit {})", failed, backoff_limit));
  if (condition_true(status, "Complete")) return ok();
  long long completions = num(spec, "completions", 1);
  long long succeeded = num(status, "succeeded");
  if (succeeded >= completions) return ok();
  return no(fmt::format("{}/{} completions", succeeded, completions));
}

Readiness service(const json& obj) {
  const json& spec = at(obj, "spec");
  std::string type = str(spec, "type");
  if (type == "ExternalName") return ok();
  if (str(spec, "clusterIP").empty()) return no("service has no cluster IP yet");
  if (type == "LoadBalancer") {
    const json& ips = at(spec, "externalIPs");
    const json& ingress = at(at(at(obj, "status"), "loadBalancer"), "ingress");
    bool has_ips = ips.is_array() && !ips.empty();
    bool has_ingress = ingress.is_array() && !ingress.empty();
    if (!has_ips && !has_ingress) return no("load balancer has no ingress yet");
  }
  return ok();
}

}  // namespace

Readiness evaluate_readiness(const json& live) {
  if (!live.is_object()) return no("not present");
  std::string kind = str(live, "kind");
  std::string api_version = str(live, "apiVersion");
  std::string group = api_version.find('/') == std::string::npos ? "" : api_version.substr(0, api_version.find('/'));
  if (group.empty() && kind == "Pod") return pod(live);
  if (group.empty() && kind == "Service") return service(live);
  if (group == "apps" && kind == "Deployment") return deployment(live);
  if (group == "apps" && kind == "StatefulSet") return stateful_set(live);
  if (group == "apps" && kind == "DaemonSet") return daemon_set(live);
  if (group == "batch" && kind == "Job") return job(live);
  return ok();
}

}  // namespace emco::kube
