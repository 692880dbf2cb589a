#!/usr/bin/env bash
# Deployment benchmark: instantiate 10 apps onto N simulated clusters, then an
# update changing one value in one app (requests and times), and the status
# of N clusters x 100 resources vs the sqlite3 shell reading the same rows; then (issue
# 24) instantiate all at once vs in 10 waves with zero minSuccessTime, side
# by side (medians of 3 runs; smoke: 1 run).
# usage: bench/deploy/run.sh [--smoke] BUILD_DIR
#   full:  1000 clusters;  smoke: 20 clusters
set -euo pipefail
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
build="$(realpath "${1:-build}")"
bin="$build/bench/deploy/deploy_bench"
[ -x "$bin" ] || { echo "deploy bench: $bin not built (ninja -C $build deploy_bench)" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/emco-deploy-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
if [ $smoke = 1 ]; then
  "$bin" --clusters 20 --apps 10 --resources 100 --work "$work"
  "$bin" --mode rollout --clusters 20 --apps 10 --runs 1 --work "$work/rollout"
else
  "$bin" --clusters 1000 --apps 10 --resources 100 --parallel 64 --work "$work"
  "$bin" --mode rollout --clusters 1000 --apps 10 --runs 3 --parallel 64 --work "$work/rollout"
fi
