#!/usr/bin/env bash
# The main job on the bundled example runs: what rldk reads in a TRL GRPO run's trainer_state.json, a verl console
# log whose run collapses into NaN, and a resumed PPO run logged as gzip-compressed canonical events.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
rldk=.venv/bin/rldk
for example in examples/grpo_trl/trainer_state.json examples/verl_console.log examples/ppo_events.jsonl.gz; do
  echo
  echo "\$ rldk info $example"
  "$rldk" info "$example"
done
