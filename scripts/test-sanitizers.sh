#!/usr/bin/env bash
# The unit and dataplane tests and the fuzz-corpus replays again, built with
# AddressSanitizer + UndefinedBehaviorSanitizer (-DINASIM_SANITIZE=ON, GCC) in
# ./build-asan. Run by .ci/run after the main suite; the ns-3 integration and
# Python tests are not rebuilt (ns-3 itself is not instrumented).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(test_switchml test_canary test_p4sgd test_panama test_topology test_congestion test_scenario test_core
         fuzz_replay_switchml fuzz_replay_canary fuzz_replay_p4sgd fuzz_replay_panama fuzz_replay_scenario
         fuzz_replay_cdf fuzz_replay_libsvm test_p4reader test_model_check)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINASIM_SANITIZE=ON -DINASIM_BUILD_BENCH=OFF \
  -DPython3_EXECUTABLE=/usr/bin/python3 ${INASIM_CMAKE_ARGS:-} >/dev/null
cmake --build build-asan -j"$(nproc)" --target "${targets[@]}"
# Leak checks on; UBSan findings abort (-fno-sanitize-recover), so every one fails its test.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -L unit "$@"
