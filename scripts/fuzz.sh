#!/usr/bin/env bash
# Builds the fuzz targets of tests/fuzz with clang's libFuzzer + ASan + UBSan
# (installing clang if missing) and runs each for FUZZ_SECONDS (default 600),
# starting from, and adding new inputs to, each target's corpus
# (tests/fuzz/corpus/<target>, or protocols/<name>/tests/fuzz-corpus*).
#   scripts/fuzz.sh                 # every target, 10 minutes each
#   FUZZ_SECONDS=60 scripts/fuzz.sh switchml panama
# A finding stops that target with the input saved as build-fuzz/<target>/crash-*;
# turn it into a regression test by copying it into the corpus (the test suite
# replays every corpus file) and fixing the cause.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
build=build-fuzz
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINASIM_FUZZ=ON -DINASIM_PCH=OFF \
  -DINASIM_BUILD_BENCH=OFF -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
# Every target and its corpus (the shared parsers' in tests/fuzz, each
# protocol's in protocols/<name>/tests): written by tests/CMakeLists.txt.
declare -A corpus
while IFS=$'\t' read -r name _source dir; do corpus[$name]=$dir; done < "$build/fuzz-targets.tsv"
targets=("$@")
if ((${#targets[@]} == 0)); then mapfile -t targets < <(cut -f1 "$build/fuzz-targets.tsv"); fi
for t in "${targets[@]}"; do
  [ -n "${corpus[$t]:-}" ] || { echo "fuzz: unknown target \"$t\" (known: ${!corpus[*]})" >&2; exit 2; }
done
cmake --build "$build" -j"$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}")
status=0
for t in "${targets[@]}"; do
  mkdir -p "$build/$t/new"
  echo "fuzz: $t for ${FUZZ_SECONDS:-600} s" >&2
  # New interesting inputs go to a scratch directory first; -merge keeps only
  # those that add coverage, so the committed corpus stays small.
  if ! (cd "$build/$t" && ASAN_OPTIONS=detect_leaks=1 ../tests/fuzz_"$t" -max_total_time="${FUZZ_SECONDS:-600}" \
        -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 new "${corpus[$t]}"); then
    status=1
    echo "fuzz: $t FOUND A PROBLEM (see $build/$t/crash-* or leak-*)" >&2
  fi
  "$build/tests/fuzz_$t" -merge=1 "${corpus[$t]}" "$build/$t/new" >/dev/null 2>&1 || true
done
exit $status
