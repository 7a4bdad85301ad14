#!/usr/bin/env bash
# Guard an OpenRLHF run with `rldk monitor --cmd`: rldk launches the trainer, reads the "✨ Global step N: {...}"
# lines it logs, and sends SIGTERM (then SIGKILL after --stop-grace seconds) when a stop rule fires.
#
# Here the trainer is examples/trainers/sim_openrlhf.py, which prints real-format OpenRLHF lines and lets its KL run
# away from step 40, so the example runs anywhere. With OpenRLHF itself, replace the --cmd string, e.g.
#   --cmd "python -m openrlhf.cli.train_ppo_ray --advantage_estimator group_norm --init_kl_coef 0.01 ..."
# (under `ray job submit`, watch the driver's log instead: rldk monitor --input-format console job.log).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/openrlhf_guard}
status=0
rldk monitor --preset grpo_safe --out "$out" --stop-grace 30 \
  --cmd "${PYTHON:-python3} examples/trainers/sim_openrlhf.py --steps 200 --runaway-step 40" || status=$?
echo "rldk monitor exited with $status (1: a stop rule fired and the trainer was stopped); report: $out/report.json"
