// Which APIs each Kubernetes release serves. The 1.32 set is core/k8s's
// table of built-in types; this file adds when those appeared (where later
// than 1.22) and the older or extra group versions with the releases that
// served them, following the upstream deprecation guide
// (kubernetes.io/docs/reference/using-api/deprecation-guide/).

#include "sim/versions.hpp"

#include <algorithm>
#include <array>
#include <mutex>

#include "core/util/error.hpp"

namespace emco::sim::detail {

namespace {

struct Served {
  k8s::ResourceType type;
  int since = k_oldest_minor;  // first minor serving it
  int until = k_newest_minor;  // last minor serving it
};

k8s::ResourceType type(std::string group, std::string version, std::string kind, std::string resource,
                       bool namespaced, std::vector<std::string> short_names, std::vector<std::string> subresources,
                       bool generation, std::vector<std::string> categories = {}) {
  return k8s::resource_type(std::move(group), std::move(version), std::move(kind), std::move(resource), namespaced,
                            std::move(short_names), std::move(subresources), generation, std::move(categories));
}

constexpr bool ns = true, cluster = false, gen = true, no_gen = false;

// Types of the 1.32 table that newer releases added after 1.22.
struct Since {
  const char* group;
  const char* version;
  const char* kind;
  int since;
};
const Since k_added[] = {
    {"autoscaling", "v2", "HorizontalPodAutoscaler", 23},
    {"authentication.k8s.io", "v1", "SelfSubjectReview", 28},
};

// Group versions beyond the 1.32 table, oldest removals first within a group.
std::vector<Served> extra_types() {
  const std::vector<std::string> st{"status"};
  const std::vector<std::string> all{"all"};
  auto hpa = [&](const char* v, int since, int until) {
    return Served{type("autoscaling", v, "HorizontalPodAutoscaler", "horizontalpodautoscalers", ns, {"hpa"}, st,
                       no_gen, all),
                  since, until};
  };
  auto flow = [&](const char* v, int since, int until) {
    return std::vector<Served>{
        {type("flowcontrol.apiserver.k8s.io", v, "FlowSchema", "flowschemas", cluster, {}, st, gen), since, until},
        {type("flowcontrol.apiserver.k8s.io", v, "PriorityLevelConfiguration", "prioritylevelconfigurations",
              cluster, {}, st, gen),
         since, until}};
  };
  std::vector<Served> out = {
      // admissionregistration.k8s.io: ValidatingAdmissionPolicy went GA in 1.30.
      {type("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies",
            cluster, {}, st, gen, {"api-extensions"}),
       30},
      {type("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings", cluster, {}, {}, gen, {"api-extensions"}),
       30},
      // apiregistration.k8s.io
      {type("apiregistration.k8s.io", "v1", "APIService", "apiservices", cluster, {}, st, no_gen,
            {"api-extensions"})},
      // autoscaling: v1 always; v2beta1 until 1.24, v2beta2 until 1.25.
      hpa("v1", k_oldest_minor, k_newest_minor),
      hpa("v2beta2", k_oldest_minor, 25),
      hpa("v2beta1", k_oldest_minor, 24),
      // batch/v1beta1 CronJob until 1.24.
      {type("batch", "v1beta1", "CronJob", "cronjobs", ns, {"cj"}, st, gen, all), k_oldest_minor, 24},
      // discovery.k8s.io/v1beta1 EndpointSlice until 1.24.
      {type("discovery.k8s.io", "v1beta1", "EndpointSlice", "endpointslices", ns, {}, {}, no_gen), k_oldest_minor,
       24},
      // events.k8s.io: v1 always, v1beta1 until 1.24.
      {type("events.k8s.io", "v1", "Event", "events", ns, {"ev"}, {}, no_gen)},
      {type("events.k8s.io", "v1beta1", "Event", "events", ns, {"ev"}, {}, no_gen), k_oldest_minor, 24},
      // node.k8s.io: RuntimeClass v1 always, v1beta1 until 1.24.
      {type("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", cluster, {}, {}, no_gen)},
      {type("node.k8s.io", "v1beta1", "RuntimeClass", "runtimeclasses", cluster, {}, {}, no_gen), k_oldest_minor,
       24},
      // policy/v1beta1: PodDisruptionBudget and PodSecurityPolicy until 1.24.
      {type("policy", "v1beta1", "PodDisruptionBudget", "poddisruptionbudgets", ns, {"pdb"}, st, gen),
       k_oldest_minor, 24},
      {type("policy", "v1beta1", "PodSecurityPolicy", "podsecuritypolicies", cluster, {"psp"}, {}, no_gen),
       k_oldest_minor, 24},
      // storage.k8s.io: CSIStorageCapacity v1 from 1.24, v1beta1 until 1.26.
      {type("storage.k8s.io", "v1", "CSIDriver", "csidrivers", cluster, {}, {}, no_gen)},
      {type("storage.k8s.io", "v1", "CSINode", "csinodes", cluster, {}, {}, no_gen)},
      {type("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", ns, {}, {}, no_gen), 24},
      {type("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", cluster, {}, st, no_gen)},
      {type("storage.k8s.io", "v1beta1", "CSIStorageCapacity", "csistoragecapacities", ns, {}, {}, no_gen),
       k_oldest_minor, 26},
  };
  // flowcontrol.apiserver.k8s.io: v1beta1 until 1.25, v1beta2 1.23–1.28,
  // v1beta3 1.26–1.31, v1 from 1.29 (newest first: the preferred one).
  for (auto&& v : {flow("v1", 29, k_newest_minor), flow("v1beta3", 26, 31), flow("v1beta2", 23, 28),
                   flow("v1beta1", k_oldest_minor, 25)})
    out.insert(out.end(), v.begin(), v.end());
  return out;
}

std::vector<Served> all_served() {
  std::vector<Served> out;
  for (const auto& t : k8s::builtin_resources()) {
    Served s{t};
    for (const auto& a : k_added)
      if (t.group == a.group && t.version == a.version && t.kind == a.kind) s.since = a.since;
    out.push_back(std::move(s));
  }
  for (auto& s : extra_types()) out.push_back(std::move(s));
  // Discovery lists a group's versions together, in table order: gather
  // each group's entries behind its first one (stable for the rest).
  std::vector<Served> grouped;
  std::vector<std::string> groups;
  for (const auto& s : out)
    if (std::find(groups.begin(), groups.end(), s.type.group) == groups.end()) groups.push_back(s.type.group);
  for (const auto& g : groups)
    for (const auto& s : out)
      if (s.type.group == g) grouped.push_back(s);
  return grouped;
}

void check(int minor) {
  if (minor < k_oldest_minor || minor > k_newest_minor)
    fail(ErrorKind::invalid,
         "the simulator serves Kubernetes 1." + std::to_string(k_oldest_minor) + " to 1." +
             std::to_string(k_newest_minor) + ", not 1." + std::to_string(minor));
}

}  // namespace

const Release& release(int minor) {
  check(minor);
  static const std::array<Release, k_newest_minor - k_oldest_minor + 1> releases = {{
      {22, 17, "go1.16.15"},
      {23, 17, "go1.19.4"},
      {24, 17, "go1.20.10"},
      {25, 16, "go1.20.10"},
      {26, 15, "go1.21.8"},
      {27, 16, "go1.22.5"},
      {28, 15, "go1.22.8"},
      {29, 15, "go1.23.6"},
      {30, 14, "go1.23.8"},
      {31, 9, "go1.23.8"},
      {32, 4, "go1.23.8"},
  }};
  return releases[static_cast<size_t>(minor - k_oldest_minor)];
}

const std::vector<k8s::ResourceType>& served_types(int minor) {
  check(minor);
  static std::once_flag once;
  static std::array<std::vector<k8s::ResourceType>, k_newest_minor - k_oldest_minor + 1> by_minor;
  std::call_once(once, [] {
    for (const auto& s : all_served())
      for (int m = s.since; m <= s.until; ++m) by_minor[static_cast<size_t>(m - k_oldest_minor)].push_back(s.type);
  });
  return by_minor[static_cast<size_t>(minor - k_oldest_minor)];
}

}  // namespace emco::sim::detail
