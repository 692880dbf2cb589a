#!/usr/bin/env bash
# Regenerates manpages/ and completions/ from the command table of a built
# emco (tests/cli fails when the committed files differ from its output).
#   scripts/gen-docs.sh [BUILD_DIR]     (default: build)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath "${1:-$repo/build}")"
emco="$build/emco"
[ -x "$emco" ] || { echo "gen-docs: $emco is not built (ninja -C $build emco)" >&2; exit 2; }
rm -f "$repo"/manpages/*.1 "$repo"/completions/emco.bash "$repo"/completions/_emco "$repo"/completions/emco.fish
"$emco" __docs man "$repo/manpages"
for shell in bash zsh fish; do "$emco" __docs "$shell" "$repo/completions"; done
