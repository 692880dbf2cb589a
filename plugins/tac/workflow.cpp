// The workflow client call upstream's tac and workflow manager make: POST of
// the workflow spec to http://ENDPOINT:PORT/invoke/NAME, 204 = started.

#include "plugins/tac/tac.hpp"

#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/targets/kube/http.hpp"

namespace emco::plugins::tac {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// Go writes a nil pointer, map or slice as null.
ordered_json or_null(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? ordered_json(nullptr) : ordered_json::parse(it->dump());
}

ordered_json retry_policy(const json& j) {
  if (!j.is_object()) return nullptr;
  return {{"InitialInterval", j.value("InitialInterval", 0LL)},
          {"BackoffCoefficient", j.contains("BackoffCoefficient") ? ordered_json::parse(j["BackoffCoefficient"].dump()) : ordered_json(0)},
          {"MaximumInterval", j.value("MaximumInterval", 0LL)},
          {"MaximumAttempts", j.value("MaximumAttempts", 0LL)},
          {"NonRetryableErrorTypes", or_null(j, "NonRetryableErrorTypes")}};
}

std::string short_body(const std::string& body) {
  std::string b = trim(body);
  return b.size() > 300 ? b.substr(0, 300) + "..." : b;
}

}  // namespace

ordered_json workflow_body(const json& temporal) {
  const json so = temporal.value("workflowStartOptions", json::object());
  ordered_json start = {
      {"ID", so.value("ID", "")},
      {"TaskQueue", so.value("TaskQueue", "")},
      {"WorkflowExecutionTimeout", so.value("WorkflowExecutionTimeout", 0LL)},
      {"WorkflowRunTimeout", so.value("WorkflowRunTimeout", 0LL)},
      {"WorkflowTaskTimeout", so.value("WorkflowTaskTimeout", 0LL)},
      {"WorkflowIDReusePolicy", so.value("WorkflowIDReusePolicy", 0LL)},
      {"WorkflowExecutionErrorWhenAlreadyStarted", so.value("WorkflowExecutionErrorWhenAlreadyStarted", false)},
      {"RetryPolicy", retry_policy(so.value("RetryPolicy", json()))},
      {"CronSchedule", so.value("CronSchedule", "")},
      {"Memo", or_null(so, "Memo")},
      {"SearchAttributes", or_null(so, "SearchAttributes")}};
  // WorkflowParams' maps are omitempty; the struct itself is always written.
  const json params = temporal.value("workflowParams", json::object());
  ordered_json wp = ordered_json::object();
  if (params.contains("activityOptions") && !params["activityOptions"].empty()) {
    ordered_json opts = ordered_json::object();
    for (const auto& [name, a] : params["activityOptions"].items())
      opts[name] = {{"TaskQueue", a.value("TaskQueue", "")},
                    {"ScheduleToCloseTimeout", a.value("ScheduleToCloseTimeout", 0LL)},
                    {"ScheduleToStartTimeout", a.value("ScheduleToStartTimeout", 0LL)},
                    {"StartToCloseTimeout", a.value("StartToCloseTimeout", 0LL)},
                    {"HeartbeatTimeout", a.value("HeartbeatTimeout", 0LL)},
                    {"WaitForCancellation", a.value("WaitForCancellation", false)},
                    {"ActivityID", a.value("ActivityID", "")},
                    {"RetryPolicy", retry_policy(a.value("RetryPolicy", json()))}};
    wp["activityOptions"] = opts;
  }
  if (params.contains("activityParams") && !params["activityParams"].empty())
    wp["activityParams"] = ordered_json::parse(params["activityParams"].dump());
  return {{"workflowClientName", temporal.value("workflowClientName", "")},
          {"workflowStartOptions", start},
          {"workflowParams", wp}};
}

std::string invoke_url(const json& spec) {
  const json client = spec.value("workflowClient", json::object());
  std::string host = client.value("clientEndpointName", "");
  if (host.find(':') != std::string::npos) host = "[" + host + "]";  // an IPv6 address, as net.JoinHostPort writes it
  return "http://" + host + ":" + std::to_string(client.value("clientEndpointPort", 0)) + "/invoke/" +
         spec.value("temporal", json::object()).value("workflowClientName", "");
}

Answer invoke(const json& spec, std::chrono::milliseconds timeout) {
  const std::string url = invoke_url(spec);
  kube::HttpRequest req;
  req.method = "POST";
  req.url = url;
  req.headers = {{"Content-Type", "application/json"}};
  req.body = workflow_body(spec.value("temporal", json::object())).dump();
  req.timeout = timeout;
  req.max_body_bytes = 1 << 20;
  auto client = kube::make_curl_client({});
  kube::HttpResponse resp = client->send(req);
  Answer a;
  if (resp.failure != kube::TransportFailure::none) {
    a.message = "cannot reach the workflow client at " + url + ": " + resp.failure_detail;
    return a;
  }
  a.ok = resp.status == 204;
  a.message = a.ok ? "the workflow client at " + url + " started the workflow (204)"
                   : "the workflow client at " + url + " answered HTTP " + std::to_string(resp.status) +
                         (trim(resp.body).empty() ? "" : ": " + short_body(resp.body));
  return a;
}

}  // namespace emco::plugins::tac
