#!/usr/bin/env bash
# The quickstart, end to end, on embedded defaults: a fresh workspace, three
# simulated clusters (emco sim), a composite app made of one Helm chart placed
# by label, then check, plan, deploy, status and terminate; it ends with how to
# open the dashboard of `emco serve` (DEMO_SERVE=1: serve the deployed demo).
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

# Three simulated clusters (emco sim): real HTTPS endpoints on loopback
# with a kubeconfig each.
say "$emco sim start --clusters 3 --dir $work/sim &"
"$emco" sim start --clusters 3 --name edge1 --name edge2 --name edge3 --dir "$work/sim" --ready-delay-ms 200 \
  > "$work/sim.log" 2>&1 &
trap '"$emco" sim stop --dir "$work/sim" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -f "$work/sim/kubeconfigs/edge3.yaml" ] && [ -f "$work/sim/sim.pid" ] && break; sleep 0.1; done
clusters=""
for i in 1 2 3; do
  clusters="$clusters  - {Name: edge$i, KubeConfig: $work/sim/kubeconfigs/edge$i.yaml}"$'\n'
done
sed -i '/^Clusters:/d' values.yaml
printf 'Clusters:\n%s' "$clusters" >> values.yaml

run "$emco" init
run "$emco" apply -f 01-clusters.yaml -v values.yaml
run "$emco" apply -f 02-project.yaml -v values.yaml
run "$emco" apply -f 03-app.yaml -v values.yaml
run "$emco" cluster list
run "$emco" dig list
run "$emco" cluster check
run "$emco" dig plan quickstart/hello-app/v1/hello-dig || true   # exit 2: changes to make
run "$emco" apply -f 04-deploy.yaml -v values.yaml
run "$emco" dig status quickstart/hello-app/v1/hello-dig
run "$emco" dig diff --live quickstart/hello-app/v1/hello-dig   # exit 0: the clusters match the plan
if command -v kubectl >/dev/null; then
  # Drift: someone scales by hand; emco names who, and repairs only that.
  run kubectl --kubeconfig "$work/sim/kubeconfigs/edge2.yaml" scale deployment r1-hello --replicas 5
  run "$emco" dig diff --live quickstart/hello-app/v1/hello-dig || true   # exit 2: drift
  run "$emco" dig sync --repair quickstart/hello-app/v1/hello-dig
fi
if [ "${DEMO_SERVE:-0}" = 1 ]; then
  say "$emco serve --allow-actions     # open http://127.0.0.1:9015/ ; Ctrl-C goes on with the demo"
  "$emco" serve --allow-actions || true
fi
run "$emco" delete -f 04-deploy.yaml -v values.yaml
say "re-applying unchanged files changes nothing"
"$emco" apply -f 03-app.yaml -v values.yaml | sed -n '1,3p'
echo
echo "demo finished: workspace was $work"
cat <<EOF

The dashboard: in a workspace run
  emco serve                    # read-only
  emco serve --allow-actions    # with approve/instantiate/update/rollback/stop/terminate buttons
and open http://127.0.0.1:9015/ in a browser (README, "Dashboard").
DEMO_SERVE=1 make demo serves this demo's deployed quickstart before it is terminated.
EOF
