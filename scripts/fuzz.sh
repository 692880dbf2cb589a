#!/bin/sh
# Builds the libFuzzer targets in tests/fuzz/ (one per *_fuzz.cpp) and runs each in turn.
# Usage: scripts/fuzz.sh [--smoke | --long] [--seconds N] [--merge] [TARGET...]
#   --smoke      10 s per target (CI); the committed corpora and seeds are replayed first,
#                with a fixed seed (FUZZ_SEED, default 1) so that a CI finding can be replayed.
#   --long       30 minutes per target, then --merge.
#   --seconds N  N seconds per target (default 300; 0 with --merge: only minimise).
#   --merge      minimise what the run found together with the committed corpus
#                (libFuzzer -merge=1, edges only) into tests/fuzz/corpus/TARGET/ (committed).
#   TARGET...    only these targets (e.g. kube_api_fuzz); default: all of them.
# The build is a CMake tree of its own, build-fuzz/ (clang, every library compiled with
# -fsanitize=fuzzer-no-link and ASan+UBSan, ccache when present), so a second run only
# relinks what changed. Libraries are linked as usual (EMCO_LAZY_LIBS=OFF): start-up does not
# matter to a fuzzer. One fuzzer runs at a time, in one process. A crash, leak, time-out or
# out-of-memory is written to build-fuzz/TARGET-crash-* (or -leak-, -timeout-, -oom-) and
# makes the exit status non-zero. FUZZ_JOBS sets the build's parallelism (default: nproc).
set -eu
cd "$(dirname "$0")/.."
seconds=300
merge=0
smoke=0
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) seconds=10; smoke=1 ;;
    --long) seconds=1800; merge=1 ;;
    --seconds) seconds=$2; shift ;;
    --merge) merge=1 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz: unknown option '$1' (see scripts/fuzz.sh --help)" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done

out=build-fuzz
# ccache: hash paths relative to the checkout, as the Makefile does.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
if [ ! -f "$out/build.ninja" ]; then
  flags="-O1 -gline-tables-only -fsanitize=fuzzer-no-link"
  cmake -S . -B "$out" -G Ninja -DCMAKE_C_COMPILER="${CC_FUZZ:-clang}" -DCMAKE_CXX_COMPILER="${CXX_FUZZ:-clang++}" \
    -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DEMCO_SANITIZE=ON -DEMCO_WERROR=OFF -DEMCO_FUZZ=ON -DEMCO_LAZY_LIBS=OFF >"$out.configure.log" 2>&1 ||
    { cat "$out.configure.log" >&2; exit 1; }
fi
cmake --build "$out" --target fuzzers -j "${FUZZ_JOBS:-$(nproc)}"

if [ $# -eq 0 ]; then
  for f in tests/fuzz/*_fuzz.cpp; do set -- "$@" "$(basename "$f" .cpp)"; done
fi

bin="$out/tests/fuzz"
status=0
failed=""
seed_flag=""
[ "$smoke" = 0 ] || seed_flag="-seed=${FUZZ_SEED:-1}"
for name in "$@"; do
  [ -x "$bin/$name" ] || { echo "fuzz: no target '$name'" >&2; exit 2; }
  work="$out/corpus/$name"
  committed="tests/fuzz/corpus/$name"
  seeds="tests/fuzz/seeds/$name"
  mkdir -p "$work"
  dirs="$work"
  [ -d "$committed" ] && dirs="$dirs $committed"
  [ -d "$seeds" ] && dirs="$dirs $seeds"
  # Archives and scripted API conversations need more room than a YAML document.
  case "$name" in
    chart_archive_fuzz) max_len=16384 ;;
    kube_api_fuzz|batch_fuzz|exec_credential_fuzz|live_objects_fuzz) max_len=8192 ;;
    *) max_len=4096 ;;
  esac
  if [ "$seconds" -gt 0 ]; then
    echo "fuzz: running $name for ${seconds}s"
    # Shown as it runs and kept in $out/$name.log (the summary at the end quotes it and the
    # inputs written after $out/$name.start).
    : >"$out/$name.start"
    # shellcheck disable=SC2086
    { "$bin/$name" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 $seed_flag \
        -print_final_stats=1 -artifact_prefix="$out/$name-" $dirs 2>&1; echo $? >"$out/$name.rc"; } | tee "$out/$name.log"
    [ "$(cat "$out/$name.rc")" = 0 ] || { status=1; failed="$failed $name"; }
  fi
  if [ "$merge" = 1 ]; then
    # Keep only the inputs that add edge coverage beyond the seeds (-use_counters=0: hit counts
    # would keep ten times as many), named by content (SHA-1).
    merged="$out/merged/$name"
    rm -rf "$merged"
    mkdir -p "$merged" "$committed"
    # shellcheck disable=SC2086
    "$bin/$name" -merge=1 -use_counters=0 -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 "$merged" $dirs >"$out/$name-merge.log" 2>&1 ||
      { echo "fuzz: merging $name failed (see $out/$name-merge.log)" >&2; status=1; continue; }
    if [ -d "$seeds" ]; then
      for s in "$seeds"/*; do rm -f "$merged/$(sha1sum "$s" | cut -d' ' -f1)"; done
    fi
    rm -rf "$committed"
    mv "$merged" "$committed"
    echo "fuzz: $committed holds $(find "$committed" -type f | wc -l) inputs ($(du -sk "$committed" | cut -f1) KiB)"
  fi
done
# What failed, last, where a CI log's tail shows it: the sanitizer's summary and the input.
for name in $failed; do
  echo "fuzz: $name failed: $(grep -m1 -E '^(SUMMARY|==[0-9]+== ?ERROR)' "$out/$name.log" || tail -n 1 "$out/$name.log")" >&2
  for artifact in "$out/$name"-crash-* "$out/$name"-leak-* "$out/$name"-timeout-* "$out/$name"-oom-* "$out/$name"-slow-unit-*; do
    [ -f "$artifact" ] && [ "$artifact" -nt "$out/$name.start" ] || continue
    echo "fuzz:   input $artifact ($(wc -c <"$artifact") bytes), base64: $(head -c 3072 "$artifact" | base64 -w0)" >&2
  done
done
[ "$smoke" = 0 ] || [ "$status" = 0 ] || echo "fuzz: a target failed; its input is in $out/ (replay: $out/tests/fuzz/TARGET FILE)" >&2
exit $status
