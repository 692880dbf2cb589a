#!/usr/bin/env bash
# Prepares the wide rendering corpus (public charts emco was not tuned on, listed in
# bench/helm/wide-corpus.tsv) from local bare mirrors of their repositories, laid out
# like ../shared/charts (see its MANIFEST.md):
#
#   bench/helm/prepare-wide-corpus.sh MIRROR_ROOT OUT [NAME...]
#
# MIRROR_ROOT holds one bare git directory per repository, MIRROR_ROOT/<owner>+<name>/repo
# (the layout the session's fetch tool makes). For every chart it writes
#   OUT/<name>/chart/                 the chart at the listed commit, dependencies vendored
#                                     into chart/charts/ (from the same mirrors, no network)
#   OUT/<name>/expected-default.yaml  `helm template rel chart --namespace ns` (helm v3.17.3
#                                     from ../shared/tools/get-helm, empty HOME/HELM_*_HOME)
#   OUT/<name>/expected-default.stderr  helm's stderr, only when non-empty
#   OUT/<name>/expected-default.nondet  diff -U0 of two renders, only when they differ
# and OUT/charts.tsv (a copy of the list). The corpus only has the default variant.
# EMCO_HELM_TOOLS names the directory get-helm installs helm into (default OUT/.tools).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
[ $# -ge 2 ] || { echo "usage: prepare-wide-corpus.sh MIRROR_ROOT OUT [NAME...]" >&2; exit 2; }
mirrors="$(realpath "$1")"
out="$(realpath -m "$2")"
shift 2
list="$repo/bench/helm/wide-corpus.tsv"
mkdir -p "$out"
helm="$("$(dirname "$repo")/shared/tools/get-helm" "${EMCO_HELM_TOOLS:-$out/.tools}")"

# extract REPO COMMIT PATH DEST: the tree REPO@COMMIT:PATH becomes the directory DEST.
extract() {
  local git_dir="$mirrors/${1/\//+}/repo" tmp
  [ -d "$git_dir" ] || { echo "prepare-wide-corpus: no mirror $git_dir (fetch github:$1)" >&2; return 1; }
  tmp="$(mktemp -d)"
  # A mirror may lack its largest blobs (git archive then complains about them but
  # still writes the rest): only the chart's own files matter.
  git --git-dir="$git_dir" archive "$2" "$3" 2>/dev/null | tar -x -C "$tmp"
  mkdir -p "$(dirname "$4")"
  rm -rf "$4"
  if [ "$3" = . ]; then mv "$tmp" "$4"; else mv "$tmp/$3" "$4"; rm -rf "$tmp"; fi
}

home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
render() { # DIR SUFFIX: one `helm template` of DIR/chart, as the MANIFEST's command
  (cd "$1" && env -i PATH="$PATH" HOME="$home" HELM_CACHE_HOME="$home/cache" \
     HELM_CONFIG_HOME="$home/config" HELM_DATA_HOME="$home/data" \
     "$helm" template rel chart --namespace ns >"expected-default$2.yaml" 2>"expected-default$2.stderr")
}

cp "$list" "$out/charts.tsv"
rendered=0 failing=0
while IFS=$'\t' read -r name src path commit deps; do
  case "$name" in ''|'#'*) continue ;; esac
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
  dir="$out/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  extract "$src" "$commit" "$path" "$dir/chart"
  for dep in $deps; do   # DEST=owner/repo@commit:path, DEST a/b = charts/a/charts/b
    dest="${dep%%=*}" spec="${dep#*=}"
    extract "${spec%%@*}" "$(echo "${spec#*@}" | cut -d: -f1)" "${spec#*:}" \
            "$dir/chart/charts/${dest//\//\/charts\/}"
  done
  rc=0
  render "$dir" "" || rc=$?
  render "$dir" ".again" || true
  if ! cmp -s "$dir/expected-default.yaml" "$dir/expected-default.again.yaml"; then
    diff -U0 "$dir/expected-default.yaml" "$dir/expected-default.again.yaml" >"$dir/expected-default.nondet" || true
  fi
  rm -f "$dir/expected-default.again.yaml" "$dir/expected-default.again.stderr"
  [ -s "$dir/expected-default.stderr" ] || rm -f "$dir/expected-default.stderr"
  if [ $rc -eq 0 ]; then rendered=$((rendered + 1)); else failing=$((failing + 1)); fi
  printf '%-40s exit %d%s\n' "$name" "$rc" "$([ -f "$dir/expected-default.nondet" ] && echo ' (nondeterministic)')"
done < "$list"
echo "prepare-wide-corpus: $rendered charts rendered by helm, $failing failing, in $out"
