#!/usr/bin/env python3
"""Fleet benchmark: `rldk scan DIR` over a fleet of runs on one thread and on every core, in the same run.

The fleet (default 1,000 JSONL logs of 1,000 steps x 8 metrics, a third of them with a KL jump) is generated once
into bench/data/fleet-<runs>x<steps>/. It is scanned with `rldk scan DIR --json --fail-on never --threads 1` and
with `--threads 0` (one file per core), each the best of --repeat runs, process start included, and the two reports
must be byte-identical: the parallel scan has to give the same answer, not only a faster one.

Baseline: the same binary on one thread. The question is how well the scan of a folder uses the cores, so the
reference is the one-thread rate measured in the same run on the same machine, not another tool. Peak RSS (GNU time,
the largest over the runs; see bench/bench_scan.py for why not os.wait4) shows that the whole fleet is not held in
memory at once.

Goal (docs/benchmarks.md): >= 1.8x the one-core rate on 2 cores.

With --docs FILE the results replace the text between <!-- bench:fleet:begin --> and <!-- bench:fleet:end --> in
FILE, with the command line, the date, the load average at the start, the machine and whether the goal is met.

Usage:
  python3 bench/bench_fleet.py                                 # build/release/rldk, 1,000 runs x 1,000 steps
  python3 bench/bench_fleet.py --repeat 5 --docs docs/benchmarks.md
  python3 bench/bench_fleet.py --runs 50 --steps 200 --repeat 1   # a quick check
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_scan import fail, timed_run  # noqa: E402  (sibling modules; bench/ is not a package)
from run_bench import block_bounds, machine, markdown_table, paragraph, replace_block, run_header  # noqa: E402

GOAL_SPEEDUP, GOAL_CORES = 1.8, 2


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


def folder_mb(folder: str) -> float:
    return sum(e.stat().st_size for e in os.scandir(folder) if e.name.endswith(".jsonl")) / 1e6


def time_scan(rldk: str, folder: str, threads: int, repeat: int) -> dict:
    """Best time of `repeat` scans; the peak RSS is the largest of them; the report of the last."""
    best, peak, out = float("inf"), 0, ""
    for _ in range(repeat):
        r = timed_run([rldk, "scan", folder, "--json", "--fail-on", "never", "--threads", str(threads)])
        best = min(best, r["seconds"])
        peak = max(peak, r["peak_rss_kib"])
        out = r["stdout"]
    return {"seconds": best, "peak_mb": peak / 1024.0, "report": out}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"),
                        help="build folder holding the rldk binary (default build/release)")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="scans per thread count; the best is reported")
    parser.add_argument("--markdown", help="also write the results as Markdown to this file")
    parser.add_argument("--docs", help="replace the bench:fleet block of this Markdown file (e.g. docs/benchmarks.md)")
    args = parser.parse_args(argv)

    started, load = time.gmtime(), os.getloadavg()
    if args.docs:
        block_bounds(args.docs, "fleet")  # a missing marker should stop the run before, not after, the measurement
    rldk = os.path.join(args.build, "rldk")
    if not os.access(rldk, os.X_OK):
        fail(f"no rldk binary at {rldk}; build first (cmake --build {args.build} --target rldk)")
    folder = os.path.join(HERE, "data", "fleet-%dx%d" % (args.runs, args.steps))
    make_fleet(folder, args.runs, args.steps)
    cores = os.cpu_count() or 1
    print("rldk scan, 1 thread ...", flush=True)
    one = time_scan(rldk, folder, 1, args.repeat)
    print("rldk scan, %d threads ..." % cores, flush=True)
    many = time_scan(rldk, folder, 0, args.repeat)
    if one["report"] != many["report"]:
        fail("the reports differ between 1 thread and %d" % cores)

    speedup = one["seconds"] / many["seconds"]
    headers = ["runs", "steps each", "size MB", "1 thread s", "%d threads s" % cores, "speed-up",
               "runs/s (%d cores)" % cores, "peak RSS MB (1 / %d threads)" % cores]
    rows = [["{:,}".format(args.runs), "{:,}".format(args.steps), "%.0f" % folder_mb(folder),
             "%.2f" % one["seconds"], "%.2f" % many["seconds"], "%.2fx" % speedup,
             "%.0f" % (args.runs / many["seconds"]), "%.1f / %.1f" % (one["peak_mb"], many["peak_mb"])]]
    met = speedup >= GOAL_SPEEDUP
    goal = "Goal: >= %gx the one-core rate on %d cores. Here %.2fx on %d cores: %s." % (
        GOAL_SPEEDUP, GOAL_CORES, speedup, cores, "met" if met else "not met")
    if cores != GOAL_CORES:
        goal += " This machine has %d cores; the goal is stated for %d." % (cores, GOAL_CORES)
    notes = ("`rldk scan DIR --json --fail-on never` with `--threads 1` and `--threads 0` (one file per core), best "
             "of %d runs each, process start included; the two reports were checked byte-identical. Peak RSS: the "
             "largest of the runs, by GNU time." % args.repeat)
    print()
    print(machine())
    print(markdown_table(headers, rows, text_columns=0))
    print()
    print(paragraph(goal))
    text = "\n\n".join([run_header(started, load), markdown_table(headers, rows, text_columns=0),
                         paragraph(notes), paragraph(goal)]) + "\n"
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"\nwrote {args.markdown}")
    if args.docs:
        replace_block(args.docs, "fleet", text)
        print(f"\nupdated the bench:fleet block of {args.docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
