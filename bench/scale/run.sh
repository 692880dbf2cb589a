#!/usr/bin/env bash
# Scale benchmark (issue 22 item 5): 10 apps (the quickstart chart, 3
# resources each) on N clusters through the real emco commands, each step
# timed as its own process by /usr/bin/time (wall seconds, peak RSS):
#   GitOps (one file:// repository shared by every cluster):
#     apply     `emco apply -f` of the fleet (clusters, labels, logical cloud;
#               files of 8 MB, as a batch file is read up to 16 MiB)
#     plan      `emco dig plan` (placement and rendering; exit 2: all to create)
#     inst      `emco dig instantiate` (plan again, commit, push)
#     update    `emco dig update` after one app's values changed
#     status    `emco dig status -o summary` (counts per state and app)
#   direct, on an `emco sim start` fleet of N simulated clusters:
#     apply, plan, inst and status as above; sim = the simulator's own peak
#     RSS once every object is on it
# then a table of seconds and MiB per step and N, and the growth of each
# from one N to the next (time, user CPU, memory; linear = the ratio of the
# Ns, e.g. 10.0x). Steps under ~0.1 s give noisy ratios on a loaded machine.
# First it prints what the machine charges per fresh page at 256 MiB, 1 GiB
# and 4 GiB (bench/scale/fresh_page_cost): where that grows, a large step's
# system time grows faster than its work.
# usage: bench/scale/run.sh [--smoke] [--no-direct] [--direct-max N] [--reps R] BUILD_DIR [N ...]
#   N defaults to 1000 10000; --smoke: 200 clusters; --no-direct: GitOps only;
#   --reps R: every N R times, the Ns taking turns (1000, 10000, 1000, ...),
#   so a change of the machine's load falls on each N alike; the table has
#   each step's medians (default 1);
#   direct runs only up to --direct-max clusters (default 10000: the
#   simulator holds ~300 KB per cluster of this workload, ~30 GB at 100,000).
# Environment: SCALE_WORK: work there, keep it, and add to its results (the
#   table then has every N run there; default: a temporary directory).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
smoke=0 direct=1 direct_max=10000 reps=1
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --no-direct) direct=0 ;;
    --direct-max) direct_max=$2; shift ;;
    --reps) reps=$2; shift ;;
    *) break ;;
  esac
  shift
done
build="$(realpath "${1:-build}")"
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000)
[ $smoke = 1 ] && sizes=(200)
emco="$build/emco"
[ -x "$emco" ] || { echo "scale bench: $emco not built (ninja -C $build emco)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "scale bench: /usr/bin/time is not installed (apt-get install time)" >&2; exit 1; }
source "$root/bench/support/fleet.sh"
chart="$root/examples/quickstart/charts/hello"
apps=10
dig=bench/ca/v1/dig

work="${SCALE_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/emco-scale-bench-XXXXXX")}"
mkdir -p "$work"
work="$(realpath "$work")"
# The simulator runs under /usr/bin/time (its peak RSS is written when it
# exits): stopped by `emco sim stop`, as a signal to /usr/bin/time would leave
# it running and lose the figures.
sim_pid="" sim_dir=""
stop_sim() {
  if [ -n "$sim_pid" ]; then
    "$emco" sim stop --dir "$sim_dir" > /dev/null 2>&1 || kill "$sim_pid" 2>/dev/null || true
    wait "$sim_pid" 2>/dev/null || true
    sim_pid=""
  fi
}
cleanup() {
  stop_sim
  [ -n "${SCALE_WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
results="$work/results.tsv"
[ -n "${SCALE_WORK:-}" ] || : > "$results"

# step NAME N LOG COMMAND...: runs COMMAND under /usr/bin/time, appends
# "MODE:NAME N seconds KiB load user-seconds system-seconds" to the results;
# COMMAND's output goes to LOG. Exit status 0 is success, and so is
# $ok_status when set.
step() {
  local name=$1 n=$2 log=$3 load rc=0 secs kib user sys
  shift 3
  load="$(cut -d' ' -f1 /proc/loadavg)"
  /usr/bin/time -f '%e %M %U %S' -o "$log.time" "$@" > "$log" 2>&1 || rc=$?
  if [ $rc != 0 ] && [ "$rc" != "${ok_status:-0}" ]; then
    echo "scale bench: $name at $n clusters failed: $*" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  # The last line: /usr/bin/time first notes a non-zero exit status.
  read -r secs kib user sys < <(tail -1 "$log.time")
  printf '%s:%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$name" "$n" "$secs" "$kib" "$load" "$user" "$sys" >> "$results"
  printf '  %-7s %6d clusters: %8.2f s %8.1f MiB  CPU user %.2f s system %.2f s (load %s)\n' "$name" "$n" "$secs" \
    "$(awk -v k="$kib" 'BEGIN { print k / 1024 }')" "$user" "$sys" "$load"
}

# Every deployed resource is counted once in the summary; the count must be
# clusters x apps x 3 (the chart's ConfigMap, Deployment and Service).
check_status() {
  local n=$1 log=$2 state=$3 want=$((n * apps * 3))
  grep -q "$state" "$log" || { echo "scale bench: no $state resources in the status:" >&2; head -20 "$log" >&2; exit 1; }
  grep -Eq "(^|[^0-9])$want([^0-9]|$)" "$log" ||
    { echo "scale bench: the status does not count $want resources:" >&2; head -20 "$log" >&2; exit 1; }
}

# The steps both modes share, in a new workspace $dir/ws (left the current
# directory): the fleet of N clusters registered as `fleet_yaml N KIND TARGET`
# makes them, the apps, approve, then the timed apply, plan and instantiate.
deploy() {
  local n=$1 dir=$2 kind=$3 target=$4
  cd "$dir/ws"
  "$emco" init > /dev/null
  fleet_yaml "$n" "$kind" "$target" | split_batch fleet
  apps_yaml "$apps" "$chart" "$dir/profiles" > apps.yaml
  step apply "$n" "$dir/apply.log" "$emco" apply -f fleet
  "$emco" apply -f apps.yaml > /dev/null
  "$emco" dig approve "$dig" > /dev/null
  ok_status=2 step plan "$n" "$dir/plan.log" "$emco" dig plan "$dig"
  step inst "$n" "$dir/inst.log" "$emco" dig instantiate "$dig" --timeout 60m
}

gitops() {
  local n=$1 dir="$work/gitops-$1"
  mode=gitops
  rm -rf "$dir"
  mkdir -p "$dir/ws"
  git init -q --bare -b main "$dir/remote.git"
  deploy "$n" "$dir" gitops "file://$dir/remote.git"
  printf 'message: "app 0, changed"\n' > "$dir/profiles/app0/override_values.yaml"
  "$emco" apply -f apps.yaml > /dev/null
  step update "$n" "$dir/update.log" "$emco" dig update "$dig" --timeout 60m
  step status "$n" "$dir/status.log" "$emco" dig status "$dig" -o summary
  check_status "$n" "$dir/status.log" Committed
  printf 'gitops:repo\t%s\t0\t%s\t-\n' "$n" "$(du -sk "$dir/remote.git" | cut -f1)" >> "$results"
  cd "$work"
  [ -n "${SCALE_WORK:-}" ] || rm -rf "$dir"
}

direct() {
  local n=$1 dir="$work/direct-$1"
  mode=direct
  rm -rf "$dir"
  mkdir -p "$dir/ws"
  sim_dir="$dir/sim"
  /usr/bin/time -f '%e %M' -o "$dir/sim.time" "$emco" sim start --dir "$dir/sim" --clusters "$n" --ready-delay-ms 0 \
    > "$dir/sim.out" 2> "$dir/sim.err" &
  sim_pid=$!
  for _ in $(seq 1 3000); do
    [ -s "$dir/sim.out" ] && break
    kill -0 "$sim_pid" 2>/dev/null || { cat "$dir/sim.err" >&2; exit 1; }
    sleep 0.1
  done
  [ -s "$dir/sim.out" ] || { echo "scale bench: the simulator did not start in 300 s" >&2; exit 1; }
  deploy "$n" "$dir" kubeconfig "$dir/sim/kubeconfigs"
  step status "$n" "$dir/status.log" "$emco" dig status "$dig" -o summary
  check_status "$n" "$dir/status.log" Applied
  stop_sim
  printf 'direct:sim\t%s\t0\t%s\t-\n' "$n" "$(tail -1 "$dir/sim.time" | cut -d' ' -f2)" >> "$results"
  printf '  %-7s %6d clusters: %8s   %8.1f MiB (the simulator holding every object)\n' sim "$n" "" \
    "$(awk -v k="$(tail -1 "$dir/sim.time" | cut -d' ' -f2)" 'BEGIN { print k / 1024 }')"
  cd "$work"
  [ -n "${SCALE_WORK:-}" ] || rm -rf "$dir"
}

echo "scale bench: 10 apps x 3 resources on ${sizes[*]} clusters; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# What this machine charges per page a process touches first, by amount: a
# large step's system time follows it (see fresh_page_cost.cpp). 4 GiB only
# when that much is free.
probe_sizes="64 256"
[ $smoke = 1 ] || probe_sizes="256 1024"
[ $smoke = 1 ] || [ "$(awk '/^MemAvailable/ { print int($2 / 1048576) }' /proc/meminfo)" -lt 8 ] ||
  probe_sizes="$probe_sizes 4096"
echo "fresh memory: $("$build/bench/scale/fresh_page_cost" $probe_sizes | paste -sd, | sed 's/,/, /g')"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "scale bench: --reps wants a whole number >= 1, not '$reps'" >&2; exit 2; }
for rep in $(seq 1 "$reps"); do
  for n in "${sizes[@]}"; do
    echo "GitOps, $n clusters$([ "$reps" = 1 ] || echo ", run $rep of $reps"):"
    gitops "$n"
    if [ $direct = 1 ] && [ "$n" -le "$direct_max" ]; then
      echo "direct (emco sim), $n clusters:"
      direct "$n"
    fi
  done
done

# The table: a row per mode and step, for each N seconds and MiB, then the
# growth from each N to the next (time, user CPU, memory; linear = the ratio
# of the Ns); with several runs of an N, the medians of each figure. User
# CPU is emco's own work; the rest of the time is mostly the kernel's, whose
# cost per fresh page grows with the amount on some machines (the fresh
# memory line above).
awk -F'\t' '
  # Sorts v[1..k] as numbers, in place.
  function sort_numbers(v, k,   i, j, t) {
    for (i = 2; i <= k; i++)
      for (j = i; j > 1 && v[j] + 0 < v[j - 1] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  }
  # The median of the values gathered in list[key] ("|"-separated).
  function median(key,   v, k) {
    k = split(list[key], v, "|")
    sort_numbers(v, k)
    return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
  }
  function add(name, key, value) {
    if ((name, key) in list) list[name, key] = list[name, key] "|" value
    else list[name, key] = value
  }
  /^direct:/ { direct = 1 }
  { add("sec", $1 SUBSEP $2, $3); add("mem", $1 SUBSEP $2, $4); if (NF >= 7) add("usr", $1 SUBSEP $2, $6)
    keys[$1, $2] = 1
    if (!($2 in seen)) { seen[$2] = 1; n[++ns] = $2 } }
  END {
    for (key in keys) {
      mem[key] = median("mem" SUBSEP key); sec[key] = median("sec" SUBSEP key)
      if (("usr", key) in list) usr[key] = median("usr" SUBSEP key)
    }
    sort_numbers(n, ns)  # the Ns in increasing order
    printf "\n%-14s", "step"
    for (i = 1; i <= ns; i++) printf " | %18s", n[i] " clusters"
    for (i = 2; i <= ns; i++) printf " | %28s", "growth x" n[i] / n[i - 1]
    printf "\n"
    nrows = split("gitops:apply gitops:plan gitops:inst gitops:update gitops:status gitops:repo" \
                  (direct ? " direct:apply direct:plan direct:inst direct:status direct:sim" : ""), rows, " ")
    for (r = 1; r <= nrows; r++) {
      s = rows[r]
      size_only = (s ~ /:(repo|sim)$/)
      printf "%-14s", s
      for (i = 1; i <= ns; i++)
        printf " | %18s", !((s, n[i]) in mem) ? "-" : size_only ? sprintf("%.1f MiB", mem[s, n[i]] / 1024) \
                                    : sprintf("%.2f s %.0f MiB", sec[s, n[i]], mem[s, n[i]] / 1024)
      for (i = 2; i <= ns; i++) {
        if (!((s, n[i]) in mem) || !((s, n[i - 1]) in mem)) { printf " | %28s", "-"; continue }
        a = mem[s, n[i - 1]] > 0 ? mem[s, n[i]] / mem[s, n[i - 1]] : 0
        b = sec[s, n[i - 1]] > 0 ? sec[s, n[i]] / sec[s, n[i - 1]] : 0
        u = ((s, n[i]) in usr) && ((s, n[i - 1]) in usr) && usr[s, n[i - 1]] > 0 ? \
            sprintf(", user %.1fx", usr[s, n[i]] / usr[s, n[i - 1]]) : ""
        printf " | %28s", size_only ? sprintf("%.1fx", a) : sprintf("%.1fx%s, mem %.1fx", b, u, a)
      }
      printf "\n"
    }
  }' "$results"
