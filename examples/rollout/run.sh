#!/usr/bin/env bash
# The rollout example end to end on six simulated clusters, as two CI jobs
# would run it:
#   examples/rollout/run.sh [EMCO]     (default: emco on PATH)
# The quickstart app (examples/quickstart) with 05-rollout.yaml: the
# instantiate goes in waves (canary, eu two at a time, the rest). Job 1 runs
# 'emco dig instantiate --wait-wave' and exits after the canary wave; job 2
# runs 'emco dig rollout resume --wait-wave' until the rollout is done. A
# cluster made to refuse emco ('emco sim fault --expired-credentials') pauses
# it; once cleared, resume finishes it. Needs kubectl. Exits non-zero on the
# first check that fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
emco="$(realpath "${1:-$(command -v emco)}")"
work="$(mktemp -d "${TMPDIR:-/tmp}/emco-rollout.XXXXXX")"
sim="$work/sim"
cleanup() {
  "$emco" sim stop --dir "$sim" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
say() { printf '\n== %s\n' "$*"; }
check() { if ! "$@"; then echo "check failed: $*" >&2; exit 1; fi; }
check_not() { if "$@"; then echo "check failed: not $*" >&2; exit 1; fi; }
dig=quickstart/hello-app/v1/hello-dig

cp -r "$here/../quickstart/." "$work/"
cp "$here/05-rollout.yaml" "$work/"
cd "$work"
say "six simulated clusters"
"$emco" sim start --dir "$sim" --name edge1 --name edge2 --name edge3 --name edge4 --name edge5 --name edge6 \
  --ready-delay-ms 200 >"$work/sim.log" 2>&1 &
for _ in $(seq 100); do [ -f "$sim/kubeconfigs/edge6.yaml" ] && [ -f "$sim/sim.pid" ] && break; sleep 0.1; done
sed -i '/^Clusters:/d' values.yaml
{
  echo "Clusters:"
  for i in 1 2 3 4 5 6; do echo "  - {Name: edge$i, KubeConfig: $sim/kubeconfigs/edge$i.yaml}"; done
} >>values.yaml
export EMCO_WORKSPACE="$work/ws" EMCO_AUTO_RESUME=0
"$emco" init "$work/ws" >/dev/null
for f in 01-clusters.yaml 02-project.yaml 03-app.yaml 05-rollout.yaml; do "$emco" apply -f $f -v values.yaml >/dev/null; done
"$emco" cluster label add edge/edge4/canary >/dev/null
for c in edge1 edge2 edge3; do "$emco" cluster label add "edge/$c/eu" >/dev/null; done
"$emco" dig approve $dig >/dev/null

deployed() { kubectl --kubeconfig "$sim/kubeconfigs/$1.yaml" get configmap r1-hello >/dev/null 2>&1; }
state() { "$emco" dig rollout status $dig -o json | grep -o '"state": "[a-z]*"' | head -1 | cut -d'"' -f4; }

say "CI job 1: instantiate, first wave only"
"$emco" dig instantiate $dig --wait-wave
"$emco" dig rollout status $dig
check [ "$(state)" = waiting ]
check deployed edge4
check_not deployed edge1

say "CI job 2: the eu clusters, two at a time; edge3 refuses emco"
"$emco" sim fault edge3 --expired-credentials --dir "$sim"
sleep 1  # the simulator reads its faults file on its next tick
"$emco" dig rollout resume $dig --wait-wave
code=0; "$emco" dig rollout resume $dig --wait-wave || code=$?
check [ "$code" = 1 ]
"$emco" dig rollout status $dig
check [ "$(state)" = paused ]

say "fixed: resume runs the failed wave again, then the rest"
"$emco" sim fault edge3 --clear --dir "$sim"
sleep 1
while [ "$(state)" != done ]; do "$emco" dig rollout resume $dig --wait-wave; done
"$emco" dig rollout status $dig
"$emco" dig status $dig
for i in 1 2 3 4 5 6; do check deployed edge$i; done
"$emco" dig terminate $dig >/dev/null
echo
echo "rollout example passed"
