#!/usr/bin/env bash
# Runs every libFuzzer target (build/asan/fuzz, preset "asan") for SECONDS each, starting from the seed corpora in
# fuzz/corpus/<target>/. New inputs go to $out/corpus-run/; a crash leaves its input in
# $out/artifacts/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
out=build/asan/fuzz-run
mkdir -p $out/artifacts
status=0
for bin in build/asan/fuzz/fuzz_*; do
  name=$(basename "$bin")
  seeds=fuzz/corpus/${name#fuzz_}
  work=$out/corpus-run/$name
  mkdir -p "$work"
  echo "fuzz: $name for ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=0 \
       -artifact_prefix=$out/artifacts/"$name"- "$work" "$seeds" > $out/"$name".log 2>&1; then
    echo "fuzz: $name FAILED, see $out/$name.log and $out/artifacts/" >&2
    tail -40 $out/"$name".log >&2
    status=1
  fi
done
exit $status
