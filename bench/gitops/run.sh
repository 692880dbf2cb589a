#!/usr/bin/env bash
# GitOps delivery benchmark: emco's libgit2 delivery vs the git CLI.
# usage: bench/gitops/run.sh [--smoke] BUILD_DIR
#   full:  10 apps x 1000 clusters x 10 resources, over file:// and git daemon
#   smoke: 10 apps x 20 clusters, file:// only
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
build="$(realpath "${1:-build}")"
bin="$build/bench/gitops/gitops_bench"
[ -x "$bin" ] || { echo "gitops bench: $bin not built (ninja -C $build gitops_bench)" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/emco-gitops-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
if [ $smoke = 1 ]; then
  "$bin" --clusters 20 --work "$work/file" --script "$here/git_cli.sh"
else
  "$bin" --clusters 1000 --remote file --work "$work/file" --script "$here/git_cli.sh"
  rm -rf "$work/file"
  "$bin" --clusters 1000 --remote daemon --work "$work/daemon" --script "$here/git_cli.sh"
fi
