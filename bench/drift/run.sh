#!/usr/bin/env bash
# Drift benchmark (issue 24, item 4): 10 apps delivered to N simulated
# clusters, then in one run the status read-back (`emco dig status -o detail`:
# every object read back) and the drift check (`emco dig diff --live`: every
# object read back and compared), each timed; goal: drift <= 2x the read-back.
# usage: bench/drift/run.sh [--smoke] BUILD_DIR
#   full:  1000 clusters;  smoke: 20 clusters
set -euo pipefail
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
build="$(realpath "${1:-build}")"
bin="$build/bench/drift/drift_bench"
[ -x "$bin" ] || { echo "drift bench: $bin not built (ninja -C $build drift_bench)" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/emco-drift-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
if [ $smoke = 1 ]; then
  "$bin" --clusters 20 --apps 10 --work "$work"
else
  "$bin" --clusters 1000 --apps 10 --parallel 16 --work "$work"
fi
