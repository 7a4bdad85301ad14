"""A simulated verl PPO run that prints its metrics exactly the way verl's console logger does, for
`rldk monitor --cmd`.

verl's `console` logger prints one line per training step: "step:12 - key:value - ..." over the numeric values, each
formatted with pprint (NumPy scalars from reduce_metrics show as np.float64(...)), and Ray prefixes the driver's
output with "(TaskRunner pid=N) ". From --runaway-step on, the in-reward KL penalty (`actor/reward_kl_penalty`,
per token) grows until a guard trips. The run exits cleanly on SIGTERM after the current step.

    rldk monitor --preset ppo_safe --out runs/verl_guard --cmd "python examples/trainers/sim_verl.py --runaway-step 40"
"""
import argparse
import math
import os
import pprint
import random
import signal
import sys
import time

import numpy as np

stop_requested = False


def on_sigterm(signum, frame):
    global stop_requested
    stop_requested = True


def concat_dict_to_str(data, step):
    # verl/utils/logger/aggregate_logger.py: numbers only, in insertion order, values through pprint.
    parts = ["step:%d" % step]
    for key, value in data.items():
        if isinstance(value, (int, float, np.number)):
            parts.append("%s:%s" % (key, pprint.pformat(value)))
    return " - ".join(parts)


def metrics_at(step, runaway_step, steps_per_epoch, rng):
    """One step's metrics with verl's keys; actor/critic values are NumPy scalars as reduce_metrics returns them."""
    runaway = max(0, step - runaway_step)
    kl = 0.015 + 0.0005 * step + 0.001 * runaway ** 2 + abs(rng.gauss(0, 0.002))
    score = -0.1 + 0.9 * (1 - math.exp(-step / 70)) + rng.gauss(0, 0.02)
    length = 300 + 0.5 * step + rng.gauss(0, 8)
    return {
        "global_seqlen/min": 69000 + 10 * step,
        "actor/entropy": np.float64(max(0.05, 0.6 * math.exp(-step / 400) + rng.gauss(0, 0.005))),
        "actor/reward_kl_penalty": np.float64(kl),
        "actor/reward_kl_penalty_coeff": np.float64(0.001),
        "actor/pg_loss": np.float64(rng.gauss(0.01, 0.02)),
        "actor/pg_clipfrac": np.float64(abs(rng.gauss(0.004, 0.001)) * (1 + runaway / 10)),
        "actor/ppo_kl": np.float64(abs(rng.gauss(0.0002, 0.00005))),
        "actor/grad_norm": np.float64(abs(rng.gauss(0.2, 0.03)) * (1 + runaway / 20)),
        "actor/lr": np.float64(1e-06),
        "critic/vf_loss": np.float64(abs(rng.gauss(0.007, 0.001))),
        "critic/score/mean": np.float64(score),
        "critic/rewards/mean": np.float64(score - 0.001 * kl * length),
        "response_length/mean": np.float64(length),
        "response_length/clip_ratio": np.float64(min(1.0, max(0.0, 0.02 + rng.gauss(0, 0.005)))),
        "training/global_step": step,
        "training/epoch": (step - 1) // steps_per_epoch,
        "timing_s/step": 12.0 + rng.gauss(0, 0.3),
        "perf/throughput": 1200.0 + rng.gauss(0, 20),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runaway-step", type=int, default=40, help="step at which the KL penalty starts to run away")
    parser.add_argument("--step-seconds", type=float, default=0.02, help="simulated time per training step")
    parser.add_argument("--steps-per-epoch", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, on_sigterm)
    rng = random.Random(args.seed)
    prefix = "(TaskRunner pid=%d) " % os.getpid()
    print(prefix + "Using LocalLogger is deprecated.", flush=True)
    for step in range(1, args.steps + 1):
        time.sleep(args.step_seconds)
        # tqdm's progress bar goes to stderr between the metric lines, as in a real run.
        sys.stderr.write("Training Progress: %3d%%| %d/%d [00:%02d<00:00, 12.1s/it]\n"
                         % (100 * step // args.steps, step, args.steps, step % 60))
        print(prefix + concat_dict_to_str(metrics_at(step, args.runaway_step, args.steps_per_epoch, rng), step),
              flush=True)
        if stop_requested:
            print(prefix + "SIGTERM received at step %d; checkpoint saved, exiting" % step, flush=True)
            return 0
    print(prefix + "Training finished after %d steps" % args.steps, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
