#!/usr/bin/env bash
# The quickstart, end to end, on embedded defaults: a fresh workspace, three
# clusters, a composite app made of one Helm chart, placed by label.
# Usage: scripts/demo.sh [path/to/emco]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
emco="$(realpath "${1:-$repo/build/emco}")"
work="$(mktemp -d "${TMPDIR:-/tmp}/emco-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
ex="$repo/examples/quickstart"
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@"; }

cd "$work"
cp -r "$ex"/. .

# Three clusters. Until the simulator is wired into the demo, the kubeconfigs
# name local endpoints that nothing serves: registration validates them
# offline, and deployment is not part of this version.
clusters=""
for i in 1 2 3; do
  cat > "kubeconfig-edge$i.yaml" <<KC
apiVersion: v1
kind: Config
clusters:
- name: edge$i
  cluster:
    server: https://127.0.0.1:6443/clusters/edge$i
contexts:
- name: edge$i
  context: {cluster: edge$i, user: admin}
current-context: edge$i
users:
- name: admin
  user: {token: demo-token-$i}
KC
  clusters="$clusters  - {Name: edge$i, KubeConfig: $work/kubeconfig-edge$i.yaml}"$'\n'
done
sed -i '/^Clusters:/d' values.yaml
printf 'Clusters:\n%s' "$clusters" >> values.yaml

run "$emco" init
run "$emco" apply -f 01-clusters.yaml -v values.yaml
run "$emco" apply -f 02-project.yaml -v values.yaml
run "$emco" apply -f 03-app.yaml -v values.yaml
run "$emco" cluster list
run "$emco" dig list
run "$emco" apply "projects/quickstart/composite-apps/hello-app/v1/deployment-intent-groups/hello-dig/approve"
run "$emco" get "projects/quickstart/composite-apps/hello-app/v1/deployment-intent-groups/hello-dig/status" -o yaml
say "re-applying unchanged files changes nothing"
"$emco" apply -f 03-app.yaml -v values.yaml | sed -n '1,3p'
echo
echo "demo finished: workspace was $work"
