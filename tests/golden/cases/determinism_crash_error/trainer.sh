#!/bin/sh
# A stand-in trainer: logs loss and reward per step to $RLDK_METRICS_PATH. NONDET_FROM=N makes replica 1 and up
# drift from step N on; CRASH_REPLICA=i makes that replica fail.
if [ -n "$CRASH_REPLICA" ] && [ "$RLDK_REPLICA_INDEX" = "$CRASH_REPLICA" ]; then
  echo "RuntimeError: CUDA error: an illegal memory access was encountered" >&2
  exit 1
fi
for step in 1 2 3 4 5 6 7 8; do
  extra=0
  if [ -n "$NONDET_FROM" ] && [ "$step" -ge "$NONDET_FROM" ]; then extra="$RLDK_REPLICA_INDEX"; fi
  awk -v s="$step" -v e="$extra" 'BEGIN { printf "{\"step\": %d, \"loss\": %.6f, \"reward\": %.6f}\n", s, 1.0 / s + e * 1e-4, 0.1 * s }'
done > "$RLDK_METRICS_PATH"
echo "Global seed set to 0"
