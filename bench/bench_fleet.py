#!/usr/bin/env python3
"""Times `rldk scan DIR` over a fleet of runs (default 1,000 JSONL logs of 1,000 steps x 8 metrics, a third of them
with a KL jump) on one thread and on every core, in the same run, and checks the two reports are byte-identical.
The goal (docs/benchmarks.md): all cores of a 2-core machine scan at >= 1.8x the one-thread rate.

  python3 bench/bench_fleet.py --build build/release [--runs 1000] [--steps 1000] [--repeat 3]

Prints one Markdown table row; the fleet is generated once into bench/data/fleet-<runs>x<steps>/.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def make_fleet(folder: str, runs: int, steps: int) -> None:
    done = os.path.join(folder, ".complete")
    if os.path.exists(done):
        return
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(20261125)
    for r in range(runs):
        jump = r % 3 == 0
        with open(os.path.join(folder, "run%04d.jsonl" % r), "w", encoding="utf-8") as f:
            for s in range(steps):
                kl = (2.0 if jump and s > steps * 0.6 else 0.05) + rng.gauss(0, 0.005)
                f.write(json.dumps({
                    "step": s, "loss": 1 / (1 + s * 0.01) + rng.gauss(0, 0.01), "kl": kl,
                    "entropy": 2.0 - s * 0.0005 + rng.gauss(0, 0.01), "reward_mean": 0.1 + s * 3e-4 + rng.gauss(0, 0.02),
                    "grad_norm": abs(rng.gauss(1, 0.1)), "lr": 1e-6, "response_length": 200 + rng.gauss(0, 5),
                    "clip_fraction": abs(rng.gauss(0.05, 0.01))}) + "\n")
    open(done, "w").close()


def time_scan(rldk: str, folder: str, threads: int, repeat: int) -> tuple[float, bytes]:
    best, out = float("inf"), b""
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run([rldk, "scan", folder, "--json", "--fail-on", "never", "--threads", str(threads)],
                              capture_output=True, check=True)
        best = min(best, time.perf_counter() - start)
        out = proc.stdout
    return best, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build", "release"))
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rldk = os.path.join(args.build, "rldk")
    folder = os.path.join(HERE, "data", "fleet-%dx%d" % (args.runs, args.steps))
    make_fleet(folder, args.runs, args.steps)
    one, report_one = time_scan(rldk, folder, 1, args.repeat)
    cores = os.cpu_count() or 1
    many, report_many = time_scan(rldk, folder, 0, args.repeat)
    if report_one != report_many:
        print("reports differ between 1 thread and %d" % cores, file=sys.stderr)
        return 1
    print("| runs | steps each | 1 thread s | %d threads s | speed-up | runs/s (all cores) |" % cores)
    print("|---|---|---|---|---|---|")
    print("| %d | %d | %.2f | %.2f | %.2fx | %.0f |" % (args.runs, args.steps, one, many, one / many, args.runs / many))
    return 0


if __name__ == "__main__":
    sys.exit(main())
