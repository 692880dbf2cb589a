#!/usr/bin/env bash
# Batch-apply benchmark (issue 2, point 9).
#   bench/apply/run.sh [--smoke] BUILD_DIR
# Full: 10,000 clusters x 3 labels under 5 providers + 100 projects x 10
# composite apps x 5 apps. --smoke: 500 clusters, 5 projects.
# Prints (a) `emco apply -f` documents/s against sqlite3 inserting the same
# rows in one transaction (goal >= 25%), (b) `emco cluster list -o json`
# median latency against sqlite3 -json running the same query (goal <= 3x).
set -euo pipefail
clusters=10000 projects=100 runs=10
if [ "${1:-}" = "--smoke" ]; then clusters=500 projects=5 runs=3; shift; fi
build="$(realpath "${1:-build}")"
pg_server="$(realpath "$(dirname "$0")/../../scripts/pg-test-server.sh")"
emco="$build/emco" gen="$build/bench/apply/apply_bench_gen"
for tool in "$emco" "$gen"; do [ -x "$tool" ] || { echo "bench/apply: $tool is not built" >&2; exit 2; }; done
command -v sqlite3 >/dev/null || { echo "bench/apply: sqlite3 is not installed" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# Inputs: a kubeconfig, one tiny chart per app name (the top-level directory
# must be named like the app), the batch file and the equivalent SQL.
cat > kubeconfig <<'KUBE'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: t}}]
KUBE
for a in 0 1 2 3 4; do
  mkdir -p "charts/app$a/templates"
  printf 'apiVersion: v2\nname: app%s\nversion: 0.1.0\n' "$a" > "charts/app$a/Chart.yaml"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-app%s\n' "$a" > "charts/app$a/templates/cm.yaml"
  tar -czf "app$a.tgz" -C charts "app$a"
done
docs="$("$gen" "$tmp" "$clusters" "$projects")"

now() { date +%s.%N; }
mkdir ws && "$emco" init ws >/dev/null
t0=$(now); "$emco" apply -f apply.yaml --workspace ws -q -o name >/dev/null; t1=$(now)
t2=$(now); sqlite3 raw.db < raw.sql >/dev/null; t3=$(now)
rows_emco=$(sqlite3 ws/.emco/emco.db 'SELECT count(*) FROM resources')
rows_raw=$(sqlite3 raw.db 'SELECT count(*) FROM resources')
[ "$rows_emco" = "$docs" ] && [ "$rows_raw" = "$docs" ] || {
  echo "bench/apply: row counts differ: documents $docs, emco $rows_emco, sqlite3 $rows_raw" >&2; exit 1; }
awk -v d="$docs" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" 'BEGIN {
  e = t1 - t0; r = t3 - t2
  printf "apply: %d documents (%s)\n", d, (d > 20000 ? "full" : "smoke")
  printf "  emco apply -f       %8.2f s  %9.0f documents/s\n", e, d / e
  printf "  sqlite3 (raw rows)  %8.2f s  %9.0f rows/s\n", r, d / r
  printf "  ratio               %8.1f %%  of raw (goal >= 25 %%)\n", 100 * r / e }'

# (c) The same batch into a PostgreSQL workspace (issue 21: goal >= 50 % of
# SQLite's rate), on a throwaway server (scripts/pg-test-server.sh) when
# PostgreSQL is installed; each side the median of three runs.
chmod 0711 "$tmp"  # as root the server runs as nobody, which must reach its directory
pg_dir="$tmp/pg"
pg_url="$(bash "$pg_server" start "$pg_dir" 2>pg-start.log || true)"
if [ -n "$pg_url" ]; then
  trap 'bash "$pg_server" stop "$pg_dir" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
  # A PostgreSQL workspace keeps its secrets encrypted: it needs a key.
  "$emco" workspace key generate "$tmp/workspace.key" >/dev/null
  export EMCO_KEY_FILE="$tmp/workspace.key"
  timed_apply() {  # WORKSPACE-DIR [init args]: seconds for one apply into a fresh workspace
    local dir=$1; shift
    rm -rf "$dir"; mkdir "$dir"
    "$emco" init "$dir" "$@" >/dev/null || { echo "bench/apply: emco init $dir failed" >&2; return 1; }
    local a b; a=$(now)
    "$emco" apply -f apply.yaml --workspace "$dir" -q -o name >/dev/null || { echo "bench/apply: apply into $dir failed" >&2; return 1; }
    b=$(now)
    awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", b - a }'
  }
  # The median of three runs of CMD RUN-NUMBER; a failed run fails the bench (never a figure).
  median3() {
    local runs=() i
    for i in 1 2 3; do runs+=("$("$1" "$i")") || exit 1; done
    printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p
  }
  sqlite_apply() { timed_apply ws-sq; }
  pg_apply() { timed_apply ws-pg --store "$pg_url&options=-csearch_path%3Dbench$1"; }
  sq=$(median3 sqlite_apply)
  pg=$(median3 pg_apply)
  awk -v d="$docs" -v s="$sq" -v p="$pg" 'BEGIN {
    printf "apply on PostgreSQL: %d documents, median of 3 runs each\n", d
    printf "  SQLite workspace      %8.2f s  %9.0f documents/s\n", s, d / s
    printf "  PostgreSQL workspace  %8.2f s  %9.0f documents/s\n", p, d / p
    printf "  ratio                 %8.1f %%  of SQLite (goal >= 50 %%)\n", 100 * s / p }'
else
  echo "apply on PostgreSQL: skipped ($(tail -1 pg-start.log 2>/dev/null || echo 'no server'))"
fi

# (b) list latency, medians over $runs runs.
query="SELECT data FROM resources WHERE kind='cluster' ORDER BY key"
# -N: no intermediate shell, whose subtracted start-up time can leave a
# fast command with a median of 0.
hyperfine -N --style none --warmup 1 --runs "$runs" --export-json list.json \
  -n emco "$emco cluster list -o json --workspace ws" \
  -n sqlite3 "sqlite3 -json ws/.emco/emco.db \"$query\"" >/dev/null
jq -r '.results | (map({(.command): .median}) | add) as $m |
  "list: \($clusters) clusters, median of \(.[0].times | length) runs",
  "  emco cluster list -o json  \($m.emco * 1000 | floor) ms",
  "  sqlite3 -json              \($m.sqlite3 * 1000 | floor) ms",
  "  ratio                      \(if $m.sqlite3 > 0 then "\($m.emco / $m.sqlite3 * 10 | floor / 10)x" else "n/a (sqlite3 too fast to time)" end) (goal <= 3x)"' \
  --arg clusters "$clusters" list.json
