// Table answers (Accept: application/json;as=Table;v=v1;g=meta.k8s.io):
// the columns the API server's printers (pkg/printers/internalversion)
// give the common kinds, so `kubectl get` prints what it prints against a
// real cluster. Priority-1 columns are the ones `-o wide` adds.

#include <algorithm>
#include <ctime>
#include <functional>
#include <map>

#include "core/util/strings.hpp"
#include "sim/cluster.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

struct Column {
  const char* name;
  const char* type;  // "string" | "integer"
  int priority;
  const char* description;
};

const Column k_name{"Name", "string", 0,
                    "Name must be unique within a namespace. Is required when creating resources, although some "
                    "resources may allow a client to request the generation of an appropriate name automatically. "
                    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
                    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"};
const Column k_age{"Age", "string", 0,
                   "CreationTimestamp is a timestamp representing the server time when this object was created. "
                   "It is not guaranteed to be set in happens-before order across separate operations. Clients may "
                   "not set this value. It is represented in RFC3339 form and is in UTC."};
const Column k_containers{"Containers", "string", 1, "Names of each container in the template."};
const Column k_images{"Images", "string", 1, "Images referenced by each container in the template."};
const Column k_selector{"Selector", "string", 1, "Label selector for pods."};

int64_t parse_rfc3339(const std::string& s) {
  std::tm tm{};
  if (!strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return 0;
  return static_cast<int64_t>(timegm(&tm));
}

// kubectl's duration format (HumanDuration): 45s, 3m20s, 5h, 2d3h, ...
std::string duration(int64_t s) {
  if (s < 0) s = 0;
  if (s < 120) return std::to_string(s) + "s";
  int64_t m = s / 60;
  if (m < 10) return std::to_string(m) + "m" + (s % 60 ? std::to_string(s % 60) + "s" : "");
  if (m < 180) return std::to_string(m) + "m";
  int64_t h = s / 3600;
  if (h < 8) return std::to_string(h) + "h" + (m % 60 ? std::to_string(m % 60) + "m" : "");
  if (h < 48) return std::to_string(h) + "h";
  if (h < 24 * 8) return std::to_string(h / 24) + "d" + (h % 24 ? std::to_string(h % 24) + "h" : "");
  return std::to_string(h / 24) + "d";
}

std::string none_if_empty(const std::string& s) { return s.empty() ? "<none>" : s; }

int64_t num(const json& obj, const json::json_pointer& p) { return obj.value(p, int64_t{0}); }
std::string str(const json& obj, const json::json_pointer& p) { return obj.value(p, std::string()); }

std::string joined(const json& items, const char* field) {
  std::vector<std::string> parts;
  for (const auto& i : items)
    if (i.is_object()) parts.push_back(i.value(field, ""));
  return join(parts, ",");
}

std::string selector(const json& sel) {
  if (!sel.is_object()) return "<none>";
  std::vector<std::string> parts;
  json match = sel.value("matchLabels", json::object());
  for (const auto& [k, v] : match.items())
    parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  for (const auto& e : sel.value("matchExpressions", json::array())) {
    std::string op = e.value("operator", "");
    std::string key = e.value("key", "");
    std::vector<std::string> values;
    for (const auto& v : e.value("values", json::array()))
      if (v.is_string()) values.push_back(v);
    if (op == "Exists")
      parts.push_back(key);
    else if (op == "DoesNotExist")
      parts.push_back("!" + key);
    else
      parts.push_back(key + " " + to_lower(op) + " (" + join(values, ",") + ")");
  }
  return parts.empty() ? "<none>" : join(parts, ",");
}

std::string map_selector(const json& m) {
  if (!m.is_object() || m.empty()) return "<none>";
  std::vector<std::string> parts;
  for (const auto& [k, v] : m.items()) parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  return join(parts, ",");
}

std::string pod_status_reason(const json& pod) {
  std::string reason = str(pod, "/status/phase"_json_pointer);
  if (pod.contains("/status/reason"_json_pointer)) reason = str(pod, "/status/reason"_json_pointer);
  for (const auto& c : pod.value("/status/containerStatuses"_json_pointer, json::array())) {
    if (c.contains("/state/waiting/reason"_json_pointer))
      reason = str(c, "/state/waiting/reason"_json_pointer);
    else if (c.contains("/state/terminated/reason"_json_pointer))
      reason = str(c, "/state/terminated/reason"_json_pointer);
  }
  if (pod["metadata"].contains("deletionTimestamp")) reason = "Terminating";
  return reason;
}

std::string service_ports(const json& svc) {
  std::vector<std::string> parts;
  for (const auto& p : svc.value("/spec/ports"_json_pointer, json::array())) {
    std::string s = std::to_string(p.value("port", 0));
    if (p.contains("nodePort")) s += ":" + std::to_string(p.value("nodePort", 0));
    parts.push_back(s + "/" + p.value("protocol", "TCP"));
  }
  return parts.empty() ? "<none>" : join(parts, ",");
}

std::string external_ip(const json& svc) {
  std::string type = str(svc, "/spec/type"_json_pointer);
  std::vector<std::string> ips;
  for (const auto& ip : svc.value("/spec/externalIPs"_json_pointer, json::array()))
    if (ip.is_string()) ips.push_back(ip);
  if (type == "ExternalName") return str(svc, "/spec/externalName"_json_pointer);
  if (type == "LoadBalancer") {
    for (const auto& i : svc.value("/status/loadBalancer/ingress"_json_pointer, json::array()))
      ips.push_back(i.value("ip", i.value("hostname", "")));
    return ips.empty() ? "<pending>" : join(ips, ",");
  }
  return ips.empty() ? "<none>" : join(ips, ",");
}

struct Printer {
  std::vector<Column> columns;  // between Name and Age unless `age_at` says otherwise
  size_t age_at;                // index of Age among the columns (Name is 0)
  std::function<json(const json& obj, int64_t now_s)> cells;  // the cells after Name, Age left out
};

// The printers by kind; the Age cell is inserted at `age_at`.
const Printer* printer(const std::string& group, const std::string& kind) {
  static const Column ready{"Ready", "string", 0, "Number of the pod with ready state"};
  static const std::map<std::string, Printer> printers = {
      {"/Pod",
       {{{"Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."},
         {"Status", "string", 0, "The aggregate status of the containers in this pod."},
         {"Restarts", "string", 0, "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
         {"IP", "string", 1, "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."},
         {"Node", "string", 1, "NodeName is a request to schedule this pod onto a specific node."},
         {"Nominated Node", "string", 1, "nominatedNodeName is set when this pod preempts other pods on the node."},
         {"Readiness Gates", "string", 1, "If specified, all readiness gates will be evaluated for pod readiness."}},
        4,
        [](const json& o, int64_t) {
          auto statuses = o.value("/status/containerStatuses"_json_pointer, json::array());
          int64_t ready_n = 0, restarts = 0;
          for (const auto& c : statuses) {
            if (c.value("ready", false)) ++ready_n;
            restarts += c.value("restartCount", int64_t{0});
          }
          auto total = o.value("/spec/containers"_json_pointer, json::array()).size();
          return json{std::to_string(ready_n) + "/" + std::to_string(total), pod_status_reason(o),
                      std::to_string(restarts), none_if_empty(str(o, "/status/podIP"_json_pointer)),
                      none_if_empty(str(o, "/spec/nodeName"_json_pointer)), "<none>", "<none>"};
        }}},
      {"apps/Deployment",
       {{{"Ready", "string", 0, "Number of the pod with ready state"},
         {"Up-to-date", "integer", 0, "Total number of non-terminated pods targeted by this deployment that have the desired template spec."},
         {"Available", "integer", 0, "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."},
         k_containers, k_images, k_selector},
        4,
        [](const json& o, int64_t) {
          auto c = o.value("/spec/template/spec/containers"_json_pointer, json::array());
          return json{std::to_string(num(o, "/status/readyReplicas"_json_pointer)) + "/" +
                          std::to_string(o.value("/spec/replicas"_json_pointer, int64_t{1})),
                      num(o, "/status/updatedReplicas"_json_pointer), num(o, "/status/availableReplicas"_json_pointer),
                      joined(c, "name"), joined(c, "image"), selector(o.value("/spec/selector"_json_pointer, json()))};
        }}},
      {"apps/ReplicaSet",
       {{{"Desired", "integer", 0, "Number of desired pods."},
         {"Current", "integer", 0, "Number of actual replicas."},
         {"Ready", "integer", 0, "Number of ready replicas."},
         k_containers, k_images, k_selector},
        4,
        [](const json& o, int64_t) {
          auto c = o.value("/spec/template/spec/containers"_json_pointer, json::array());
          return json{o.value("/spec/replicas"_json_pointer, int64_t{1}), num(o, "/status/replicas"_json_pointer),
                      num(o, "/status/readyReplicas"_json_pointer), joined(c, "name"), joined(c, "image"),
                      selector(o.value("/spec/selector"_json_pointer, json()))};
        }}},
      {"/ReplicationController",
       {{{"Desired", "integer", 0, "Number of desired pods."},
         {"Current", "integer", 0, "Number of actual replicas."},
         {"Ready", "integer", 0, "Number of ready replicas."},
         k_containers, k_images, k_selector},
        4,
        [](const json& o, int64_t) {
          auto c = o.value("/spec/template/spec/containers"_json_pointer, json::array());
          return json{o.value("/spec/replicas"_json_pointer, int64_t{1}), num(o, "/status/replicas"_json_pointer),
                      num(o, "/status/readyReplicas"_json_pointer), joined(c, "name"), joined(c, "image"),
                      map_selector(o.value("/spec/selector"_json_pointer, json()))};
        }}},
      {"apps/StatefulSet",
       {{ready, k_containers, k_images},
        2,
        [](const json& o, int64_t) {
          auto c = o.value("/spec/template/spec/containers"_json_pointer, json::array());
          return json{std::to_string(num(o, "/status/readyReplicas"_json_pointer)) + "/" +
                          std::to_string(o.value("/spec/replicas"_json_pointer, int64_t{1})),
                      joined(c, "name"), joined(c, "image")};
        }}},
      {"apps/DaemonSet",
       {{{"Desired", "integer", 0, "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod)."},
         {"Current", "integer", 0, "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."},
         {"Ready", "integer", 0, "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition."},
         {"Up-to-date", "integer", 0, "The total number of nodes that are running updated daemon pod"},
         {"Available", "integer", 0, "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"},
         {"Node Selector", "string", 0, "NodeSelector is a selector which must be true for the pod to fit on a node."},
         k_containers, k_images, k_selector},
        7,
        [](const json& o, int64_t) {
          auto c = o.value("/spec/template/spec/containers"_json_pointer, json::array());
          return json{num(o, "/status/desiredNumberScheduled"_json_pointer),
                      num(o, "/status/currentNumberScheduled"_json_pointer),
                      num(o, "/status/numberReady"_json_pointer),
                      num(o, "/status/updatedNumberScheduled"_json_pointer),
                      num(o, "/status/numberAvailable"_json_pointer),
                      map_selector(o.value("/spec/template/spec/nodeSelector"_json_pointer, json())),
                      joined(c, "name"),
                      joined(c, "image"),
                      selector(o.value("/spec/selector"_json_pointer, json()))};
        }}},
      {"batch/Job",
       {{{"Status", "string", 0, "Status of the job."},
         {"Completions", "string", 0, "The desired number of successfully finished pods the job should be run with."},
         {"Duration", "string", 0, "Time required to complete the job."},
         k_containers, k_images, k_selector},
        4,
        [](const json& o, int64_t now_s) {
          auto c = o.value("/spec/template/spec/containers"_json_pointer, json::array());
          std::string status = "Running";
          for (const auto& cond : o.value("/status/conditions"_json_pointer, json::array()))
            if (cond.value("status", "") == "True" && (cond.value("type", "") == "Complete" || cond.value("type", "") == "Failed"))
              status = cond.value("type", "");
          if (o.value("/spec/suspend"_json_pointer, false)) status = "Suspended";
          std::string completions = o.contains("/spec/completions"_json_pointer)
                                        ? std::to_string(num(o, "/status/succeeded"_json_pointer)) + "/" +
                                              std::to_string(num(o, "/spec/completions"_json_pointer))
                                        : std::to_string(num(o, "/status/succeeded"_json_pointer)) + "/1 of " +
                                              std::to_string(o.value("/spec/parallelism"_json_pointer, int64_t{1}));
          std::string dur;
          if (auto start = str(o, "/status/startTime"_json_pointer); !start.empty()) {
            auto end = str(o, "/status/completionTime"_json_pointer);
            dur = duration((end.empty() ? now_s : parse_rfc3339(end)) - parse_rfc3339(start));
          }
          return json{status,           completions,        dur,
                      joined(c, "name"), joined(c, "image"), selector(o.value("/spec/selector"_json_pointer, json()))};
        }}},
      {"batch/CronJob",
       {{{"Schedule", "string", 0, "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."},
         {"Timezone", "string", 0, "The time zone name for the given schedule."},
         {"Suspend", "boolean", 0, "This flag tells the controller to suspend subsequent executions."},
         {"Active", "integer", 0, "A list of pointers to currently running jobs."},
         {"Last Schedule", "string", 0, "Information when was the last time the job was successfully scheduled."},
         k_containers, k_images, k_selector},
        6,
        [](const json& o, int64_t) {
          auto c = o.value("/spec/jobTemplate/spec/template/spec/containers"_json_pointer, json::array());
          return json{str(o, "/spec/schedule"_json_pointer),
                      none_if_empty(str(o, "/spec/timeZone"_json_pointer)),
                      o.value("/spec/suspend"_json_pointer, false) ? "True" : "False",
                      o.value("/status/active"_json_pointer, json::array()).size(),
                      "<none>",
                      joined(c, "name"),
                      joined(c, "image"),
                      selector(o.value("/spec/jobTemplate/spec/selector"_json_pointer, json()))};
        }}},
      {"/Service",
       {{{"Type", "string", 0, "type determines how the Service is exposed."},
         {"Cluster-IP", "string", 0, "clusterIP is the IP address of the service and is usually assigned randomly."},
         {"External-IP", "string", 0, "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service."},
         {"Port(s)", "string", 0, "The list of ports that are exposed by this service."},
         {"Selector", "string", 1, "Route service traffic to pods with label keys and values matching this selector."}},
        5,
        [](const json& o, int64_t) {
          return json{str(o, "/spec/type"_json_pointer), none_if_empty(str(o, "/spec/clusterIP"_json_pointer)),
                      external_ip(o), service_ports(o), map_selector(o.value("/spec/selector"_json_pointer, json()))};
        }}},
      {"/ConfigMap",
       {{{"Data", "integer", 0, "Data contains the configuration data."}},
        2,
        [](const json& o, int64_t) {
          return json{o.value("data", json::object()).size() + o.value("binaryData", json::object()).size()};
        }}},
      {"/Secret",
       {{{"Type", "string", 0, "The type of the secret"}, {"Data", "integer", 0, "The number of entries in the secret"}},
        3,
        [](const json& o, int64_t) { return json{o.value("type", "Opaque"), o.value("data", json::object()).size()}; }}},
      {"/Namespace",
       {{{"Status", "string", 0, "The status of the namespace"}},
        2,
        [](const json& o, int64_t) { return json{str(o, "/status/phase"_json_pointer)}; }}},
      {"/ServiceAccount",
       {{{"Secrets", "string", 0, "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use."}},
        2,
        [](const json& o, int64_t) { return json{o.value("secrets", json::array()).size()}; }}},
      {"/Node",
       {{{"Status", "string", 0, "The status of the node"},
         {"Roles", "string", 0, "The roles of the node"},
         {"Version", "string", 0, "Kubelet Version reported by the node."},
         {"Internal-IP", "string", 1, "List of addresses reachable to the node. Queried from cloud provider, if available."},
         {"External-IP", "string", 1, "List of addresses reachable to the node. Queried from cloud provider, if available."},
         {"OS-Image", "string", 1, "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."},
         {"Kernel-Version", "string", 1, "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."},
         {"Container-Runtime", "string", 1, "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2)."}},
        3,
        [](const json& o, int64_t) {
          std::string status = "NotReady";
          for (const auto& c : o.value("/status/conditions"_json_pointer, json::array()))
            if (c.value("type", "") == "Ready" && c.value("status", "") == "True") status = "Ready";
          if (o.value("/spec/unschedulable"_json_pointer, false)) status += ",SchedulingDisabled";
          std::vector<std::string> roles;
          json labels = o["metadata"].value("labels", json::object());
          for (const auto& [k, v] : labels.items())
            if (starts_with(k, "node-role.kubernetes.io/")) roles.push_back(k.substr(24));
          std::string internal, external;
          for (const auto& a : o.value("/status/addresses"_json_pointer, json::array())) {
            if (a.value("type", "") == "InternalIP" && internal.empty()) internal = a.value("address", "");
            if (a.value("type", "") == "ExternalIP" && external.empty()) external = a.value("address", "");
          }
          return json{status,
                      roles.empty() ? "<none>" : join(roles, ","),
                      str(o, "/status/nodeInfo/kubeletVersion"_json_pointer),
                      none_if_empty(internal),
                      none_if_empty(external),
                      none_if_empty(str(o, "/status/nodeInfo/osImage"_json_pointer)),
                      none_if_empty(str(o, "/status/nodeInfo/kernelVersion"_json_pointer)),
                      none_if_empty(str(o, "/status/nodeInfo/containerRuntimeVersion"_json_pointer))};
        }}},
  };
  auto it = printers.find(group + "/" + kind);
  return it == printers.end() ? nullptr : &it->second;
}

std::string age(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 3600 * 3) return std::to_string(seconds / 60) + "m";
  if (seconds < 86400 * 2) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

json column_json(const Column& c, const char* format = "") {
  return {{"name", c.name}, {"type", c.type}, {"format", format}, {"description", c.description}, {"priority", c.priority}};
}

}  // namespace

bool wants_table(const std::string& accept) {
  for (const auto& range : split(accept, ',')) {
    std::string r = range;
    r.erase(std::remove(r.begin(), r.end(), ' '), r.end());
    if (r.find("as=Table") != std::string::npos && r.find("g=meta.k8s.io") != std::string::npos) return true;
  }
  return false;
}

json table(const k8s::ResourceType& type, const std::vector<const json*>& items, const std::string& resource_version,
           int64_t now_s) {
  const Printer* p = printer(type.group, type.kind);
  json columns = json::array();
  columns.push_back(column_json(k_name, "name"));
  size_t age_at = p ? p->age_at : 1;
  if (p)
    for (const auto& c : p->columns) {
      if (columns.size() == age_at) columns.push_back(column_json(k_age));
      columns.push_back(column_json(c));
    }
  if (columns.size() == age_at) columns.push_back(column_json(k_age));
  json rows = json::array();
  for (const json* item : items) {
    json meta = (*item)["metadata"];
    meta.erase("managedFields");
    json cells = {meta.value("name", "")};
    json rest = p ? p->cells(*item, now_s) : json::array();
    std::string created_age = age(now_s - parse_rfc3339(meta.value("creationTimestamp", "")));
    for (size_t i = 0; i <= rest.size(); ++i) {
      if (cells.size() == age_at) cells.push_back(created_age);
      if (i < rest.size()) cells.push_back(rest[i]);
    }
    rows.push_back({{"cells", cells},
                    {"object", {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", meta}}}});
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", resource_version}}},
          {"columnDefinitions", columns},
          {"rows", rows}};
}

}  // namespace emco::sim::detail
