#!/bin/sh
# Builds the libFuzzer targets in tests/fuzz/ with clang (ASan + UBSan + libFuzzer) into
# build-fuzz/ and runs each one. Usage: scripts/fuzz.sh [--smoke] [SECONDS]
#   --smoke   run each target for 10 s (CI); otherwise SECONDS (default 300) per target.
# The engine's sources are compiled once (objects cached by timestamp) and linked into every
# target. Crashes are written to build-fuzz/<target>-crash-*; the exit status is non-zero then.
set -eu
cd "$(dirname "$0")/.."
seconds=300
if [ "${1:-}" = "--smoke" ]; then
  seconds=10
  shift
fi
if [ -n "${1:-}" ]; then seconds=$1; fi

CXX=${CXX_FUZZ:-clang++}
out=build-fuzz
mkdir -p "$out/obj"
flags="-std=c++20 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -I."
libs="$(pkg-config --libs re2 libcrypto fmt) -lz -lcrypt"

objs=""
for src in core/yaml/*.cpp core/template/*.cpp core/util/*.cpp; do
  obj="$out/obj/$(echo "$src" | tr '/' '_' | sed 's/\.cpp$/.o/')"
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find core/yaml core/template core/util -name '*.hpp' -newer "$obj" 2>/dev/null | head -1)" ]; then
    echo "fuzz: compiling $src"
    # shellcheck disable=SC2086
    $CXX $flags -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
  fi
  objs="$objs $obj"
done

for target in tests/fuzz/*_fuzz.cpp; do
  name=$(basename "$target" .cpp)
  echo "fuzz: linking $name"
  # shellcheck disable=SC2086
  $CXX $flags -fsanitize=fuzzer "$target" $objs $libs -o "$out/$name"
done

status=0
for target in tests/fuzz/*_fuzz.cpp; do
  name=$(basename "$target" .cpp)
  corpus="$out/corpus-$name"
  mkdir -p "$corpus"
  seeds="tests/fuzz/seeds/$name"
  echo "fuzz: running $name for ${seconds}s"
  set -- "$corpus"
  if [ -d "$seeds" ]; then set -- "$corpus" "$seeds"; fi
  "$out/$name" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/$name-" "$@" || status=1
done
exit $status
