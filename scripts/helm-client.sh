#!/usr/bin/env bash
# helm-client.sh [BUILD_DIR] -- the real helm (v3.17) and kubectl (v1.31)
# against `emco sim`, used as a new user would: helm install --wait, upgrade,
# rollback, history and uninstall of tests/sim/charts/rehearsal (a
# Deployment, a Service, a StatefulSet, a ConfigMap and a Job hook), each
# step checked with kubectl, then the same chart on a simulated 1.24 cluster,
# where it also creates the PodSecurityPolicy that release still serves.
#
# helm and kubectl come from ../shared/tools/get-helm (needs npm) into
# $EMCO_TOOLS_DIR (default ~/.cache/emco-tools/bin), outside the checkout.
# Exits non-zero at the first failed check, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
emco="$(cd "$build" && pwd)/emco"
chart="tests/sim/charts/rehearsal"
tools="${EMCO_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/emco-tools/bin}"
helm="$(bash ../shared/tools/get-helm "$tools")"
kubectl="$tools/kubectl"

work="$(mktemp -d "${TMPDIR:-/tmp}/helm-client.XXXXXX")"
sims=()
cleanup() {
  for dir in "${sims[@]}"; do "$emco" sim stop --dir "$dir" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# helm keeps its caches and repositories in the work directory, not in ~.
export HELM_CACHE_HOME="$work/helm/cache" HELM_CONFIG_HOME="$work/helm/config" HELM_DATA_HOME="$work/helm/data"

checks=0
step() { echo "--- $*"; }
fail() { echo "helm-client: FAIL: $*" >&2; exit 1; }
# expect WHAT EXPECTED ACTUAL
expect() {
  checks=$((checks + 1))
  [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
  echo "ok: $1 = $3"
}
kc() { "$kubectl" --cache-dir "$work/kube-cache" "$@"; }
# The column headers of a `kubectl get` (blank runs squeezed to one space).
headers() { kc get "$@" | head -n1 | tr -s ' '; }
count() { kc get "$@" -o name | grep -c . || true; }

# start_sim DIR [FLAGS...]: a one-cluster simulator; sets KUBECONFIG.
start_sim() {
  local dir="$1"
  shift
  "$emco" sim start --clusters 1 --dir "$dir" --ready-delay-ms 300 "$@" >"$dir.log" 2>&1 &
  sims+=("$dir")
  for _ in $(seq 100); do
    [ -f "$dir/sim.json" ] && break
    sleep 0.1
  done
  [ -f "$dir/sim.json" ] || { cat "$dir.log" >&2; fail "emco sim start $* did not come up"; }
  export KUBECONFIG="$dir/kubeconfigs/cluster-1.yaml"
}

start_sim "$work/sim"
ns=shop

step "helm install --wait"
"$helm" install shop "$chart" -n $ns --create-namespace --wait --timeout 60s
expect "release status" deployed "$("$helm" status shop -n $ns -o json | jq -r .info.status)"
expect "deployment ready replicas" 2 "$(kc get deploy shop-web -n $ns -o jsonpath='{.status.readyReplicas}')"
expect "web pods" 2 "$(count pods -n $ns -l app.kubernetes.io/name=web)"
expect "web replicasets" 1 "$(count rs -n $ns -l app.kubernetes.io/name=web)"
expect "statefulset ready replicas" 2 "$(kc get sts shop-db -n $ns -o jsonpath='{.status.readyReplicas}')"
expect "db pods" "shop-db-0 shop-db-1" "$(kc get pods -n $ns -l app.kubernetes.io/name=db -o jsonpath='{.items[*].metadata.name}')"
expect "hook job succeeded" 1 "$(kc get job shop-migrate -n $ns -o jsonpath='{.status.succeeded}')"
expect "service cluster IP in 10.96.0.0/16" 10.96 "$(kc get svc shop-web -n $ns -o jsonpath='{.spec.clusterIP}' | cut -d. -f1-2)"
expect "no PodSecurityPolicy on 1.32" 0 "$(kc api-resources | grep -c podsecuritypolicies || true)"
expect "kubectl get deploy columns" "NAME READY UP-TO-DATE AVAILABLE AGE" "$(headers deploy -n $ns)"
expect "kubectl get pods columns" "NAME READY STATUS RESTARTS AGE" "$(headers pods -n $ns)"
expect "kubectl get svc columns" "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE" "$(headers svc -n $ns)"
expect "kubectl get sts columns" "NAME READY AGE" "$(headers sts -n $ns)"
expect "kubectl get nodes columns" "NAME STATUS ROLES AGE VERSION" "$(headers nodes)"
expect "kubectl get jobs columns" "NAME STATUS COMPLETIONS DURATION AGE" "$(headers jobs -n $ns)"
expect "web pod rows (READY STATUS)" "1/1 Running" "$(kc get pods -n $ns -l app.kubernetes.io/name=web --no-headers | awk '{print $2, $3}' | sort -u)"
kc rollout status deploy/shop-web -n $ns --timeout 30s
kc rollout status sts/shop-db -n $ns --timeout 30s

step "helm upgrade --wait (new image and message)"
"$helm" upgrade shop "$chart" -n $ns --set image=nginx:1.27 --set message=bye --wait --timeout 60s
expect "deployment image" nginx:1.27 "$(kc get deploy shop-web -n $ns -o jsonpath='{.spec.template.spec.containers[0].image}')"
expect "deployment revision" 2 "$(kc get deploy shop-web -n $ns -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')"
expect "configmap message" bye "$(kc get cm shop-config -n $ns -o jsonpath='{.data.message}')"
expect "replicasets (old one scaled to 0)" "0 2" "$(kc get rs -n $ns -l app.kubernetes.io/name=web -o jsonpath='{.items[*].spec.replicas}' | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $//')"
expect "web pods run the new image" "nginx:1.27" "$(kc get pods -n $ns -l app.kubernetes.io/name=web -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u)"
expect "web pods after upgrade" 2 "$(count pods -n $ns -l app.kubernetes.io/name=web)"

step "helm rollback --wait"
"$helm" rollback shop 1 -n $ns --wait --timeout 60s
expect "deployment image" nginx:1.25 "$(kc get deploy shop-web -n $ns -o jsonpath='{.spec.template.spec.containers[0].image}')"
expect "deployment revision (the first ReplicaSet again)" 3 "$(kc get deploy shop-web -n $ns -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')"
expect "replicasets (none new)" 2 "$(count rs -n $ns -l app.kubernetes.io/name=web)"
expect "configmap message" hello "$(kc get cm shop-config -n $ns -o jsonpath='{.data.message}')"

step "helm history"
"$helm" history shop -n $ns
expect "history" "1 superseded Install complete|2 superseded Upgrade complete|3 deployed Rollback to 1" \
  "$("$helm" history shop -n $ns -o json | jq -r 'map("\(.revision) \(.status) \(.description)") | join("|")')"
expect "release secrets (listed by label)" 3 "$(count secrets -n $ns -l owner=helm,name=shop)"

step "helm uninstall --wait"
"$helm" uninstall shop -n $ns --wait --timeout 60s
# Hook resources are not part of the release: helm leaves the Job (and its
# Pod) behind, as it does on a real cluster; kubectl's delete cascades.
expect "left behind by helm (the hook Job, its Pod)" "2 job.batch/shop-migrate 1" \
  "$(count deploy,rs,sts,pods,svc,cm,jobs,secrets -n $ns) $(kc get jobs -n $ns -o name) $(count pods -n $ns -l job-name=shop-migrate)"
kc delete job shop-migrate -n $ns
expect "objects left in $ns" 0 "$(count deploy,rs,sts,pods,svc,cm,jobs,secrets -n $ns)"
expect "helm releases" 0 "$("$helm" list -n $ns -q | grep -c . || true)"

step "emco sim node: a Node added and labelled at run time"
"$emco" sim node add cluster-1 gpu-1 --dir "$work/sim"
"$emco" sim node label cluster-1 gpu-1 accelerator=nvidia --dir "$work/sim"
for _ in $(seq 50); do kc get node gpu-1 >/dev/null 2>&1 && break; sleep 0.1; done
expect "new node ready" "gpu-1 Ready" "$(kc get node gpu-1 --no-headers | awk '{print $1, $2}')"
for _ in $(seq 50); do [ -n "$(kc get node gpu-1 -o jsonpath='{.metadata.labels.accelerator}')" ] && break; sleep 0.1; done
expect "node label" nvidia "$(kc get nodes -l accelerator=nvidia -o jsonpath='{.items[*].metadata.labels.accelerator}')"

step "the same chart on Kubernetes 1.24"
start_sim "$work/sim-124" --kube-version 1.24
expect "server version" v1.24 "$(kc version -o json | jq -r .serverVersion.gitVersion | cut -d. -f1-2)"
# (grep reads all of kubectl's output: with pipefail, grep -q could stop early and fail the pipe)
expect "policy/v1beta1 served" 1 "$(kc api-versions | grep -cx policy/v1beta1)"
expect "batch/v1beta1 served" 1 "$(kc api-versions | grep -cx batch/v1beta1)"
"$helm" install shop "$chart" -n $ns --create-namespace --wait --timeout 60s
expect "PodSecurityPolicy created" shop-restricted "$(kc get psp -o jsonpath='{.items[*].metadata.name}')"
expect "deployment ready replicas" 2 "$(kc get deploy shop-web -n $ns -o jsonpath='{.status.readyReplicas}')"
"$helm" uninstall shop -n $ns --wait --timeout 60s
kc delete job shop-migrate -n $ns
expect "objects left" 0 "$(count deploy,rs,sts,pods,svc,cm,jobs,secrets -n $ns)"
expect "PodSecurityPolicy removed" 0 "$(count psp)"

echo "helm-client: all $checks checks passed"
