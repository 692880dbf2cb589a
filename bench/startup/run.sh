#!/usr/bin/env bash
# Start-up benchmark (issue 22, "Must show" 2): how long a short emco command
# takes as a whole process, side by side with git and sqlite3 in one
# hyperfine run (goal: median <= 2 ms for each emco command).
#   bench/startup/run.sh [--smoke] BUILD_DIR
# Commands: `emco --version`, `emco get` of one resource and `emco dig
# status` of a small workspace (the quickstart deployed on three simulated
# clusters, which are stopped again: status reads the workspace). The last
# row, the sqlite3 shell reading one row of that workspace's database, is
# the floor SQLite itself sets for a command that reads it (opening a WAL
# database as its first connection, parsing its schema). Prints each
# command's median and mean, emco's medians against git's and the goal, and
# the machine's load before and after. --smoke: 20 runs each instead of 300.
set -euo pipefail
runs=300 warmup=30
if [ "${1:-}" = "--smoke" ]; then runs=20 warmup=3; shift; fi
build="$(realpath "${1:-build}")"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
emco="$build/emco"
[ -x "$emco" ] || { echo "bench/startup: $emco is not built" >&2; exit 2; }
for tool in hyperfine git sqlite3 python3; do
  command -v "$tool" >/dev/null || { echo "bench/startup: $tool is not installed (scripts/install-deps)" >&2; exit 2; }
done
tmp="$(mktemp -d)"
sim_dir="$tmp/sim"
trap '"$emco" sim stop --dir "$sim_dir" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
cd "$tmp"

# The small workspace: the quickstart example (3 clusters, one project, one
# composite app of one chart) instantiated on simulated clusters.
cp -r "$repo/examples/quickstart" qs
"$emco" sim start --clusters 3 --name edge1 --name edge2 --name edge3 --dir "$sim_dir" > sim.log 2>&1 &
for _ in $(seq 200); do [ -f "$sim_dir/kubeconfigs/edge3.yaml" ] && [ -f "$sim_dir/sim.pid" ] && break; sleep 0.05; done
[ -f "$sim_dir/sim.pid" ] || { echo "bench/startup: emco sim did not start:" >&2; cat sim.log >&2; exit 1; }
sed -i '/^Clusters:/d' qs/values.yaml
{
  echo "Clusters:"
  for i in 1 2 3; do echo "  - {Name: edge$i, KubeConfig: $sim_dir/kubeconfigs/edge$i.yaml}"; done
} >> qs/values.yaml
mkdir ws
"$emco" init ws > /dev/null
for f in 01-clusters 02-project 03-app 04-deploy; do
  (cd qs && "$emco" apply -q --workspace "$tmp/ws" -f "$f.yaml" -v values.yaml > /dev/null)
done
"$emco" sim stop --dir "$sim_dir" > /dev/null

dig=quickstart/hello-app/v1/hello-dig
one=projects/quickstart
# Each command must work before it is timed (hyperfine -N would time a failure too).
"$emco" get --workspace ws "$one" > /dev/null
"$emco" dig status --workspace ws "$dig" | grep -q Instantiated ||
  { echo "bench/startup: the DIG is not instantiated" >&2; "$emco" dig status --workspace ws "$dig" >&2; exit 1; }

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --style none --warmup "$warmup" --runs "$runs" --export-json times.json \
  -n "emco --version" "$emco --version" \
  -n "emco get $one" "$emco get --workspace ws $one" \
  -n "emco dig status" "$emco dig status --workspace ws $dig" \
  -n "git --version" "git --version" \
  -n "sqlite3 :memory: 'select 1'" "sqlite3 :memory: 'select 1'" \
  -n "sqlite3 workspace 'select 1'" "sqlite3 ws/.emco/emco.db 'select count(*) from meta'" > /dev/null 2> hyperfine.log ||
  { cat hyperfine.log >&2; exit 1; }
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$runs" "$load_before" "$load_after" "$(nproc)" <<'PY'
import json, sys
runs, before, after, cpus = sys.argv[1:5]
res = {r["command"]: r for r in json.load(open("times.json"))["results"]}
git = res["git --version"]["median"]
print(f"startup: {runs} runs each, load average {before} before, {after} after ({cpus} CPUs)")
print(f"  {'command':34} {'median':>9} {'mean':>9} {'x git':>7}  goal <= 2 ms")
for name, r in res.items():
    m = r["median"] * 1000
    goal = ("met" if m <= 2.0 else "NOT met") if name.startswith("emco") else ""
    print(f"  {name:34} {m:7.2f} ms {r['mean'] * 1000:6.2f} ms {r['median'] / git:6.1f}x  {goal}")
PY
