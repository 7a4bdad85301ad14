"""A simulated GRPO trainer for the monitor demo: real-looking metrics, logged with rldk.EventWriter.

Writes canonical events to $RLDK_METRICS_PATH (set by `rldk monitor --cmd`), or to --metrics. From --runaway-step on,
the policy walks away from the reference: per-token KL grows until a guard trips. Like a real trainer it handles
SIGTERM by finishing the current step, saving, and exiting cleanly.

    python examples/trainers/sim_grpo.py --steps 400 --runaway-step 150
"""
import argparse
import math
import os
import random
import signal
import sys
import time

import rldk

stop_requested = False


def on_sigterm(signum, frame):
    global stop_requested
    stop_requested = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--runaway-step", type=int, default=150, help="step at which KL starts to run away")
    parser.add_argument("--step-seconds", type=float, default=0.015, help="simulated time per optimizer step")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--metrics", default=os.environ.get("RLDK_METRICS_PATH", "runs/sim_grpo/metrics.jsonl"))
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, on_sigterm)
    rng = random.Random(args.seed)
    print("sim_grpo: %d steps, metrics -> %s" % (args.steps, args.metrics), flush=True)
    with rldk.EventWriter(args.metrics, run_id="sim-grpo", append=False) as writer:
        for step in range(1, args.steps + 1):
            time.sleep(args.step_seconds)
            runaway = max(0, step - args.runaway_step)
            kl = 0.02 + 0.0002 * step + 0.00004 * runaway ** 2 + abs(rng.gauss(0, 0.004))
            reward = 0.2 + 0.5 * (1 - math.exp(-step / 80)) + rng.gauss(0, 0.02)
            entropy = max(0.05, 0.8 * math.exp(-step / 500) - 0.002 * runaway + rng.gauss(0, 0.01))
            writer.log(step, metrics={
                "policy/kl": kl,
                "reward/mean": reward,
                "reward/std": 0.3 + rng.gauss(0, 0.02),
                "policy/entropy": entropy,
                "policy/grad_norm": abs(rng.gauss(0.4, 0.05)) * (1 + runaway / 50),
                "response/length_mean": 180 + 0.2 * step + rng.gauss(0, 5),
                "reward/frac_zero_std": max(0.0, 0.25 - step / 1000),
                "policy/lr": 1e-6,
            })
            if step % 25 == 0:
                print("sim_grpo: step %d/%d  reward %.3f  kl %.4f" % (step, args.steps, reward, kl), flush=True)
            if stop_requested:
                print("sim_grpo: SIGTERM received at step %d; checkpoint saved, exiting" % step, flush=True)
                return 0
    print("sim_grpo: finished %d steps" % args.steps, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
