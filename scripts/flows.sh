#!/usr/bin/env bash
# The upstream EMCO example flows (../shared/emco-flows), each file unchanged
# through `emco apply -f FILE -v values.yaml` (`emco update -f` for the two
# files upstream's READMEs send with `emcoctl update`), against simulated
# clusters (`emco sim`), with assertions on what every cluster holds after
# each step.
#
# usage: scripts/flows.sh BUILD/emco [--http] [FLOW...]     (flows: test-update multi-cluster test-gac)
# By default all three run.
# --http: the same files go over HTTP to `emco serve` instead of `emco apply -f`,
# sent the way upstream's emcoctl sends them (its URL paths, JSON and multipart
# uploads, `delete` in reverse with instantiate turned into terminate) by
# scripts/emcoctl-http (built with Debian's golang-go and golang-gopkg-yaml.v3-dev)
# or by the emcoctl binary EMCOCTL names (upstream's, see
# scripts/build-upstream-emcoctl.sh). The emcoctl config gives every EMCO
# service a port of its own, all served by the one `emco serve`; the clusters
# must end as with `emco apply -f`. Lifecycle calls are answered 202 and
# delivered in the background, so each file is followed by a wait until the
# DIG's status settles (as upstream users poll the status).
# EMCO_FLOWS overrides the flows directory; KEEP=1 keeps the work directory.
set -euo pipefail

EMCO=$(realpath "${1:?usage: scripts/flows.sh BUILD/emco [--http] [FLOW...]}")
shift
HTTP=0
if [ "${1:-}" = --http ]; then
  HTTP=1
  shift
fi
FLOWS=${EMCO_FLOWS:-$(cd "$(dirname "$0")/../.." && pwd)/shared/emco-flows}
[ -d "$FLOWS" ] || FLOWS=/work/shared/emco-flows
FLOWS=$(realpath "$FLOWS")
SELECTED=("$@")
[ ${#SELECTED[@]} -gt 0 ] || SELECTED=(test-update test-gac multi-cluster)

WORK=$(mktemp -d /tmp/emco-flows.XXXXXX)
SIM=""
SERVER=""
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  if [ -n "$SIM" ]; then "$EMCO" sim stop --dir "$SIM" >/dev/null 2>&1 || true; fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
em() { EMCO_WORKSPACE="$WS" "$EMCO" "$@"; }
step() { echo "== $*"; }

# ---- packages (upstream's setup packs charts and profiles as .tar.gz) ----
PKG=$WORK/packages
mkdir -p "$PKG"
pack() {  # pack NAME CHART_PARENT_DIR PROFILE_DIR
  tar -czf "$PKG/$1.tar.gz" -C "$2" .
  tar -czf "$PKG/$1_profile.tar.gz" -C "$3" .
}
pack collectd "$FLOWS/helm_charts/collectd/helm" "$FLOWS/helm_charts/collectd/profile"
pack operator "$FLOWS/helm_charts/operators-latest/helm" "$FLOWS/helm_charts/operators-latest/profile"

# ---- simulated clusters ----
start_sim() {  # start_sim NAME...
  SIM=$WORK/sim-$RANDOM
  local args=()
  for n in "$@"; do args+=(--name "$n"); done
  "$EMCO" sim start --dir "$SIM" --clusters $# "${args[@]}" --ready-delay-ms 200 >"$WORK/sim.log" 2>&1 &
  for _ in $(seq 1 100); do
    [ -f "$SIM/sim.json" ] && return 0
    sleep 0.1
  done
  cat "$WORK/sim.log" >&2
  fail "the simulator did not start"
}
stop_sim() {
  "$EMCO" sim stop --dir "$SIM" >/dev/null
  SIM=""
}
kc() { echo "$SIM/kubeconfigs/$1.yaml"; }

# What a cluster holds that emco deployed: "kind/name" lines, sorted.
objects() {
  kubectl --kubeconfig "$(kc "$1")" get configmaps,services,daemonsets,deployments,statefulsets,secrets,networkpolicies \
    -A -l emco/deployment-id -o name | sort
}
expect_empty() {
  local got
  got=$(objects "$1")
  [ -z "$got" ] || fail "$1 should hold nothing from emco, holds: $(echo $got)"
}
expect_has() {  # expect_has CLUSTER KIND/NAME-SUBSTRING...
  local got
  got=$(objects "$1")
  shift
  for want in "$@"; do
    grep -q -- "$want" <<<"$got" || fail "expected '$want' on the cluster, it holds: $(echo $got)"
  done
}
etcd_replicas() {  # spec.replicas of the etcd StatefulSet emco deployed on cluster1
  kubectl --kubeconfig "$(kc cluster1)" get statefulsets -A -l emco/deployment-id \
    -o jsonpath='{range .items[?(@.metadata.name=="etcd")]}{.spec.replicas}{end}'
}
dig_state() {  # dig_state DIG-ADDRESS -> deployedStatus
  em dig status "$1" --status deployed -o json | jq -r .deployedStatus
}
apply() {  # apply FILE [emco apply flags]
  local f=$1
  shift
  if [ "$HTTP" = 1 ]; then
    ctl apply "$f"
    return
  fi
  em apply -f "$f" -v "$VALUES" "$@"
}
change() {  # change FILE: resources that exist, changed (emcoctl update: PUT), as upstream's READMEs do it
  if [ "$HTTP" = 1 ]; then
    ctl update "$1"
    return
  fi
  em update -f "$1" -v "$VALUES"
}
remove() {  # remove FILE: emco delete -f, or emcoctl's delete over HTTP
  if [ "$HTTP" = 1 ]; then
    ctl delete "$1" >/dev/null
    return
  fi
  em delete -f "$1" -v "$VALUES" >/dev/null
}
new_workspace() {
  WS=$WORK/ws-$1
  "$EMCO" init "$WS" >/dev/null
  if [ "$HTTP" = 1 ]; then start_server; fi
}

# ---- HTTP mode: one `emco serve`, a port per EMCO service ----
SERVICES=(orchestrator clm ncm dcm rsync ovnaction gac dtc hpaPlacement sfc sfcClient workflowMgr tac caCert policy)
CTL=""
if [ "$HTTP" = 1 ]; then
  if [ -n "${EMCOCTL:-}" ]; then
    CTL=$(realpath "$EMCOCTL")
  else
    command -v go >/dev/null || fail "--http needs Go to build scripts/emcoctl-http (apt-get install golang-go golang-gopkg-yaml.v3-dev), or EMCOCTL"
    CTL=$WORK/emcoctl-http
    (cd "$(dirname "$0")/emcoctl-http" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$WORK/gocache go build -o "$CTL" .) ||
      fail "cannot build scripts/emcoctl-http"
  fi
  echo "== HTTP mode: client $CTL"
fi
start_server() {
  local args=() i port
  for _ in "${SERVICES[@]}"; do args+=(--listen 127.0.0.1:0); done
  EMCO_WORKSPACE="$WS" "$EMCO" serve "${args[@]}" -q >"$WS.serve.out" 2>"$WS.serve.log" &
  SERVER=$!
  for _ in $(seq 1 100); do
    [ "$(grep -c "serving EMCO's REST API" "$WS.serve.out" 2>/dev/null)" = ${#SERVICES[@]} ] && break
    sleep 0.1
  done
  [ "$(grep -c "serving EMCO's REST API" "$WS.serve.out" 2>/dev/null)" = ${#SERVICES[@]} ] || {
    cat "$WS.serve.log" >&2
    fail "emco serve did not start"
  }
  CFG=$WS.emcoctl.yaml
  : >"$CFG"
  i=0
  while read -r line; do
    port=${line##*:}
    port=${port%%/*}
    echo "${SERVICES[$i]}: {host: 127.0.0.1, port: $port}" >>"$CFG"
    i=$((i + 1))
  done < <(grep "serving EMCO's REST API" "$WS.serve.out")  # one line per port; "dashboard on ..." lines follow
}
stop_server() {
  if [ -n "$SERVER" ]; then
    kill "$SERVER"
    wait "$SERVER" || true
    SERVER=""
  fi
}
ctl() {  # ctl apply|update|delete FILE [CODES]: the client over HTTP, then wait for the delivery
  local out
  out=$(cd "$(dirname "$2")" && "$CTL" --config "$CFG" "$1" -f "$2" -v "$VALUES") || fail "$CTL $1 -f $2 failed: $out"
  # Upstream's answers to what these files do: 201 and 202 (lifecycle) to
  # apply; 200 to update (PUT); 202 (terminate), 204 and 404 (a delete of
  # what is gone already) to delete; CODES when given (409 to a re-apply).
  local ok=${3:-}
  if [ -z "$ok" ]; then
    case $1 in apply) ok='201|202' ;; update) ok='200' ;; *) ok='202|204|404' ;; esac
  fi
  ! grep -E '^Response Code: ([0-9]+)' <<<"$out" | grep -vE " ($ok)\$" >/dev/null ||
    fail "$1 -f $2 over HTTP, answers other than $ok: $(grep -B3 -A1 -E '^Response Code: ' <<<"$out" | grep -vE "Code: ($ok)\$" | head -20)"
  settle
  echo "$out"
}
reapply() {  # reapply FILE: applying the same file again changes nothing
  local out
  if [ "$HTTP" = 1 ]; then
    # upstream's POST of what exists: 409 "... already exists", nothing changed
    out=$(ctl apply "$1" 409)
    grep -q 'already exists' <<<"$out" || fail "re-applying $1 over HTTP: $out"
    return
  fi
  out=$(apply "$1")
  [ -n "$out" ] || fail "re-applying $1 printed nothing"
  ! grep -v ' unchanged$' <<<"$out" >/dev/null || fail "re-applying $1 changed something: $(grep -v ' unchanged$' <<<"$out")"
}
settle() {  # until the flow's DIG (if it exists yet) is no longer *ing
  local state=""
  [ -n "${DIG:-}" ] || return 0
  for _ in $(seq 1 1200); do
    state=$(em dig status "$DIG" --status deployed -o json 2>/dev/null | jq -r .deployedStatus 2>/dev/null || true)
    case $state in *ing) sleep 0.1 ;; *) return 0 ;; esac
  done
  fail "the DIG is still $state"
}

# ---- test-update: instantiate on cluster1, move to cluster2 with update, roll back ----
flow_test_update() {
  local F=$FLOWS/test-update
  start_sim cluster1 cluster2
  new_workspace test-update
  VALUES=$WORK/test-update-values.yaml
  cat >"$VALUES" <<EOF
ProjectName: proj-update-1
ClusterProvider: provider-update
ClusterLabel: edge-cluster
AdminCloud: default
CompositeApp: test-composite-app
CompositeProfile: test-composite-profile
GenericPlacementIntent: test-placement-intent
DeploymentIntent: test-deployment-intent
Intent: intent
PackagesPath: $PKG
HostIP: 127.0.0.1
RsyncPort: 9031
GacPort: 9033
OvnPort: 9032
DtcPort: 9048
NpsPort: 9038
APP1: collectd
Clusters:
  - Name: cluster1
    KubeConfig: $(kc cluster1)
  - Name: cluster2
    KubeConfig: $(kc cluster2)
Applist:
  - Name: collectd
    Cluster: [cluster1]
    UpdateCluster: [cluster2]
EOF
  local DIG=proj-update-1/test-composite-app/v1/test-deployment-intent
  step "test-update: prerequisites and intents"
  for f in 00-controllers 01-prerequisites 02-deployment-intent; do apply "$F/$f.yaml" >/dev/null; done
  expect_empty cluster1
  # Re-applying the same files changes nothing: every line says 'unchanged'
  # (over HTTP: every POST answers 409).
  local out
  for f in 00-controllers 02-deployment-intent; do reapply "$F/$f.yaml"; done
  step "test-update: instantiate"
  apply "$F/03-instantiation.yaml"
  [ "$(dig_state $DIG)" = Instantiated ] || fail "DIG is $(dig_state $DIG) after instantiate"
  expect_has cluster1 daemonset.apps/ configmap/ service/
  expect_empty cluster2
  local first
  first=$(objects cluster1)
  step "test-update: move collectd to cluster2 and update"
  out=$(change "$F/04-update-deployment-intent.yaml")
  [ "$HTTP" = 1 ] || grep -q 'app-intents/collectd-placement-intent configured$' <<<"$out" || fail "04 did not reconfigure the app intent: $out"
  [ "$(em get "projects/proj-update-1/composite-apps/test-composite-app/v1/deployment-intent-groups/test-deployment-intent/generic-placement-intents/test-placement-intent/app-intents/collectd-placement-intent" -o json |
      jq -r '.spec.intent.allOf[0].cluster')" = cluster2 ] || fail "the app intent does not name cluster2 after 04"
  apply "$F/05-update.yaml"
  [ "$(dig_state $DIG)" = Instantiated ] || fail "DIG is $(dig_state $DIG) after update"
  expect_empty cluster1
  [ "$(objects cluster2)" = "$first" ] || fail "cluster2 should hold what cluster1 held: $(objects cluster2)"
  step "test-update: roll back to revision 1"
  apply "$F/06-rollback.yaml"
  [ "$(objects cluster1)" = "$first" ] || fail "cluster1 after rollback: $(objects cluster1)"
  expect_empty cluster2
  em dig history "$DIG"
  step "test-update: teardown (delete in reverse terminates)"
  remove "$F/03-instantiation.yaml"
  expect_empty cluster1
  expect_empty cluster2
  for f in 02-deployment-intent 01-prerequisites; do
    remove "$F/$f.yaml"
  done
  stop_server
  stop_sim
}

# ---- test-gac: generic k8s intents, update and rollback ----
flow_test_gac() {
  local F=$FLOWS/test-gac
  start_sim cluster1
  new_workspace test-gac
  VALUES=$WORK/test-gac-values.yaml
  cat >"$VALUES" <<EOF
ProjectName: proj1
ClusterProvider: provider1
Cluster: cluster1
ClusterLabel: edge-cluster1
ClusterRef: lc-cl-1
AdminCloud: default
App1: operator
App2: collectd
KubeConfig: $(kc cluster1)
HelmApp1: $PKG/operator.tar.gz
HelmApp2: $PKG/collectd.tar.gz
ProfileApp1: $PKG/operator_profile.tar.gz
ProfileApp2: $PKG/collectd_profile.tar.gz
CompositeProfile: collection-composite-profile
GenericPlacementIntent: collection-placement-intent
DeploymentIntent: collection-deployment-intent-group
CompositeAppGac: gac-composite-app
GacIntent: operator-gac-intent
IstioIngressGatewayKvName: istioingressgatewaykvpairs
DatabaseAuthorizationKvName: databaseauthorizationkvpairs
ClusterIstioIngressGatewayAddress: 192.168.121.26
HostIP: 127.0.0.1
RsyncPort: 9031
GacPort: 9033
OvnPort: 9032
DtcPort: 9048
NpsPort: 9038
EOF
  local DIG=proj1/gac-composite-app/v1/collection-deployment-intent-group
  step "test-gac: prerequisites, apps, intents, customizations"
  for f in controllers projects clusters logicalclouds instantiatelc apps intents test-gac; do
    apply "$F/$f.yaml" >/dev/null
  done
  expect_empty cluster1
  # intents.yaml ends with the DIG's approve; the kv pairs and the cloud's
  # cluster reference are as the files say; test-gac.yaml's 7 resources are there.
  [ "$(dig_state $DIG)" = Approved ] || fail "DIG is $(dig_state $DIG) after intents.yaml (expected Approved)"
  [ "$(em cluster kv get provider1/cluster1/istioingressgatewaykvpairs -o json | jq -r '.spec.kv[0].istioingressgatewayaddress')" = 192.168.121.26 ] ||
    fail "cluster kv pairs are not as clusters.yaml says"
  [ "$(em lc cluster-ref get proj1/default/lc-cl-1 -o json | jq -r .spec.cluster)" = cluster1 ] || fail "cluster reference lc-cl-1"
  local GAC=projects/proj1/composite-apps/gac-composite-app/v1/deployment-intent-groups/collection-deployment-intent-group/generic-k8s-intents/operator-gac-intent/resources
  [ "$(em get "$GAC" -o json | jq length)" = 7 ] || fail "test-gac.yaml should create 7 resources: $(em get "$GAC" -o json | jq -c '[.[].metadata.name]')"
  [ "$(em get "$GAC/netpol-db/customizations/netpol-db-customization" -o json | jq -r '.spec.patchJson[0].value')" = database ] ||
    fail "netpol-db-customization's patch"
  reapply "$F/test-gac.yaml"
  step "test-gac: instantiate"
  apply "$F/instantiate.yaml"
  [ "$(dig_state $DIG)" = Instantiated ] || fail "DIG is $(dig_state $DIG) after instantiate"
  # The generic k8s intent adds resources next to the chart's.
  expect_has cluster1 statefulset.apps/etcd networkpolicy.networking.k8s.io/ configmap/
  local first replicas
  first=$(objects cluster1)
  replicas=$(etcd_replicas)
  [ "$replicas" = 1 ] || fail "etcd has $replicas replicas after instantiate (the chart says 1)"
  step "test-gac: update"
  # test-gac-update.yaml patches the etcd StatefulSet to 2 replicas: the same
  # objects, one of them changed.
  change "$F/test-gac-update.yaml" >/dev/null
  apply "$F/update.yaml"
  [ "$(dig_state $DIG)" = Instantiated ] || fail "DIG is $(dig_state $DIG) after update"
  [ "$(etcd_replicas)" = 2 ] || fail "the update did not reach cluster1: etcd has $(etcd_replicas) replicas, expected 2"
  [ "$(objects cluster1)" = "$first" ] || fail "cluster1 after update: $(objects cluster1) (expected: $(echo $first))"
  step "test-gac: rollback"
  apply "$F/rollback.yaml"
  [ "$(objects cluster1)" = "$first" ] || fail "cluster1 after rollback: $(objects cluster1) (expected: $(echo $first))"
  [ "$(etcd_replicas)" = 1 ] || fail "etcd has $(etcd_replicas) replicas after the rollback, expected 1"
  step "test-gac: terminate"
  apply "$F/terminate.yaml"
  expect_empty cluster1
  apply "$F/terminatelc.yaml" >/dev/null
  stop_server
  stop_sim
}

# ---- multi-cluster: 3 clusters ----
flow_multi_cluster() {
  local F=$FLOWS/multi-cluster
  start_sim cluster1 cluster2 cluster3
  new_workspace multi-cluster
  VALUES=$WORK/multi-cluster-values.yaml
  cat >"$VALUES" <<EOF
ProjectName: proj-multi
ClusterProvider: provider-multi
ClusterLabel: edge-cluster
AdminCloud: default
CompositeApp: multi-composite-app
CompositeProfile: multi-composite-profile
GenericPlacementIntent: multi-placement-intent
DeploymentIntent: multi-deployment-intent
Intent: intent
PackagesPath: $PKG
HostIP: 127.0.0.1
RsyncPort: 9031
GacPort: 9033
OvnPort: 9032
DtcPort: 9048
NpsPort: 9038
Clusters:
  - Name: cluster1
    KubeConfig: $(kc cluster1)
  - Name: cluster2
    KubeConfig: $(kc cluster2)
  - Name: cluster3
    KubeConfig: $(kc cluster3)
Applist:
  - Name: collectd
    Cluster: [cluster1, cluster2, cluster3]
EOF
  local DIG=proj-multi/multi-composite-app/v1/multi-deployment-intent
  step "multi-cluster: prerequisites and logical cloud"
  for f in 00-controllers 01-prerequisites 02-instantiate-lc 03-deployment-intent; do apply "$F/$f.yaml" >/dev/null; done
  step "multi-cluster: instantiate on 3 clusters"
  apply "$F/04-deployment-instantiate.yaml"
  [ "$(dig_state $DIG)" = Instantiated ] || fail "DIG is $(dig_state $DIG) after instantiate"
  local first
  first=$(objects cluster1)
  [ -n "$first" ] || fail "cluster1 holds nothing"
  for c in cluster2 cluster3; do [ "$(objects $c)" = "$first" ] || fail "$c differs from cluster1: $(objects $c)"; done
  em dig status "$DIG" --status ready --output summary
  step "multi-cluster: teardown"
  for f in 04-deployment-instantiate 03-deployment-intent 02-instantiate-lc 01-prerequisites 00-controllers; do
    remove "$F/$f.yaml"
  done
  for c in cluster1 cluster2 cluster3; do expect_empty $c; done
  stop_server
  stop_sim
}

for flow in "${SELECTED[@]}"; do
  case $flow in
    test-update) flow_test_update ;;
    test-gac) flow_test_gac ;;
    multi-cluster) flow_multi_cluster ;;
    *) fail "unknown flow '$flow'" ;;
  esac
  echo "PASS: $flow$([ "$HTTP" = 1 ] && echo " (over HTTP)")"
done
