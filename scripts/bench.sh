#!/usr/bin/env bash
# Runs every benchmark: bench/<name>/run.sh [--smoke] BUILD_DIR.
# --smoke gives each a small, quick configuration (CI runs it so).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=""
if [ "${1:-}" = "--smoke" ]; then mode=--smoke; shift; fi
build="$(realpath "${1:-build}")"
status=0
for run in bench/*/run.sh; do
  [ -f "$run" ] || continue
  echo "--- $run $mode"
  if ! bash "$run" $mode "$build"; then
    echo "bench: $run failed" >&2
    status=1
  fi
done
exit $status
