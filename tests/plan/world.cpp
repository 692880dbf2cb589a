#include "tests/plan/world.hpp"

#include <set>

namespace emco::test {

void write_chart(Workspace& ws, const std::string& app) {
  std::string d = "charts/" + app + "/";
  ws.write(d + "Chart.yaml", "apiVersion: v2\nname: " + app + "\nversion: 0.1.0\n");
  ws.write(d + "values.yaml", "greeting: hello\nreplicas: 1\n");
  ws.write(d + "templates/cm.yaml",
           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\n"
           "data:\n  greeting: {{ required \"greeting is required\" .Values.greeting | quote }}\n");
  ws.write(d + "templates/deploy.yaml",
           "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-web\n"
           "  namespace: {{ .Release.Namespace }}\nspec:\n  replicas: {{ .Values.replicas }}\n"
           "  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n"
           "    spec:\n      containers:\n      - name: web\n        image: nginx\n        ports:\n"
           "        - containerPort: 80\n");
  ws.write(d + "templates/hook.yaml",
           "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-setup\n  annotations:\n"
           "    helm.sh/hook: pre-install\n    helm.sh/hook-weight: \"1\"\nspec:\n  template:\n    spec:\n"
           "      restartPolicy: Never\n      containers:\n      - name: s\n        image: busybox\n");
  ws.write(d + "templates/NOTES.txt", "thanks for installing\n");
}

void write_profile(Workspace& ws, const std::string& dir, const std::string& values) {
  ws.write(dir + "/manifest.yaml", "version: v1\ntype:\n  values: \"override_values.yaml\"\n");
  ws.write(dir + "/override_values.yaml", values);
}

std::string world_yaml(const std::vector<ClusterSpec>& clusters, const std::vector<AppSpec>& apps,
                       const std::string& extra_group_intents) {
  auto doc = [](const std::string& anchor, const std::string& body) {
    return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body;
  };
  std::string y;
  std::set<std::string> providers;
  for (const auto& c : clusters)
    if (providers.insert(c.provider).second) y += doc("cluster-providers", "metadata:\n  name: " + c.provider + "\n");
  for (const auto& c : clusters) {
    y += doc("cluster-providers/" + c.provider + "/clusters", "metadata:\n  name: " + c.name + "\nfile: kubeconfig\n");
    for (const auto& l : c.labels)
      y += doc("cluster-providers/" + c.provider + "/clusters/" + c.name + "/labels", "clusterLabel: " + l + "\n");
  }
  y += doc("projects", "metadata:\n  name: p\n");
  y += doc("projects/p/logical-clouds", "metadata:\n  name: lc\nspec:\n  level: \"0\"\n");
  for (const auto& c : clusters)
    if (c.in_cloud)
      y += doc("projects/p/logical-clouds/lc/cluster-references",
               "metadata:\n  name: " + c.provider + "-" + c.name + "\nspec:\n  clusterProvider: " + c.provider +
                   "\n  cluster: " + c.name + "\n");
  y += doc("projects/p/composite-apps", "metadata:\n  name: ca\nspec:\n  compositeAppVersion: v1\n");
  for (const auto& a : apps)
    y += doc("projects/p/composite-apps/ca/v1/apps", "metadata:\n  name: " + a.name + "\nfile: charts/" + a.name + "\n");
  y += doc("projects/p/composite-apps/ca/v1/composite-profiles", "metadata:\n  name: cp\n");
  for (const auto& a : apps)
    y += doc("projects/p/composite-apps/ca/v1/composite-profiles/cp/profiles",
             "metadata:\n  name: " + a.name + "-profile\nspec:\n  app: " + a.name + "\nfile: profile\n");
  y += doc("projects/p/composite-apps/ca/v1/deployment-intent-groups",
           "metadata:\n  name: dig\nspec:\n  compositeProfile: cp\n  version: r1\n  logicalCloud: lc\n");
  y += doc("projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/intents",
           "metadata:\n  name: gi\nspec:\n  intent:\n    genericPlacementIntent: gpi\n" + extra_group_intents);
  y += doc("projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/generic-placement-intents",
           "metadata:\n  name: gpi\n");
  for (const auto& a : apps)
    y += doc("projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/generic-placement-intents/gpi/app-intents",
             "metadata:\n  name: " + a.name + "-intent\nspec:\n  app: " + a.name + "\n  intent:\n" + a.intent_yaml);
  return y;
}

resource::Key world_dig() {
  return resource::Key{
      {{"project", "p"}, {"compositeApp", "ca"}, {"compositeAppVersion", "v1"}, {"deploymentIntentGroup", "dig"}}};
}

}  // namespace emco::test
