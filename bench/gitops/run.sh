#!/usr/bin/env bash
# GitOps delivery benchmark: emco vs the git CLI.
# usage: bench/gitops/run.sh [--smoke] BUILD_DIR
#   library (gitops_bench): 10 apps x 1000 clusters x 10 resources, over
#     file:// and git daemon (smoke: 20 clusters, file:// only)
#   commands (emco_cli.sh): `emco dig instantiate` / `emco dig update` of 10
#     apps onto 1000 GitOps clusters sharing one repository (smoke: 20)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
build="$(realpath "${1:-build}")"
bin="$build/bench/gitops/gitops_bench"
[ -x "$bin" ] || { echo "gitops bench: $bin not built (ninja -C $build gitops_bench)" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/emco-gitops-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
[ -x "$build/emco" ] || { echo "gitops bench: $build/emco not built (ninja -C $build emco)" >&2; exit 1; }
if [ $smoke = 1 ]; then
  "$bin" --clusters 20 --work "$work/file" --script "$here/git_cli.sh"
  "$here/emco_cli.sh" "$build/emco" 20 "$work/cli"
else
  "$here/emco_cli.sh" "$build/emco" 1000 "$work/cli"
  rm -rf "$work/cli"
  "$bin" --clusters 1000 --remote file --work "$work/file" --script "$here/git_cli.sh"
  rm -rf "$work/file"
  "$bin" --clusters 1000 --remote daemon --work "$work/daemon" --script "$here/git_cli.sh"
fi
