#!/usr/bin/env bash
# The whole test suite, from a fresh machine: set-up, then
#   1. release build: C++ unit tests and golden CLI tests (ctest), Python tests (pytest) against the installed package;
#   2. the same C++ suites built with AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. every reader's libFuzzer target built with clang and run briefly (RLDK_FUZZ_SECONDS each, default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
source .venv/bin/activate
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

# Each stage says how long it took, so the suite's time budget (CI stops at 90 minutes) is watched stage by stage.
stage=""
stage_start=$SECONDS
step() {
  [ -z "$stage" ] || printf '=== %s: %d s\n' "$stage" $((SECONDS - stage_start))
  stage="$*"
  stage_start=$SECONDS
  printf '\n=== %s (at %d s)\n' "$*" "$SECONDS"
}

step "release build"
cmake --preset release -DPython3_EXECUTABLE="$(command -v python)" >/dev/null
cmake --build --preset release
step "unit and golden tests (release)"
ctest --test-dir build/release --output-on-failure
step "python tests"
python -m pytest -q tests/python

# The sanitizer and fuzzer builds compile at -O1 with line tables only (CMakePresets.json): what ASan recommends, and
# about 30 % less compile time than -O2 -g (measured on two engine files), and compiling is most of the suite's time.
step "ASan + UBSan build"
cmake --preset asan -DPython3_EXECUTABLE="$(command -v python)" >/dev/null
cmake --build --preset asan
step "unit and golden tests (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure

step "fuzzers"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
./scripts/fuzz.sh "${RLDK_FUZZ_SECONDS:-10}"

step "all tests passed"
