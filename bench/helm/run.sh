#!/usr/bin/env bash
# Helm rendering benchmark: emco (one process) vs the sum of `helm template` runs over
# the developer corpus (../shared/charts or $EMCO_CHARTS).
#   bench/helm/run.sh [--smoke] BUILD_DIR [CHART...]
# --smoke renders three charts with emco only (no helm download), once. CHART names limit the
# run to those charts (e.g. all but the ones that make RSA keys).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
mode=full
if [ "${1:-}" = "--smoke" ]; then mode=smoke; shift; fi
build="$(realpath "${1:-build}")"
shift || true
corpus="${EMCO_CHARTS:-$(dirname "$repo")/shared/charts}"
bench="$build/bench/helm/helm_bench"
[ -x "$bench" ] || { echo "bench/helm: $bench is not built" >&2; exit 2; }
[ -d "$corpus" ] || { echo "bench/helm: corpus $corpus not found" >&2; exit 2; }
if [ "$mode" = smoke ]; then
  exec "$bench" "$corpus" --reps 1 emco-gms-frontend emco-collectd prometheus-adapter
fi
tools="${EMCO_HELM_TOOLS:-$build/bench-tools}"
helm="$("$(dirname "$repo")/shared/tools/get-helm" "$tools")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp" HELM_CACHE_HOME="$tmp/cache" HELM_CONFIG_HOME="$tmp/config" HELM_DATA_HOME="$tmp/data"
exec "$bench" "$corpus" --helm "$helm" --reps 5 "$@"
