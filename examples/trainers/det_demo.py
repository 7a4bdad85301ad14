"""A tiny simulated trainer for determinism checks: identical replicas, or replicas that diverge at a known step.

    python examples/trainers/det_demo.py --mode deterministic --steps 50
    python examples/trainers/det_demo.py --mode nondet --steps 50 --diverge-step 20

Every step writes one JSON line {"step", "loss", "reward_mean", "kl", "entropy", "grad_norm", "learning_rate"} to
--out, else to $RLDK_METRICS_PATH, else to stdout. Metrics come from a random.Random seeded with --seed, so two
replicas with the same seed write byte-identical files.

--mode nondet adds noise drawn from os.urandom to every metric but the learning rate from --diverge-step on (default 20). Steps before it
stay identical across replicas, so the first divergent step is exactly --diverge-step (the noise is at least 1e-3
in size, far above any comparison tolerance). That is the known answer tests of `rldk check-determinism` assert.

Exit status: 0, or 2 on bad arguments.
"""
import argparse
import json
import math
import os
import random
import struct
import sys


def entropy_noise():
    """A value in [1e-3, 2e-3) with a random sign, from the OS entropy pool: different in every process."""
    raw = struct.unpack("<Q", os.urandom(8))[0]
    magnitude = 1e-3 * (1.0 + (raw >> 1) / float(1 << 63))
    return magnitude if raw & 1 else -magnitude


def step_metrics(step, total, rng):
    """Plausible PPO-style curves: loss falls, reward rises, KL grows slowly; jitter from the seeded rng."""
    progress = step / float(total)
    return {
        "loss": 1.2 * math.exp(-2.0 * progress) + 0.05 * rng.gauss(0.0, 1.0),
        "reward_mean": 0.2 + 0.6 * progress + 0.03 * rng.gauss(0.0, 1.0),
        "kl": 0.01 + 0.05 * progress + 0.002 * abs(rng.gauss(0.0, 1.0)),
        "entropy": 2.0 - 0.8 * progress + 0.02 * rng.gauss(0.0, 1.0),
        "grad_norm": 1.0 + 0.3 * abs(rng.gauss(0.0, 1.0)),
        "learning_rate": 1e-5,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["deterministic", "nondet"], default="deterministic")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--diverge-step", type=int, default=20,
                        help="nondet mode: first step whose metrics carry OS-entropy noise (default 20)")
    parser.add_argument("--out", help="metrics JSONL path (default: $RLDK_METRICS_PATH, else stdout)")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    if args.diverge_step < 1:
        parser.error("--diverge-step must be at least 1")

    path = args.out or os.environ.get("RLDK_METRICS_PATH")
    rng = random.Random(args.seed)
    out = open(path, "w", encoding="utf-8") if path else sys.stdout
    try:
        for step in range(1, args.steps + 1):
            record = step_metrics(step, args.steps, rng)
            if args.mode == "nondet" and step >= args.diverge_step:
                # The schedule stays exact, as a real trainer's would; everything the data touches drifts.
                record = {k: v if k == "learning_rate" else v + entropy_noise() for k, v in record.items()}
            record["step"] = step
            out.write(json.dumps(record, sort_keys=True) + "\n")
            out.flush()
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
