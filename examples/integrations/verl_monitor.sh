#!/usr/bin/env bash
# Guard a verl run with `rldk monitor --cmd`: rldk launches the trainer, reads the "step:N - key:value - ..." lines
# of verl's console logger (trainer.logger must include 'console', the default), and sends SIGTERM (then SIGKILL
# after --stop-grace seconds) when a stop rule fires.
#
# Here the trainer is examples/trainers/sim_verl.py, which prints real-format verl lines and lets its in-reward KL
# penalty run away from step 40, so the example runs anywhere. With verl itself, replace the --cmd string, e.g.
#   --cmd "python3 -m verl.trainer.main_ppo algorithm.use_kl_in_reward=True trainer.logger=['console','wandb'] ..."
# verl's file logger (trainer.logger=['file']) writes JSONL that rldk follows too: rldk monitor --preset ppo_safe
# $VERL_FILE_LOGGER_PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/verl_guard}
status=0
rldk monitor --preset ppo_safe --out "$out" --stop-grace 30 \
  --cmd "${PYTHON:-python3} examples/trainers/sim_verl.py --steps 200 --runaway-step 40" || status=$?
echo "rldk monitor exited with $status (1: a stop rule fired and the trainer was stopped); report: $out/report.json"
