#!/usr/bin/env bash
# Planner benchmark: a DIG of 10 apps onto 1,000 and 10,000 clusters with
# mixed labels; time of the plan, peak memory, and the 1k -> 10k growth
# (goal: <= 12x time, < 1 GB at 10k).
#   bench/plan/run.sh [--smoke] BUILD_DIR
# --smoke plans onto 50 and 500 clusters.
set -euo pipefail
mode=full
if [ "${1:-}" = "--smoke" ]; then mode=smoke; shift; fi
build="$(realpath "${1:-build}")"
bench="$build/bench/plan/plan_bench"
[ -x "$bench" ] || { echo "bench/plan: $bench is not built" >&2; exit 2; }
if [ "$mode" = smoke ]; then small=50; large=500; else small=1000; large=10000; fi
a="$("$bench" "$small" --save)"
echo "$a"
b="$("$bench" "$large" --save)"
echo "$b"
ta="$(sed -n 's/.*plan_s=\([0-9.]*\).*/\1/p' <<<"$a")"
tb="$(sed -n 's/.*plan_s=\([0-9.]*\).*/\1/p' <<<"$b")"
mb="$(sed -n 's/.*peak_rss_mb=\([0-9.]*\).*/\1/p' <<<"$b")"
awk -v a="$ta" -v b="$tb" -v m="$mb" -v s="$small" -v l="$large" 'BEGIN {
  g = (a > 0) ? b / a : 0
  printf "growth %d -> %d clusters: %.1fx plan time (goal <= 12x); peak %.0f MB at %d clusters (goal < 1024 MB)\n", s, l, g, m, l
  exit (g <= 12 && m < 1024) ? 0 : 1
}'
