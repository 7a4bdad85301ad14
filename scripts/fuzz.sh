#!/usr/bin/env bash
# Runs every libFuzzer target (build/fuzz, preset "fuzz") for SECONDS each, starting from the seed corpora in
# fuzz/corpus/<target>/. New inputs go to build/fuzz/corpus-run/; a crash leaves its input in build/fuzz/artifacts/
# and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
mkdir -p build/fuzz/artifacts
status=0
for bin in build/fuzz/fuzz/fuzz_*; do
  name=$(basename "$bin")
  seeds=fuzz/corpus/${name#fuzz_}
  work=build/fuzz/corpus-run/$name
  mkdir -p "$work"
  echo "fuzz: $name for ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=0 \
       -artifact_prefix=build/fuzz/artifacts/"$name"- "$work" "$seeds" > build/fuzz/"$name".log 2>&1; then
    echo "fuzz: $name FAILED, see build/fuzz/$name.log and build/fuzz/artifacts/" >&2
    tail -40 build/fuzz/"$name".log >&2
    status=1
  fi
done
exit $status
