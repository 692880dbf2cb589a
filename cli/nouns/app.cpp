// `emco app`: composite apps, apps (Helm charts), composite profiles, app
// profiles and app dependencies (create, update, get, list, delete).

#include <nlohmann/json.hpp>

#include "cli/resource_verbs.hpp"
#include "cli/table.hpp"

namespace emco::cli {

using nlohmann::json;

std::vector<CommandSpec> app_commands() {
  std::vector<CommandSpec> v;
  add_verbs(v, {.words = {"app", "composite"}, .kind = "compositeApp", .address = "PROJECT/COMPOSITE-APP/VERSION",
                .examples = {"emco app composite create proj1/collection/v1"}});
  add_verbs(v, {.words = {"app"}, .kind = "app", .address = "PROJECT/COMPOSITE-APP/VERSION/APP",
                .flags = {{.name = "chart", .value = "PATH", .help = "Helm chart directory or .tgz package", .complete = Complete::file}},
                .build = [](const Invocation& inv, json&, manifest::Document& doc) {
                  if (inv.has("chart")) doc.files.push_back(inv.get("chart"));
                },
                .examples = {"emco app create proj1/collection/v1/collectd --chart ./collectd"}});
  add_verbs(v, {.words = {"app", "composite-profile"}, .kind = "compositeProfile",
                .address = "PROJECT/COMPOSITE-APP/VERSION/PROFILE",
                .examples = {"emco app composite-profile create proj1/collection/v1/default"}});
  add_verbs(v, {.words = {"app", "profile"}, .kind = "appProfile",
                .address = "PROJECT/COMPOSITE-APP/VERSION/COMPOSITE-PROFILE/PROFILE",
                .flags = {{.name = "app", .value = "APP", .help = "the app this profile customises"},
                          {.name = "profile", .value = "PATH", .help = "profile directory or .tgz (manifest.yaml, override_values.yaml)",
                           .complete = Complete::file}},
                .build = [](const Invocation& inv, json& spec, manifest::Document& doc) {
                  if (inv.has("app")) spec["app"] = inv.get("app");
                  if (inv.has("profile")) doc.files.push_back(inv.get("profile"));
                },
                .examples = {"emco app profile create proj1/collection/v1/default/collectd-profile --app collectd --profile ./profile"}});
  add_verbs(v, {.words = {"app", "dependency"}, .kind = "appDependency",
                .address = "PROJECT/COMPOSITE-APP/VERSION/APP/DEPENDENCY",
                .flags = {{.name = "on", .value = "APP", .help = "the app depended upon"},
                          {.name = "op-status", .value = "STATUS", .help = "what the other app must reach", .choices = {"Ready", "Deployed"}},
                          {.name = "wait", .value = "SECONDS", .help = "extra seconds to wait after that"}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("on")) spec["app"] = inv.get("on");
                  if (inv.has("op-status")) spec["opStatus"] = inv.get("op-status");
                  if (inv.has("wait")) spec["wait"] = inv.get_int("wait");
                }});
  return v;
}

}  // namespace emco::cli
