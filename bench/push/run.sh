#!/usr/bin/env bash
# Direct delivery benchmark: push one app of 10 resources to N simulated
# clusters with emco's Kubernetes client vs `kubectl apply --server-side -f`
# run once per cluster with `xargs -P 16`, each against a fresh simulator
# fleet (separate process). emco pushes twice: to a fleet behind one endpoint
# (one port, a path per cluster, as behind a proxy: its clients share
# connections) and to a fleet of own ports (a port per cluster, as separate
# API servers: a TLS connection per cluster). Also measures the simulator's
# own capacity (on the own-ports fleet: warm connections, and new ones).
# usage: bench/push/run.sh [--smoke | --clusters N] BUILD_DIR
#   full:  1000 clusters     smoke: 20 clusters     --clusters N: N clusters (e.g. 10000);
#   the kubectl comparison runs up to 1,000 clusters (one kubectl process per cluster).
# Environment: KUBECTL (default /usr/lib/google-cloud-sdk/bin/kubectl.1.32),
#   PARALLEL (emco workers, default 32).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
smoke=0
clusters=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1; clusters=20 ;;
    --clusters) clusters="$2"; shift ;;
    *) break ;;
  esac
  shift
done
build="$(realpath "${1:-build}")"
bin="$build/bench/push/push_bench"
[ -x "$bin" ] || { echo "push bench: $bin not built (ninja -C $build push_bench)" >&2; exit 1; }
parallel="${PARALLEL:-32}"
kubectl="${KUBECTL:-/usr/lib/google-cloud-sdk/bin/kubectl.1.32}"
[ -x "$kubectl" ] || kubectl="$(command -v kubectl || true)"

work="$(mktemp -d "${TMPDIR:-/tmp}/emco-push-bench-XXXXXX")"
sim_pid=""
stop_sim() {
  if [ -n "$sim_pid" ]; then
    kill "$sim_pid" 2>/dev/null || true
    wait "$sim_pid" 2>/dev/null || true
    sim_pid=""
  fi
}
trap 'stop_sim; rm -rf "$work"' EXIT

# Starts a fresh fleet in $1 (with $2 = own-ports, a port per cluster);
# waits until it prints its kubeconfig directory.
start_sim() {
  local dir="$1"
  mkdir -p "$dir"
  "$bin" serve "$dir" "$clusters" ${2:-} > "$dir/out" 2> "$dir/err" &
  sim_pid=$!
  for _ in $(seq 1 600); do
    [ -s "$dir/out" ] && return 0
    kill -0 "$sim_pid" 2>/dev/null || { cat "$dir/err" >&2; return 1; }
    sleep 0.05
  done
  echo "push bench: simulator did not start" >&2
  return 1
}

value() { sed -n "s/^$1=//p" "$2"; }

echo "push bench: $clusters clusters, 10 resources each"

# 1. emco, one endpoint
start_sim "$work/emco"
"$bin" push "$work/emco/kubeconfigs" "$here/app.yaml" "$parallel" > "$work/emco.txt"
cat "$work/emco.txt"
stop_sim
# 2. emco, a port per cluster; then the simulator's capacity
start_sim "$work/own" own-ports
"$bin" push "$work/own/kubeconfigs" "$here/app.yaml" "$parallel" | sed 's/^/own_ports_/' > "$work/own.txt"
cat "$work/own.txt"
"$bin" capacity "$work/own/kubeconfigs" "$([ $smoke = 1 ] && echo 1 || echo 3)" "$parallel" > "$work/capacity.txt"
cat "$work/capacity.txt"
stop_sim
emco_s="$(value push_seconds "$work/emco.txt")"
emco_rps="$(value push_requests_per_second "$work/emco.txt")"
repush_rps="$(value repush_requests_per_second "$work/emco.txt")"
own_rps="$(value own_ports_push_requests_per_second "$work/own.txt")"
cap_rps="$(value capacity_apply_per_second "$work/capacity.txt")"
cap_cps="$(value capacity_connect_per_second "$work/capacity.txt")"
per_cluster="$(value resources_per_cluster "$work/emco.txt")"
# A push to separate API servers opens one TLS connection per cluster, which
# the no-op capacity (warm connections) does not include: the same target's
# ceiling for that mix is one first request on a new connection plus the
# rest warm. A first push creates every object, which costs the simulator
# more than a no-op apply: its rate is shown, compared is the second push's.
mix_rps="$(awk -v r="$per_cluster" -v c="$cap_cps" -v a="$cap_rps" 'BEGIN { printf "%.0f", r / (1 / c + (r - 1) / a) }')"
percent() { awk -v r="$1" -v c="$2" 'BEGIN { printf "%.0f", 100 * r / c }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

summary_emco() {
  printf 'summary: one endpoint: push %s requests/s on %s connections (every apply creates); push again %s requests/s, %s%% of the simulator'"'"'s %s no-op applies/s at %s connections (capacity)\n' \
    "$emco_rps" "$(value push_connections "$work/emco.txt")" "$repush_rps" "$(percent "$repush_rps" "$cap_rps")" "$cap_rps" "$(value capacity_parallel "$work/capacity.txt")"
  printf 'summary: own ports: push %s requests/s on %s connections; simulator %s new TLS connections/s; ceiling for %s requests per new connection %s requests/s (emco %s%% of it)\n' \
    "$own_rps" "$(value own_ports_push_connections "$work/own.txt")" "$cap_cps" "$per_cluster" "$mix_rps" "$(percent "$own_rps" "$mix_rps")"
  printf 'summary: emco peak memory %s MiB (own ports %s MiB); %s and %s of %s clusters verified\n' \
    "$(mib "$(value peak_rss_kb "$work/emco.txt")")" "$(mib "$(value own_ports_peak_rss_kb "$work/own.txt")")" \
    "$(value verified_clusters "$work/emco.txt")" "$(value own_ports_verified_clusters "$work/own.txt")" "$clusters"
}

# 3. kubectl, one process per cluster, 16 at a time (one endpoint)
if [ -z "$kubectl" ] || [ "$clusters" -gt 1000 ]; then
  [ -n "$kubectl" ] || echo "push bench: no kubectl found; skipping the kubectl comparison"
  [ "$clusters" -le 1000 ] || echo "push bench: more than 1,000 clusters; skipping the kubectl comparison"
  printf 'summary: emco %.2f s\n' "$emco_s"
  summary_emco
  exit 0
fi
start_sim "$work/kubectl"
mkdir -p "$work/kcache"
export KUBECTL_BIN="$kubectl" APP="$here/app.yaml" KCACHE="$work/kcache"
start=$(date +%s.%N)
if ! ls "$work/kubectl/kubeconfigs/"*.yaml | xargs -P 16 -I{} sh -c \
  '"$KUBECTL_BIN" --kubeconfig "$1" --cache-dir "$KCACHE/$(basename "$1" .yaml)" apply --server-side --field-manager=kubectl-bench -f "$APP" > /dev/null' _ {} \
  2> "$work/kubectl.err"; then
  echo "push bench: kubectl failed:" >&2
  head -5 "$work/kubectl.err" >&2
  exit 1
fi
end=$(date +%s.%N)
stop_sim
kubectl_s="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"

speedup="$(awk -v k="$kubectl_s" -v e="$emco_s" 'BEGIN { print k / e }')"
printf 'kubectl_seconds=%.3f\n' "$kubectl_s"
printf 'summary: emco %.2f s, kubectl (xargs -P 16) %.2f s, speedup %.1fx (goal >= 10x)\n' "$emco_s" "$kubectl_s" "$speedup"
summary_emco
