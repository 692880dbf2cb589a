#!/usr/bin/env bash
# The simulator's own capacity: requests/s (wrk, and sim_load's applies over
# every cluster) and memory per cluster at 1,000 and 10,000 clusters.
#   bench/sim/run.sh [--smoke] BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
build="$(realpath "${1:-build}")"
serve="$build/bench/sim/sim_serve"
load="$build/bench/sim/sim_load"
if [ ! -x "$serve" ] || [ ! -x "$load" ]; then
  echo "bench/sim: build sim_serve and sim_load first (ninja -C $build sim_serve sim_load)" >&2
  exit 1
fi
work="$(mktemp -d)"
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid"; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

start() {  # start CLUSTERS -> sets pid, port, dir
  dir="$work/sim-$1"
  "$serve" "$dir" "$1" 0 >"$work/serve.out" 2>"$work/serve.err" &
  pid=$!
  for _ in $(seq 1 600); do
    [ -f "$dir/sim.json" ] && break
    sleep 0.1
  done
  [ -f "$dir/sim.json" ] || { echo "bench/sim: simulator did not start" >&2; cat "$work/serve.err" >&2; exit 1; }
  port=$(sed -n 's/.*"port": \([0-9]*\).*/\1/p' "$dir/sim.json")
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
token_of() { sed -n 's/^ *token: //p' "$dir/kubeconfigs/$1.yaml"; }

if [ "$smoke" = 1 ]; then duration=2s; sizes="100 1000"; objects=3; else duration=5s; sizes="1000 10000"; objects=10; fi

echo "== memory per cluster"
for n in $sizes; do
  start "$n"
  idle=$(rss_kb)
  "$load" "$dir" 1 2 >/dev/null
  touched=$(rss_kb)
  "$load" "$dir" "$objects" 2 >"$work/load.json"
  full=$(rss_kb)
  echo "clusters=$n rss_idle_kb=$idle rss_after_1_object_each_kb=$touched rss_after_${objects}_objects_each_kb=$full" \
       "per_cluster_idle_kb=$((idle / n)) per_cluster_${objects}_objects_kb=$((full / n))"
  echo "sim_load applies over all $n clusters (2 threads, keep-alive): $(cat "$work/load.json")"
  stop
done

echo "== requests/s on one cluster (wrk -t2 -c64 -d$duration)"
start 10
if command -v wrk >/dev/null; then
  token=$(token_of cluster-01)
  url="https://127.0.0.1:$port/clusters/cluster-01"
  echo "GET object (404 Status, the cheapest path):"
  wrk -t2 -c64 -d"$duration" -H "Authorization: Bearer $token" "$url/api/v1/namespaces/default/configmaps/none" | \
    grep -E 'Requests/sec|Latency|Non-2xx' || true
  echo "GET namespace (200):"
  wrk -t2 -c64 -d"$duration" -H "Authorization: Bearer $token" "$url/api/v1/namespaces/default" | \
    grep -E 'Requests/sec|Latency|Non-2xx' || true
  echo "apply/GET mix (3:1 server-side apply of 1000 ConfigMaps):"
  SIM_TOKEN="$token" SIM_PREFIX="/clusters/cluster-01" \
    wrk -t2 -c64 -d"$duration" -s "$here/apply.lua" "$url" | grep -E 'Requests/sec|Latency|Non-2xx' || true
else
  echo "wrk not installed: skipping the wrk runs"
fi
stop
