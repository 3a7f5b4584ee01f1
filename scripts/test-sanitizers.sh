#!/usr/bin/env bash
# The tests again, built with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DINASIM_SANITIZE=ON, GCC) in ./build-asan. Run by .ci/run after the main
# suite. Three stages, each timed on stdout:
#   1. unit: the unit and dataplane tests and the fuzz-corpus replays (ctest -L unit);
#   2. integration: test_fabric's ns-3 tests (ctest -L integration), which cover
#      every protocol (ring, SwitchML, Canary, static trees, PANAMA, P4SGD) and
#      background TCP/DCTCP. ns-3 itself is not instrumented, our code is;
#   3. scenarios: the `inasim` binary on small scenarios, one or more per
#      protocol (SCENARIOS below); each must exit 0 with no sanitizer report.
# The Python tests are not run (the extension would need an ASan Python).
# Arguments go to both ctest calls (e.g. -j2, -R REGEX).
#
# Stage 3 ends with the golden runs (tests/golden/check.py) on the sanitized
# binary: the same pinned results, with every sanitizer check on.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS=0
stage() { printf '== test-sanitizers [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# What it builds: the target inasim_test_targets (tests/CMakeLists.txt: every
# test executable, inasim, inasim-p4). What it runs in stage 3: each
# registered protocol's small runs (the "smoke" runs of
# protocols/<name>/protocol.json, read from the build's protocols.json), then
# background traffic alone.
EXTRA_SCENARIOS=(
  "scenarios/background/fct-websearch-fat-tree-16.json --set background.flows.stop_us=100"
)

stage "configure and build (inasim_test_targets)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINASIM_SANITIZE=ON -DINASIM_BUILD_BENCH=OFF \
  -DPython3_EXECUTABLE=/usr/bin/python3 ${INASIM_CMAKE_ARGS:-} >/dev/null
cmake --build build-asan -j"$(nproc)" --target inasim_test_targets
# One line per run: the scenario file, then its --set overrides.
mapfile -t SCENARIOS < <(/usr/bin/python3 -c '
import json, sys
for m in json.load(open(sys.argv[1])):
    for run in m["smoke"]:
        print(" ".join(run))' build-asan/protocols.json)
SCENARIOS+=("${EXTRA_SCENARIOS[@]}")
# Leak checks on; UBSan findings abort (-fno-sanitize-recover), so every one fails its test.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1

stage "unit tests (ctest -L unit)"
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -L unit "$@"
stage "integration tests (ctest -L integration)"
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -L integration "$@"

asan_bin="$PWD/build-asan/inasim"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# inasim ARGS... under the sanitizers: fails on a nonzero exit or on any
# sanitizer report in stderr (UBSan's report alone does not change the exit
# status when a handler returns).
asan_run() {
  local log="$work/stderr" status=0
  "$asan_bin" "$@" >/dev/null 2>"$log" || status=$?
  if [ "$status" -ne 0 ] || grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log"; then
    echo "FAILED (exit $status): inasim $*" >&2
    cat "$log" >&2
    return 1
  fi
}
stage "scenarios (${#SCENARIOS[@]} runs of inasim)"
failed=0
for s in "${SCENARIOS[@]}"; do
  t0=$SECONDS
  # shellcheck disable=SC2086 # word splitting is wanted: FILE --set A --set B
  if asan_run run $s --out "$work/out" --quiet; then
    echo "ok ($((SECONDS - t0)) s): inasim run $s"
  else
    failed=1
  fi
done
# The golden runs (tests/golden) with the sanitized binary: every protocol,
# loss, link failure, congestion, several jobs; each must exit 0 (a sanitizer
# report aborts or, for leaks, exits nonzero) and give the pinned results.
stage "golden runs (tests/golden/check.py) with the sanitized inasim"
if ! INASIM_BIN="$asan_bin" /usr/bin/python3 tests/golden/check.py; then
  echo "FAILED: golden runs under the sanitizers" >&2
  failed=1
fi
stage "done"
exit "$failed"
