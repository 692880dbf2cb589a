#!/usr/bin/env bash
# Distributed delivery benchmark (issue 21, "Must show" 7): instantiate 10
# apps (one ConfigMap each) onto N simulated clusters with 1, 2 and 4
# `emco sync --worker` processes sharing a PostgreSQL workspace; prints per
# run the total time, the jobs each worker ran and the database round trips
# per job (the workers' own connections, counted by the backend).
# usage: bench/workers/run.sh [--smoke] BUILD_DIR [CLUSTERS]
#   full: 200 clusters (a third argument sets another count); smoke: 10.
# Uses the throwaway server of scripts/pg-test-server.sh (skips, saying so,
# without PostgreSQL).
set -euo pipefail
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
build="$(realpath "${1:-build}")"
clusters=${2:-200}
[ $smoke = 1 ] && clusters=10
apps=10
emco="$build/cli/emco"
[ -x "$emco" ] || emco="$build/emco"
[ -x "$emco" ] || { echo "workers bench: emco not built in $build" >&2; exit 1; }
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/emco-workers-bench-XXXXXX")"
pgdir="/tmp/emco-pgbench-$$"
sim_pid=""
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null || true
  "$root/scripts/pg-test-server.sh" stop "$pgdir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
base="$("$root/scripts/pg-test-server.sh" start "$pgdir")"
if [ -z "$base" ]; then echo "workers bench: skipped (PostgreSQL is not installed)"; exit 0; fi

"$emco" sim start --dir "$work/sim" --clusters "$clusters" --ready-delay-ms 50 >"$work/sim.out" 2>"$work/sim.err" &
sim_pid=$!
for _ in $(seq 100); do [ -s "$work/sim.out" ] && break; sleep 0.1; done
kdir="$(head -1 "$work/sim.out")"
[ -d "$kdir" ] || { cat "$work/sim.err" >&2; exit 1; }

# The fleet: every simulated cluster in an admin logical cloud, 10 apps
# placed on all of them.
mkdir -p "$work/charts" "$work/profile"
{
  doc() { printf -- '---\nversion: emco/v2\nresourceContext:\n  anchor: %s\n%s' "$1" "${2:-}"; }
  doc cluster-providers 'metadata:
  name: p
'
  for k in "$kdir"/*.yaml; do
    n="$(basename "$k" .yaml)"
    doc cluster-providers/p/clusters "metadata:
  name: $n
file: $k
"
    doc "cluster-providers/p/clusters/$n/labels" 'clusterLabel: edge
'
  done
  doc projects 'metadata:
  name: proj
'
  doc projects/proj/logical-clouds 'metadata:
  name: lc
spec:
  level: "0"
'
  for k in "$kdir"/*.yaml; do
    n="$(basename "$k" .yaml)"
    doc projects/proj/logical-clouds/lc/cluster-references "metadata:
  name: $n
spec:
  clusterProvider: p
  cluster: $n
"
  done
  doc projects/proj/logical-clouds/lc/instantiate
  doc projects/proj/composite-apps 'metadata:
  name: ca
spec:
  compositeAppVersion: v1
'
  doc projects/proj/composite-apps/ca/v1/composite-profiles 'metadata:
  name: prof
'
  for a in $(seq -w 0 $((apps - 1))); do
    mkdir -p "$work/charts/a$a/templates"
    printf 'apiVersion: v2\nname: a%s\nversion: 0.1.0\n' "$a" >"$work/charts/a$a/Chart.yaml"
    printf 'v: v1\n' >"$work/charts/a$a/values.yaml"
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-a%s\ndata:\n  v: {{ .Values.v | quote }}\n' \
      "$a" >"$work/charts/a$a/templates/cm.yaml"
    doc projects/proj/composite-apps/ca/v1/apps "metadata:
  name: a$a
file: charts/a$a
"
    doc projects/proj/composite-apps/ca/v1/composite-profiles/prof/profiles "metadata:
  name: a$a-profile
spec:
  app: a$a
file: profile
"
  done
  printf 'version: v1\ntype:\n  values: "override_values.yaml"\n' >"$work/profile/manifest.yaml"
  printf 'v: v1\n' >"$work/profile/override_values.yaml"
  dig=projects/proj/composite-apps/ca/v1/deployment-intent-groups
  doc $dig 'metadata:
  name: d
spec:
  compositeProfile: prof
  version: d
  logicalCloud: lc
'
  doc $dig/d/intents 'metadata:
  name: intent
spec:
  intent:
    genericPlacementIntent: gpi
'
  doc $dig/d/generic-placement-intents 'metadata:
  name: gpi
'
  for a in $(seq -w 0 $((apps - 1))); do
    doc $dig/d/generic-placement-intents/gpi/app-intents "metadata:
  name: a$a-placement
spec:
  app: a$a
  intent:
    allOf:
      - clusterProvider: p
        clusterLabel: edge
"
  done
  doc $dig/d/approve
} >"$work/setup.yaml"

export EMCO_AUTO_RESUME=0
# A team workspace is encrypted: every "machine" reads the key from a file.
"$emco" workspace key generate "$work/key" >/dev/null
export EMCO_KEY_FILE="$work/key"
echo "workers bench: $apps apps x $clusters clusters ($((apps * clusters)) jobs), load: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in 1 2 4; do
  ws="$work/ws$n"
  url="$base&options=-csearch_path%3Dbench$n"
  "$emco" init "$ws" --store "$url" >/dev/null
  (cd "$work" && EMCO_WORKSPACE="$ws" "$emco" apply -f setup.yaml >/dev/null)
  # --no-wait: queued (exit 8); the workers deliver all of it.
  rc=0
  EMCO_WORKSPACE="$ws" "$emco" dig instantiate proj/ca/v1/d --no-wait >/dev/null 2>&1 || rc=$?
  [ $rc = 8 ] || { echo "workers bench: instantiate --no-wait exited $rc" >&2; exit 1; }
  start=$(date +%s.%N)
  pids=()
  for w in $(seq "$n"); do
    mkdir -p "$work/m$n-$w"
    "$emco" init "$work/m$n-$w" --store "$url" >/dev/null
    EMCO_WORKSPACE="$work/m$n-$w" HOME="$work/m$n-$w" "$emco" sync --worker --until-idle --parallel 16 -o json \
      >"$work/w$n-$w.json" 2>"$work/w$n-$w.err" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  end=$(date +%s.%N)
  status="$(EMCO_WORKSPACE="$ws" "$emco" dig status proj/ca/v1/d -o json -o summary | tr -d '\n ' | grep -o '"deployedStatus":"[A-Za-z]*"' || true)"
  python3 - "$n" "$start" "$end" "$status" "$work"/w$n-*.json <<'PY'
import json, sys
n, start, end, status = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
reports = [json.load(open(p)) for p in sys.argv[5:]]
jobs = [r["jobs"] for r in reports]
trips = sum(r["roundTrips"] for r in reports)
total = sum(jobs)
print(f"  {n} worker(s): {end - start:.1f} s, {status}, jobs per worker {jobs}, "
      f"{trips} round trips ({trips / max(total, 1):.2f} per job), {total / (end - start):.0f} jobs/s")
PY
done
