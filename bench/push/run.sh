#!/usr/bin/env bash
# Direct delivery benchmark: push one app of 10 resources to N simulated
# clusters with emco's Kubernetes client vs `kubectl apply --server-side -f`
# run once per cluster with `xargs -P 16`, each against a fresh simulator
# fleet (separate process). Also measures the simulator's own capacity.
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

# Starts a fresh fleet in $1; waits until it prints its kubeconfig directory.
start_sim() {
  local dir="$1"
  mkdir -p "$dir"
  "$bin" serve "$dir" "$clusters" > "$dir/out" 2> "$dir/err" &
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

# 1. emco
start_sim "$work/emco"
"$bin" push "$work/emco/kubeconfigs" "$here/app.yaml" "$parallel" > "$work/emco.txt"
cat "$work/emco.txt"
"$bin" capacity "$work/emco/kubeconfigs" "$([ $smoke = 1 ] && echo 1 || echo 3)" "$parallel" > "$work/capacity.txt"
cat "$work/capacity.txt"
stop_sim
emco_s="$(value push_seconds "$work/emco.txt")"
emco_rps="$(value requests_per_second "$work/emco.txt")"
cap_rps="$(value capacity_apply_per_second "$work/capacity.txt")"
cap_cps="$(value capacity_connect_per_second "$work/capacity.txt")"
per_cluster="$(value resources_per_cluster "$work/emco.txt")"
# A push opens one TLS connection per cluster, which the no-op capacity
# (warm connections) does not include: the same target's ceiling for the
# push's mix is one first request on a new connection plus the rest warm.
mix_rps="$(awk -v r="$per_cluster" -v c="$cap_cps" -v a="$cap_rps" 'BEGIN { printf "%.0f", r / (1 / c + (r - 1) / a) }')"
rss_kb="$(value peak_rss_kb "$work/emco.txt")"

summary_emco() {
  printf 'summary: emco %s requests/s; simulator capacity %s no-op applies/s at %s connections (%.0f%%)\n' \
    "$emco_rps" "$cap_rps" "$parallel" "$(awk -v r="$emco_rps" -v c="$cap_rps" 'BEGIN { print 100 * r / c }')"
  printf 'summary: simulator %s new TLS connections/s; ceiling for %s requests per new connection %s requests/s (emco %.0f%% of it)\n' \
    "$cap_cps" "$per_cluster" "$mix_rps" "$(awk -v r="$emco_rps" -v c="$mix_rps" 'BEGIN { print 100 * r / c }')"
  printf 'summary: emco peak memory %.1f MiB; %s of %s clusters verified\n' "$(awk -v k="$rss_kb" 'BEGIN { print k / 1024 }')" \
    "$(value verified_clusters "$work/emco.txt")" "$clusters"
}

# 2. kubectl, one process per cluster, 16 at a time
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
