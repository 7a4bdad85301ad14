#!/usr/bin/env bash
# The main job on a bundled example: rldk launches a simulated GRPO trainer (examples/trainers/sim_grpo.py, which
# logs with rldk.EventWriter), watches it with the grpo_safe guard rules, and stops it when its KL runs away.
# Alerts, the report and the trainer's metrics land in runs/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
source .venv/bin/activate
echo
echo '$ rldk monitor --preset grpo_safe --out runs/demo --cmd "python examples/trainers/sim_grpo.py"'
status=0
rldk monitor --preset grpo_safe --out runs/demo --cmd "python examples/trainers/sim_grpo.py" || status=$?
echo
echo "exit code $status (1: a stop rule fired and rldk stopped the trainer)"
echo
echo '$ cat runs/demo/alerts.txt'
cat runs/demo/alerts.txt
echo
echo '$ rldk info runs/demo/metrics.jsonl'
rldk info runs/demo/metrics.jsonl
[[ $status -eq 1 ]]  # anything else means the demo did not go as designed
