#!/usr/bin/env bash
# The whole test suite, from a fresh machine: set-up, then
#   1. release build: C++ unit tests and golden CLI tests (ctest), Python tests (pytest) against the installed package,
#      and the reference suite's smoke test (rldk reference run --quick);
#   2. the same C++ suites built with clang, AddressSanitizer and UndefinedBehaviorSanitizer;
#   3. every reader's libFuzzer target, from that same build, run briefly (RLDK_FUZZ_SECONDS each, default 10).
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
# The reference suite end to end: real TRL trainers with known bugs, each caught by its capability (about 2 min).
# Before the Python tests: tests/python/test_reference_cards.py renders and validates what it wrote.
step "reference suite (quick)"
rldk reference run --quick --out build/reference
step "python tests"
RLDK_REFERENCE_OUT=build/reference python -m pytest -q tests/python

# One clang build with AddressSanitizer + UndefinedBehaviorSanitizer serves the unit and golden tests and the
# libFuzzer targets (CMakePresets.json "asan"): compiling is most of the suite's time, so the engine is compiled
# twice in all (release, shared with the wheel through ccache; sanitized), at -O1 with line tables only, as ASan
# recommends.
step "ASan + UBSan build (tests and fuzzers)"
cmake --preset asan -DPython3_EXECUTABLE="$(command -v python)" >/dev/null
cmake --build --preset asan
step "unit and golden tests (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure

step "fuzzers"
./scripts/fuzz.sh "${RLDK_FUZZ_SECONDS:-10}"

step "all tests passed"
