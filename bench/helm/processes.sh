#!/usr/bin/env bash
# Helm rendering as whole processes, what a user times: `emco template` against
# `helm template` per chart x variant of a corpus (../shared/charts or $EMCO_CHARTS), side by
# side under hyperfine (no shell, warm-up runs first).
#
#   bench/helm/processes.sh BUILD_DIR [CHART...]
#
# Prints one row per render: the median wall time of each and their ratio, the mean CPU
# (user+sys) of each and their ratio; then the lowest ratios and the machine's load.
# EMCO_BENCH_RUNS sets hyperfine's --runs (default 10).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(realpath "${1:-build}")"
shift || true
corpus="${EMCO_CHARTS:-$(dirname "$repo")/shared/charts}"
emco="$build/emco"
runs="${EMCO_BENCH_RUNS:-10}"
[ -x "$emco" ] || { echo "bench/helm: $emco is not built" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "bench/helm: hyperfine is not installed" >&2; exit 2; }
helm="$("$(dirname "$repo")/shared/tools/get-helm" "${EMCO_HELM_TOOLS:-$build/bench-tools}")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp" HELM_CACHE_HOME="$tmp/cache" HELM_CONFIG_HOME="$tmp/config" HELM_DATA_HOME="$tmp/data"

echo "load before: $(cat /proc/loadavg)"
printf '%-48s %9s %9s %7s %9s %9s %7s\n' "render" "emco ms" "helm ms" "wall" "emco cpu" "helm cpu" "cpu"
for dir in "$corpus"/*/; do
  name="$(basename "$dir")"
  [ -d "$dir/chart" ] || continue
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
  for variant in default custom; do
    [ -f "$dir/expected-$variant.yaml" ] || continue
    extra=""
    [ "$variant" = custom ] && extra=" -f values-custom.yaml"
    json="$tmp/$name-$variant.json"
    (cd "$dir" && hyperfine -N -i --warmup 2 --runs "$runs" --export-json "$json" \
       "$emco template --release-name rel --namespace ns chart$extra" \
       "$helm template rel chart --namespace ns$extra" >/dev/null 2>&1)
    python3 - "$json" "$name/$variant" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
e, h = r[0], r[1]
ec, hc = e["user"] + e["system"], h["user"] + h["system"]
print("%-48s %9.1f %9.1f %6.1fx %9.1f %9.1f %6.1fx" % (sys.argv[2], e["median"] * 1e3, h["median"] * 1e3,
      h["median"] / e["median"], ec * 1e3, hc * 1e3, hc / ec))
EOF
  done
done | tee "$tmp/rows.txt"
echo "lowest wall ratios:"
sort -k4 -g "$tmp/rows.txt" | head -5 | awk '{print "  " $1, $4}'
echo "load after: $(cat /proc/loadavg)"
