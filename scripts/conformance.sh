#!/usr/bin/env bash
# Helm conformance: renders every chart x variant of the corpus (default
# ../shared/charts next to the repository, or $EMCO_CHARTS) with emco's in-process
# Helm and compares with the recorded `helm template` output (see
# tests/conformance/helm_conformance.cpp for the rules).
#
#   scripts/conformance.sh BUILD_DIR [CHART...]
#
# Prints one PASS/FAIL line per render, a diff for every failure, the byte-identical
# count and, as its last line, "N passed, M failed". Over the default corpus, exits
# non-zero when a render listed in tests/conformance/passing.txt (the ratchet) does not
# pass; the ratchet lists that corpus's renders, so another corpus ($EMCO_CHARTS, e.g. the
# wide one bench/helm/prepare-wide-corpus.sh makes) is scored without it.
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath "${1:-build}")"
shift || true
dev_corpus="$(dirname "$repo")/shared/charts"
corpus="${EMCO_CHARTS:-$dev_corpus}"
driver="$build/tests/conformance/helm_conformance"
ratchet="$repo/tests/conformance/passing.txt"
if [ ! -x "$driver" ]; then
  echo "conformance: $driver is not built (cmake --build $build --target helm_conformance)" >&2
  exit 2
fi
if [ ! -d "$corpus" ]; then
  echo "conformance: corpus $corpus not found (set EMCO_CHARTS)" >&2
  exit 2
fi
out="$build/conformance"
rm -rf "$out"
mkdir -p "$out"
"$driver" "$corpus" "$out" "$@" > "$out/results.txt"

grep -E '^(PASS|FAIL) ' "$out/results.txt"
while IFS= read -r line; do
  label="${line#FAIL }"
  label="${label%%:*}"
  name="${label%/*}"
  variant="${label#*/}"
  echo
  echo "=== diff for $label (expected vs emco)"
  diff -u "$corpus/$name/expected-$variant.yaml" "$out/$name-$variant.yaml" | head -60
  if [ -f "$corpus/$name/expected-$variant.stderr" ] || [ -s "$out/$name-$variant.stderr" ]; then
    diff -u "$corpus/$name/expected-$variant.stderr" "$out/$name-$variant.stderr" 2>/dev/null | head -20
  fi
done < <(grep '^FAIL ' "$out/results.txt")

status=0
if [ -f "$ratchet" ] && [ "$(realpath "$corpus")" = "$(realpath "$dev_corpus")" ]; then
  while IFS= read -r entry; do
    case "$entry" in ''|'#'*) continue ;; esac
    if [ "$#" -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "${entry%/*}"; then continue; fi
    if ! grep -q "^PASS $entry " "$out/results.txt"; then
      echo "conformance: regression: $entry is in tests/conformance/passing.txt but does not pass" >&2
      status=1
    fi
  done < "$ratchet"
  while IFS= read -r line; do
    entry="$(echo "$line" | cut -d' ' -f2)"
    grep -qx "$entry" "$ratchet" || echo "conformance: note: $entry passes; add it to tests/conformance/passing.txt"
  done < <(grep '^PASS ' "$out/results.txt")
fi
grep -E '^[0-9]+ byte-identical$' "$out/results.txt"
tail -n 1 "$out/results.txt"
exit $status
