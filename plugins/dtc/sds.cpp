// SDS, the service-discovery sub-controller (spec/lifecycle.md §7,
// placement-and-actions.md §5 "DTC → SDS").
//
// At plan time (make_sds_check) it checks that every inbound server intent
// with clients names a Service of its app (`<serviceName>+Service` in the
// server app's plan): a client without a matching server fails the plan.
//
// After the parent context is delivered (make_sds, a ChildPlanner), for each
// server with clients and each cluster of the server app: it waits until the
// server app's objects on that cluster are ready (EMCO_SDS_SERVER_TIMEOUT,
// default 300 s), reads the Service live — NodePort: the control-plane (else
// the first) Node's InternalIP with each port's nodePort; LoadBalancer: the
// first ingress IP, waited for up to EMCO_SDS_LB_TIMEOUT (default 120 s),
// with the ports themselves; other types are an error, as upstream's — polling
// every EMCO_SDS_POLL_MS (default 5000), and builds one child context per
// client app: app `service-discovery` with, on every cluster of the client
// app other than this server cluster, a selector-less headless Service
// `<serviceName>+Service` (type ClusterIP, one port per server port, named
// by its number) and its Endpoints `<serviceName>+Endpoint`, Endpoints
// first, as upstream orders them. Upstream's Endpoints carry the Service's
// port even for a NodePort Service (which reaches the server only when the
// two are equal, as in its examples); emco's carry the nodePort. Waiting
// stops at the operation's deadline (Error(pending)).

#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/plan/object.hpp"
#include "core/util/error.hpp"
#include "plugins/dtc/dtc.hpp"

namespace emco::plugins::dtc {

using nlohmann::json;
using namespace std::chrono;

namespace {

const appcontext::Resource* service_of(const appcontext::Cluster& c, const Server& s) {
  return c.find(s.service_name + "+Service");
}

class SdsCheck : public SubController {
public:
  void update(const TrafficGroup& tg, const controllers::Call&, appcontext::AppContext& ctx) const override {
    for (const auto& s : tg.servers) {
      if (s.clients.empty()) continue;
      for (const auto& c : app_of(ctx, s.app, s.where).clusters)
        if (!service_of(c, s))
          fail(ErrorKind::invalid,
               s.where + ": app '" + s.app + "' has no Service '" + s.service_name + "' on cluster '" + c.name +
                   "' for its clients (" + s.clients.front().where + ") to discover",
               "serviceName must name a Service the server app's chart makes");
    }
  }
};

milliseconds env_ms(const char* name, milliseconds fallback, long unit_ms) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end || n < 0) fail(ErrorKind::invalid, std::string(name) + "='" + v + "' is not a non-negative number");
  return milliseconds(n * unit_ms);
}

struct Timing {
  milliseconds server = env_ms("EMCO_SDS_SERVER_TIMEOUT", seconds(300), 1000);
  milliseconds lb = env_ms("EMCO_SDS_LB_TIMEOUT", seconds(120), 1000);
  milliseconds poll = env_ms("EMCO_SDS_POLL_MS", seconds(5), 1);
};

// Calls `done` until it returns true: Error(failed) after `limit`,
// Error(pending) at the operation's deadline or on an interrupt. Transient
// target errors (the cluster is unreachable for a while) count as not yet.
template <class F>
void wait_for(const lifecycle::ChildCall& call, milliseconds limit, milliseconds poll, const std::string& what, F done) {
  auto give_up = steady_clock::now() + limit;
  for (;;) {
    std::string why;
    try {
      if (done(why)) return;
    } catch (const sync::TargetError& e) {
      if (!e.transient()) throw;
      why = e.message();
    }
    auto now = steady_clock::now();
    if ((call.interrupt && call.interrupt->load()) || now >= call.deadline)
      fail(ErrorKind::pending, "still waiting for " + what + (why.empty() ? "" : " (" + why + ")"),
           "'emco sync' makes the child contexts once it is (a longer --timeout waits here)");
    if (now >= give_up)
      fail(ErrorKind::failed,
           what + " did not happen within " + std::to_string(duration_cast<seconds>(limit).count()) + " s" +
               (why.empty() ? "" : " (" + why + ")"));
    std::this_thread::sleep_for(std::min(poll, duration_cast<milliseconds>(call.deadline - now)));
  }
}

struct Endpoint {
  std::string ip;
  json service_ports = json::array(), endpoint_ports = json::array();
};

std::string node_ip(sync::Target& target) {
  json nodes = json::parse(target.list("v1", "Node", ""));
  const json* pick = nullptr;
  for (const auto& n : nodes) {
    json labels = n.value("/metadata/labels"_json_pointer, json::object());
    if (labels.contains("node-role.kubernetes.io/control-plane") || labels.contains("node-role.kubernetes.io/master")) {
      pick = &n;
      break;
    }
  }
  if (!pick && !nodes.empty()) pick = &nodes.front();
  if (pick)
    for (const auto& a : pick->value("/status/addresses"_json_pointer, json::array()))
      if (a.value("type", "") == "InternalIP") return a.value("address", "");
  return "";
}

Endpoint endpoint_of(const lifecycle::ChildCall& call, const Timing& t, const Server& s, const appcontext::Cluster& c,
                     const std::string& ns) {
  auto target = call.live(c.name, ns);
  const std::string what = "app '" + s.app + "' on cluster '" + c.name + "'";
  wait_for(call, t.server, t.poll, what + " to be ready", [&](std::string& why) {
    for (const auto& r : c.resources) {
      auto state = target->state(r.text());
      if (!state.ready) {
        why = r.name + ": " + (state.present ? state.reason : "not there yet");
        return false;
      }
    }
    return true;
  });
  const std::string& manifest = service_of(c, s)->text();
  Endpoint e;
  json svc;
  std::string type;
  auto read = [&] {
    svc = json::parse(target->read(manifest));
    type = svc.value("/spec/type"_json_pointer, std::string("ClusterIP"));
  };
  read();
  if (type == "NodePort") {
    e.ip = node_ip(*target);
    if (e.ip.empty())
      fail(ErrorKind::failed, s.where + ": cluster '" + c.name + "' lists no Node with an InternalIP for NodePort Service '" +
                                  s.service_name + "'");
  } else if (type == "LoadBalancer") {
    wait_for(call, t.lb, t.poll, "a load-balancer ingress IP of Service '" + s.service_name + "' on '" + c.name + "'",
             [&](std::string&) {
               read();
               for (const auto& in : svc.value("/status/loadBalancer/ingress"_json_pointer, json::array()))
                 if (!in.value("ip", "").empty()) {
                   e.ip = in.value("ip", "");
                   return true;
                 }
               return false;
             });
  } else {
    fail(ErrorKind::invalid, s.where + ": Service '" + s.service_name + "' on cluster '" + c.name + "' is of type " + type +
                                 ", neither NodePort nor LoadBalancer",
         "clients on other clusters reach a server through a NodePort or LoadBalancer Service");
  }
  for (const auto& p : svc.value("/spec/ports"_json_pointer, json::array())) {
    int port = p.value("port", 0);
    std::string name = std::to_string(port);
    e.service_ports.push_back(
        {{"name", name}, {"protocol", p.value("protocol", "TCP")}, {"port", port}, {"targetPort", port}});
    e.endpoint_ports.push_back({{"name", name}, {"port", type == "NodePort" ? p.value("nodePort", port) : port}});
  }
  return e;
}

class Sds : public lifecycle::ChildPlanner {
public:
  std::string name() const override { return "sds"; }

  std::vector<appcontext::AppContext> children(const lifecycle::ChildCall& call) const override {
    std::vector<appcontext::AppContext> out;
    if (call.owner.kind != "deploymentIntentGroup") return out;
    auto subs = registered_subcontrollers(call.store);
    if (std::find(subs.begin(), subs.end(), "sds") == subs.end()) return out;
    std::set<std::string> intents;  // the traffic group intents the group intents name for dtc
    for (const auto& gi : call.store.list(resource::kind("groupIntent"), call.owner.key)) {
      json intent = json::parse(gi.data).value("/spec/intent"_json_pointer, json::object());
      if (intent.contains("dtc") && intent["dtc"].is_string()) intents.insert(intent["dtc"].get<std::string>());
    }
    if (intents.empty()) return out;
    const auto& parent = call.parent();
    const Timing timing;
    const std::string ns = parent.meta.count("Namespace") ? parent.meta.at("Namespace") : "";
    for (const auto& name : intents) {
      TrafficGroup tg = load(controllers::Call{call.store, parent.owner.key, name, "", {}, {}, false});
      for (const auto& s : tg.servers) {
        if (s.clients.empty()) continue;
        const appcontext::App* server = parent.find_app(s.app);
        if (!server) continue;  // the plan refused it already
        std::vector<std::string> client_apps;  // distinct, by name (upstream keys them by app)
        for (const auto& c : s.clients) client_apps.push_back(c.app);
        std::sort(client_apps.begin(), client_apps.end());
        client_apps.erase(std::unique(client_apps.begin(), client_apps.end()), client_apps.end());
        for (const auto& sc : server->clusters) {
          Endpoint e = endpoint_of(call, timing, s, sc, ns);
          for (const auto& client : client_apps) {
            const appcontext::App* ca = parent.find_app(client);
            if (!ca) continue;
            appcontext::AppContext child = child_of(parent);
            appcontext::App app;
            app.name = "service-discovery";
            for (const auto& cc : ca->clusters) {
              if (cc.name == sc.name) continue;  // same cluster: the server is local
              appcontext::Cluster cl;
              cl.name = cc.name;
              put_object(child, cl, s.service_name + "+Endpoint", endpoints(s, ns, e));
              put_object(child, cl, s.service_name + "+Service", service(s, ns, e));
              app.clusters.push_back(std::move(cl));
            }
            if (app.clusters.empty()) continue;
            child.apps.push_back(std::move(app));
            out.push_back(std::move(child));
          }
        }
      }
    }
    return out;
  }

private:
  static appcontext::AppContext child_of(const appcontext::AppContext& parent) {
    appcontext::AppContext child;
    child.meta = parent.meta;
    child.meta["CompositeApp"] = "service-discovery";
    return child;
  }
  static json meta(const Server& s, const std::string& ns) {
    json m = {{"name", s.service_name}};
    if (!ns.empty()) m["namespace"] = ns;
    return m;
  }
  static json service(const Server& s, const std::string& ns, const Endpoint& e) {
    return {{"apiVersion", "v1"},
            {"kind", "Service"},
            {"metadata", meta(s, ns)},
            {"spec",
             {{"clusterIP", "None"}, {"ports", e.service_ports}, {"sessionAffinity", "None"}, {"type", "ClusterIP"}}}};
  }
  static json endpoints(const Server& s, const std::string& ns, const Endpoint& e) {
    return {{"apiVersion", "v1"},
            {"kind", "Endpoints"},
            {"metadata", meta(s, ns)},
            {"subsets", json::array({{{"addresses", json::array({{{"ip", e.ip}}})}, {"ports", e.endpoint_ports}}})}};
  }
};

}  // namespace

std::unique_ptr<SubController> make_sds_check() { return std::make_unique<SdsCheck>(); }
std::unique_ptr<lifecycle::ChildPlanner> make_sds() { return std::make_unique<Sds>(); }

}  // namespace emco::plugins::dtc
