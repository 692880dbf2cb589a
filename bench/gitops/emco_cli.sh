#!/usr/bin/env bash
# GitOps delivery through the real emco commands: N GitOps clusters sharing
# one file:// repository, 10 apps (the quickstart chart) placed on all of
# them; `emco dig instantiate`, then `emco dig update` after one app's value
# changed. Baseline: the git CLI committing and pushing the very same files
# (taken from emco's commits; the update writes only the changed files)
# into its own clone (write, add -A, commit, push). Prints the timings, the
# ratios and the repository sizes.
# usage: emco_cli.sh EMCO_BINARY CLUSTERS WORKDIR
set -euo pipefail
emco=$(realpath "$1") n=$2 work=$3
repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
chart="$repo_root/examples/quickstart/charts/hello"
apps=10
mkdir -p "$work"
cd "$work"
now() { date +%s.%N; }
git init -q --bare -b main remote.git
export LSAN_OPTIONS="suppressions=$work/lsan.supp"
printf 'leak:libgit2.so\nleak:libpcre2-8.so\nleak:libssh2.so\nleak:libcrypto.so\n' > lsan.supp

mkdir -p ws
cd ws
"$emco" init > /dev/null
source "$repo_root/bench/support/fleet.sh"
fleet_yaml "$n" gitops "file://$work/remote.git" > fleet.yaml
apps_yaml "$apps" "$chart" "$work/profiles" > apps.yaml
"$emco" apply -f fleet.yaml > /dev/null
"$emco" apply -f apps.yaml > /dev/null
"$emco" dig approve bench/ca/v1/dig > /dev/null

t0=$(now)
"$emco" dig instantiate bench/ca/v1/dig --timeout 30m > /dev/null 2> "$work/instantiate.log" ||
  { cat "$work/instantiate.log" >&2; exit 1; }
t1=$(now)
printf 'message: "app 0, changed"\n' > "$work/profiles/app0/override_values.yaml"
"$emco" apply -f apps.yaml > /dev/null
t2=$(now)
"$emco" dig update bench/ca/v1/dig --timeout 30m > /dev/null 2> "$work/update.log" ||
  { cat "$work/update.log" >&2; exit 1; }
t3=$(now)
cd "$work"
commits=$(git --git-dir=remote.git rev-list --count main)
[ "$commits" = 2 ] || { echo "emco made $commits commits, expected 2" >&2; exit 1; }
files=$(git --git-dir=remote.git ls-tree -r --name-only main | wc -l)
changed=$(git --git-dir=remote.git show --name-only --format= main | wc -l)

# The git CLI doing the same two commits with the same files.
git init -q --bare -b main cli.git
git clone -q cli.git clone 2> /dev/null
# The update writes only the files emco's update changed.
mkdir first second
git --git-dir=remote.git archive main~1 | tar -x -C first
# One archive of the whole tree, extracting only the changed files (xargs
# would split a long list into several archives, and tar stops at the end of
# the first).
git --git-dir=remote.git diff --name-only --diff-filter=AM -z main~1 main > changed.lst
git --git-dir=remote.git archive main | tar -x -C second --null -T changed.lst
c0=$(now)
(cp -R first/. clone/ && cd clone && git add -A && git -c user.name=b -c user.email=b@x commit -q -m instantiate &&
  git push -q origin HEAD:main)
c1=$(now)
(cp -R second/. clone/ && cd clone && git add -A && git -c user.name=b -c user.email=b@x commit -q -m update &&
  git push -q origin HEAD:main)
c2=$(now)
[ "$(git --git-dir=cli.git rev-parse main^{tree})" = "$(git --git-dir=remote.git rev-parse main^{tree})" ] ||
  { echo "the git CLI tree differs from emco's" >&2; exit 1; }

awk -v n="$n" -v apps="$apps" -v files="$files" -v changed="$changed" \
  -v ei="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v eu="$(awk -v a="$t2" -v b="$t3" 'BEGIN { print b - a }')" \
  -v gi="$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" -v gu="$(awk -v a="$c1" -v b="$c2" 'BEGIN { print b - a }')" \
  -v es="$(du -sk remote.git | cut -f1)" -v gs="$(du -sk cli.git | cut -f1)" 'BEGIN {
  printf "emco commands, %d GitOps clusters x %d apps, one file:// repository (%d files; update changed %d)\n", n, apps, files, changed
  printf "  instantiate: emco dig instantiate %.2f s (plan + render + commit + push) vs git CLI %.2f s (add, commit, push only): %.1fx\n", ei, gi, gi / ei
  printf "  update:      emco dig update      %.2f s vs git CLI %.2f s: %.1fx\n", eu, gu, gu / eu
  printf "  repository size: emco %d KiB, git CLI %d KiB\n", es, gs
}'
