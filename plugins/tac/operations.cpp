// The workflow manager's calls: start through the workflow client, status
// and cancel against a Temporal frontend's HTTP API (the gateway of its
// WorkflowService: DescribeWorkflowExecution, GetWorkflowExecutionHistory,
// QueryWorkflow, RequestCancelWorkflowExecution, TerminateWorkflowExecution),
// and the anchors that run them (.../start, .../cancel).

#include <nlohmann/json.hpp>

#include "core/lifecycle/lifecycle.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/tac/plugin.hpp"
#include "plugins/tac/tac.hpp"
#include "plugins/targets/kube/http.hpp"

namespace emco::plugins::tac {

using nlohmann::json;
using resource::Key;
namespace lc = emco::lifecycle;

namespace {

store::Resource load(const store::Store& st, const Key& key) {
  const std::string kind_id = key.parts.back().first;
  auto r = st.get(key);
  if (!r) fail(ErrorKind::not_found, store::describe(resource::kind(kind_id), key) + " does not exist");
  return *r;
}

std::string where(const store::Resource& r) { return r.kind->display + " '" + resource::resource_anchor(*r.kind, r.key) + "'"; }

json spec_of(const store::Resource& r) { return json::parse(r.data).value("spec", json::object()); }

// Percent-encodes one path segment or query value.
std::string escape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

class Frontend {
public:
  explicit Frontend(const TemporalAccess& a) : m_access(a) {
    if (a.server.empty())
      fail(ErrorKind::usage, "the Temporal server is not given", "pass --temporal-server HOST:PORT (its HTTP API port, 7243 by default)");
    m_base = starts_with(a.server, "http://") || starts_with(a.server, "https://") ? a.server : "http://" + a.server;
    while (ends_with(m_base, "/")) m_base.pop_back();
    kube::TransportOptions t;
    t.tls.ca_pem = a.ca_pem;
    t.tls.client_cert_pem = a.cert_pem;
    t.tls.client_key_pem = a.key_pem;
    t.tls.insecure_skip_verify = a.insecure_skip_verify;
    t.tls.server_name = a.server_name;
    m_client = kube::make_curl_client(t);
  }

  json call(const std::string& method, const std::string& path, const json& body = nullptr) {
    kube::HttpRequest req;
    req.method = method;
    req.url = m_base + "/api/v1/namespaces/" + escape(m_access.ns) + path;
    req.headers = {{"Accept", "application/json"}};
    if (!body.is_null()) {
      req.headers.push_back({"Content-Type", "application/json"});
      req.body = body.dump();
    }
    auto resp = m_client->send(req);
    if (resp.failure != kube::TransportFailure::none)
      fail(ErrorKind::unreachable, "cannot reach the Temporal frontend at " + m_base + ": " + resp.failure_detail,
           "check --temporal-server (the frontend's HTTP API, port 7243 by default) and its TLS options");
    json answer = json::parse(resp.body.empty() ? "{}" : resp.body, nullptr, false);
    if (resp.status < 200 || resp.status > 299) {
      std::string msg = answer.is_object() && answer.contains("message") ? answer.value("message", "") : trim(resp.body);
      fail(ErrorKind::failed, "the Temporal frontend answered " + method + " " + req.url + " with HTTP " +
                                  std::to_string(resp.status) + (msg.empty() ? "" : ": " + msg));
    }
    return answer.is_discarded() ? json(resp.body) : answer;
  }

private:
  TemporalAccess m_access;
  std::string m_base;
  std::unique_ptr<kube::HttpClient> m_client;
};

std::string intent_workflow_id(const store::Resource& r, const std::string& given) {
  if (!given.empty()) return given;
  std::string id = spec_of(r).value("temporal", json::object()).value("workflowStartOptions", json::object()).value("ID", "");
  if (id.empty())
    fail(ErrorKind::usage, where(r) + " names no workflow id (spec.temporal.workflowStartOptions.ID)",
         "give the workflow id (workflowID / --workflow-id)");
  return id;
}

std::string run_query(const std::string& run_id) { return run_id.empty() ? "" : "?execution.runId=" + escape(run_id); }

// A JSON value as a Temporal payload (json/plain encoding, as the SDKs' default converter writes it).
json payload(const json& v) {
  return {{"metadata", {{"encoding", base64_encode("json/plain")}}}, {"data", base64_encode(v.dump())}};
}

class Owner : public lc::OperationOwner {
public:
  std::string name() const override { return "tac"; }
  bool owns(const resource::Kind& k) const override { return k.id == "workflowHookIntent" || k.id == "workflowIntent"; }

  lc::OperationResult run(store::Store& st, const resource::Kind&, const Key& key, const std::string& op,
                          const json& body, Clock&, const lc::OperationOptions&) const override {
    lc::OperationResult out;
    if (op == "start") {
      out.message = workflow_start(st, key);
      return out;
    }
    // cancel: upstream's WfTemporalCancelRequest.
    json spec = body.is_object() ? body.value("spec", json::object()) : json::object();
    TemporalAccess a;
    a.server = spec.value("temporalServer", "");
    if (a.server.empty())
      fail(ErrorKind::invalid, "cancel needs spec.temporalServer (the Temporal frontend)", "e.g. spec: {temporalServer: temporal:7243}");
    bool terminate = spec.value("terminate", false);
    workflow_cancel(st, key, a, spec.value("workflowID", ""), spec.value("runID", ""), terminate, spec.value("reason", ""));
    out.message = terminate ? "workflow terminated" : "workflow cancel requested";
    return out;
  }

  // ".../status?temporalServer=HOST:PORT&runDescribeWfExec=true...": upstream's
  // WfTemporalStatusQuery parameters and its WfTemporalStatusResponse.
  // waitForResult is accepted and not waited for (the frontend's describe
  // tells whether the workflow closed).
  json status(store::Store& st, const resource::Kind& k, const Key& key, const std::string& what,
              const std::string& query, const sync::TargetFactory&) const override {
    if (what != "status") fail(ErrorKind::not_found, "'" + what + "' is not a status of a " + k.display);
    TemporalAccess a;
    StatusQuery q;
    auto flag = [](const std::string& name, const std::string& v) {
      if (v == "true") return true;
      if (v == "false" || v.empty()) return false;
      fail(ErrorKind::invalid, name + " must be a boolean but is '" + v + "'");
    };
    for (auto [name, v] : query_parameters(query)) {
      if (name == "temporalServer") {
        // Upstream cuts one leading and one trailing quote.
        if (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.erase(0, 1);
        if (!v.empty() && (v.back() == '"' || v.back() == '\'')) v.pop_back();
        a.server = v;
      } else if (name == "workflowID") q.workflow_id = v;
      else if (name == "runID") q.run_id = v;
      else if (name == "queryType") q.query_type = v;
      else if (name == "runDescribeWfExec") q.describe = flag(name, v);
      else if (name == "getWfHistory") q.history = flag(name, v);
      else if (name == "waitForResult") flag(name, v);
      else
        fail(ErrorKind::invalid, "unknown query parameter '" + name + "'",
             "temporalServer, workflowID, runID, queryType, waitForResult, runDescribeWfExec, getWfHistory");
    }
    if (a.server.empty())
      fail(ErrorKind::invalid, "a workflow status needs ?temporalServer=HOST:PORT (the Temporal frontend)",
           "or use 'emco dig workflow status' with its TLS flags");
    return workflow_status(st, key, a, q);
  }
};

}  // namespace

std::string workflow_start(const store::Store& st, const Key& key) {
  store::Resource r = load(st, key);
  Answer a = invoke(spec_of(r), std::chrono::seconds(60));
  if (!a.ok) fail(ErrorKind::failed, where(r) + ": " + a.message, "check spec.workflowClient and that the client is running");
  return "workflow started: " + a.message;
}

json workflow_status(const store::Store& st, const Key& key, const TemporalAccess& access, const StatusQuery& q) {
  store::Resource r = load(st, key);
  const std::string wid = intent_workflow_id(r, q.workflow_id);
  Frontend f(access);
  json out = {{"workflowID", wid}};
  if (!q.run_id.empty()) out["runID"] = q.run_id;
  const std::string path = "/workflows/" + escape(wid);
  if (q.describe) out["workflowExecutionDescription"] = f.call("GET", path + run_query(q.run_id));
  if (q.history) out["workflowHistory"] = f.call("GET", path + "/history" + run_query(q.run_id)).value("history", json::object()).value("events", json::array());
  if (!q.query_type.empty()) {
    json args = q.query_args.empty() ? json::array() : json::parse(q.query_args, nullptr, false);
    if (!args.is_array()) fail(ErrorKind::usage, "query parameters must be a JSON array", "e.g. --query-args '[\"x\", 1]'");
    json payloads = json::array();
    for (const auto& a : args) payloads.push_back(payload(a));
    json req = {{"execution", {{"workflowId", wid}, {"runId", q.run_id}}},
                {"query", {{"queryType", q.query_type}, {"queryArgs", {{"payloads", payloads}}}}}};
    json answer = f.call("POST", path + "/query/" + escape(q.query_type), req);
    if (answer.contains("queryRejected"))
      fail(ErrorKind::failed, "query '" + q.query_type + "' was rejected (workflow status " +
                                  answer["queryRejected"].value("status", "") + ")");
    json result = answer.value("queryResult", json::object()).value("payloads", json::array());
    if (result.empty()) fail(ErrorKind::failed, "got no result for query '" + q.query_type + "'");
    std::string data = base64_decode(result[0].value("data", "")).value_or("");
    json v = json::parse(data, nullptr, false);
    out["workflowQueryResult"] = v.is_discarded() ? json(data) : v;
  }
  return out;
}

void workflow_cancel(const store::Store& st, const Key& key, const TemporalAccess& access, const std::string& workflow_id,
                     const std::string& run_id, bool terminate, const std::string& reason) {
  store::Resource r = load(st, key);
  const std::string wid = intent_workflow_id(r, workflow_id);
  Frontend f(access);
  json req = {{"workflowExecution", {{"workflowId", wid}, {"runId", run_id}}}, {"reason", reason}, {"identity", "emco"}};
  f.call("POST", "/workflows/" + escape(wid) + (terminate ? "/terminate" : "/cancel"), req);
}

std::unique_ptr<lc::OperationOwner> make_owner() { return std::make_unique<Owner>(); }

}  // namespace emco::plugins::tac
