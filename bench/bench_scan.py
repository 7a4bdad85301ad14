#!/usr/bin/env python3
"""Scan benchmark: `rldk scan` on a wide log (default 200,000 steps x 70 metrics) against a NumPy baseline, same run.

rldk: `rldk scan FILE --json --fail-on never`, every detector, process start included, best of --repeat runs. Its
peak RSS is measured around every run by GNU time (`/usr/bin/time -f %M`), and the table reports the largest peak
over the runs (not the best run's), so a run that happened to allocate more is not hidden. GNU time rather than
os.wait4 or RUSAGE_CHILDREN: Linux carries the high-water RSS of the address space a child is spawned from into the
child's ru_maxrss across exec, so any child of this Python process would report at least this process's own peak
(GBs once the baseline has loaded its columns); GNU time forks from its own small image.

Baseline (NumPy, the same file, in this process, best of --baseline-repeat): the analysis a Python user would write
instead of the scan, in vectorised NumPy where it can be. It parses the file with Python's json module into one
column per metric, then for each of the catalog's driving metrics that the log has computes a warm-up median/MAD, a
robust z-score per point, a two-sided CUSUM (a Python loop, as CUSUM is sequential) and a trailing rolling mean.
Why this one: it is the least a script must do to detect the same kind of change on the same log (read every value,
a robust baseline, a change detector), so it is a floor for "the same analysis in Python", not a reimplementation of
every detector of the catalog. With --cpu N the scan and the baseline are both pinned to that CPU.

With --memory-growth it also scans a longer log (--long-steps, default 2,000,000 steps x the same metrics, generated
once into bench/data, ~5.6 GB at the default size; rldk only) to show how the peak grows with the log. With --docs FILE it replaces the text between
<!-- bench:scan:begin --> and <!-- bench:scan:end --> in FILE with the command line, the date, the load average at
the start, the machine, the table and whether the goal is met.

Goal (issue): scan 200k x 70 in <= 1 s with peak memory < 64 MB, and a 2 M-step run with the same peak memory.

Usage:
  python3 bench/bench_scan.py --cpu 1                          # build/release/rldk, 200,000 x 70
  python3 bench/bench_scan.py --cpu 1 --repeat 5 --memory-growth --docs docs/benchmarks.md
  python3 bench/bench_scan.py --steps 5000 --repeat 1          # a quick check
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gen_logs  # noqa: E402  (sibling module; bench/ is not a package)
from run_bench import (block_bounds, ensure_wide, machine, markdown_table, paragraph, pin_to,  # noqa: E402
                       replace_block, run_header, text_table)

GNU_TIME = "/usr/bin/time"

# Raw names (as gen_logs writes them) of the metrics the catalog's detectors are driven by.
DRIVING = ["actor/ppo_kl", "actor/entropy", "actor/grad_norm", "critic/score/mean", "actor/pg_clipfrac",
           "response_length/mean", "critic/advantages/mean", "actor/lr", "critic/grad_norm"]

GOAL_STEPS, GOAL_METRICS, GOAL_SECONDS, GOAL_PEAK_MB = 200_000, 70, 1.0, 64.0
GOAL = "scan 200k x 70 in <= 1 s with peak memory < 64 MB, and a 2 M-step run with the same peak memory"
# A scan whose memory is bounded still peaks a few percent apart on two logs (allocator arenas, buffer growth).
SAME_PEAK_TOLERANCE = 1.10

TABLE = ["log", "size MB", "points", "findings", "rldk scan s", "rldk points/s", "rldk peak RSS MB",
         "NumPy baseline s", "baseline / rldk time"]
# A detector with more findings than this per 1,000 steps of the shorter log is firing on the generator's noise
# (its metrics are independent noise around fixed levels, not a training run); the memory check is repeated without
# such detectors, so that the size of the report (thousands of findings) is not taken for memory held per step.
FLOOD_PER_1000_STEPS = 1.0


def fail(message: str) -> None:
    print(f"{os.path.basename(sys.argv[0])}: {message}", file=sys.stderr)
    sys.exit(2)


def timed_run(cmd: list[str]) -> dict:
    """One run of `cmd` under GNU time: wall seconds (process start included), peak RSS in KiB, stdout."""
    if not os.access(GNU_TIME, os.X_OK):
        fail(f"{GNU_TIME} (GNU time) is needed to measure peak memory: apt-get install time")
    with tempfile.NamedTemporaryFile(mode="r", suffix=".maxrss") as rss:
        start = time.perf_counter()
        proc = subprocess.run([GNU_TIME, "-f", "%M", "-o", rss.name] + cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            fail("%s failed (exit %d): %s" % (shlex.join(cmd), proc.returncode, proc.stderr.strip()[-2000:]))
        peak_kib = int(rss.read().split()[-1])
    return {"seconds": seconds, "peak_rss_kib": peak_kib, "stdout": proc.stdout}


def numpy_baseline(path: str) -> float:
    import numpy as np

    start = time.perf_counter()
    columns: dict[str, list[float]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            for k, v in record.items():
                if isinstance(v, (int, float)):
                    columns.setdefault(k, []).append(float(v))
    for name in DRIVING:
        if name not in columns:
            continue
        x = np.asarray(columns[name])
        warm = x[:50]
        med = np.median(warm)
        sigma = max(1.4826 * np.median(np.abs(warm - med)), 1e-12)
        z = np.clip((x - med) / sigma, -4, 4)
        up = down = 0.0
        for v in z.tolist():  # CUSUM is sequential
            up = max(0.0, up + v - 1.0)
            down = max(0.0, down - v - 1.0)
        kernel = np.ones(100) / 100
        np.convolve(x, kernel, mode="valid")
    return time.perf_counter() - start


def scan(rldk: str, path: str, steps: int, repeat: int, prefix: list[str], extra: list[str] = ()) -> dict:
    """Best time of `repeat` scans; the peak RSS is the largest of them."""
    best = None
    peak = 0
    for _ in range(repeat):
        r = timed_run(prefix + [rldk, "scan", path, "--json", "--fail-on", "never", *extra])
        report = json.loads(r["stdout"])
        # A scan that stopped early would look fast: it must have read every step of the log.
        seen = report["runs"][0]["steps"]["count"]
        if seen != steps:
            fail(f"rldk scan saw {seen} steps in {path}, not {steps}")
        r["skipped"] = len(report["runs"][0]["skipped"])
        r["findings"] = [f["detector"] for f in report["runs"][0]["findings"]]
        del r["stdout"]
        peak = max(peak, r["peak_rss_kib"])
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    best["peak_mb"] = peak / 1024.0
    return best


def row(label: str, steps: int, metrics: int, path: str, r: dict, baseline: float | None) -> list[str]:
    points = steps * metrics
    return [label, "%.0f" % (os.path.getsize(path) / 1e6), "{:,}".format(points), "{:,}".format(len(r["findings"])),
            "%.2f" % r["seconds"], "{:,.0f}".format(points / r["seconds"]), "%.1f" % r["peak_mb"],
            "-" if baseline is None else "%.2f" % baseline,
            "-" if baseline is None else "%.1fx" % (baseline / r["seconds"])]


def growth_text(steps: int, short: dict, long_steps: int, long: dict, what: str) -> tuple[str, bool]:
    growth = long["peak_mb"] / short["peak_mb"]
    same = growth <= SAME_PEAK_TOLERANCE and long["peak_mb"] < GOAL_PEAK_MB
    verdict = ("the same peak (within %.0f%%) and under %g MB" % ((SAME_PEAK_TOLERANCE - 1) * 100, GOAL_PEAK_MB)
               if same else "memory grows")
    return ("%s, at %s steps (x%.0f the log) the peak is %.1f MB, x%.2f the shorter log's (%s findings against %s): %s."
            % (what, f"{long_steps:,}", long_steps / steps, long["peak_mb"], growth, f"{len(long['findings']):,}",
               f"{len(short['findings']):,}", verdict), same)


def goal_text(steps: int, metrics: int, r: dict, longer: dict | None) -> str:
    """The goal, and whether this run meets it, from the measured figures."""
    fast, small = r["seconds"] <= GOAL_SECONDS, r["peak_mb"] < GOAL_PEAK_MB
    here = "%.2f s (%s %g s), peak %.1f MB (%s %g MB)" % (
        r["seconds"], "<=" if fast else ">", GOAL_SECONDS, r["peak_mb"], "<" if small else ">=", GOAL_PEAK_MB)
    text = "Goal (issue): %s. " % GOAL
    if (steps, metrics) == (GOAL_STEPS, GOAL_METRICS):
        text += "Here: %s; the 200k x 70 part is %s." % (here, "met" if fast and small else "not met")
    else:
        text += "Not judged: this run scanned %s x %d, not %s x %d; at this size: %s." % (
            f"{steps:,}", metrics, f"{GOAL_STEPS:,}", GOAL_METRICS, here)
    if longer is None:
        return text + " Memory growth with the log: not measured in this run (--memory-growth)."
    all_text, all_same = growth_text(steps, r, longer["steps"], longer["all"], "With every detector")
    text += " " + all_text
    if all_same:
        return text + " The 2 M-step part is met." if longer["steps"] >= 2_000_000 else text
    if longer.get("flood"):
        quiet_text, same = growth_text(steps, longer["short_quiet"], longer["steps"], longer["long_quiet"],
                                       "Without %s (firing on the generator's noise: more than %g findings per 1,000 "
                                       "steps)" % (", ".join(longer["flood"]), FLOOD_PER_1000_STEPS))
        text += " " + quiet_text
        text += (" So the peak grows with the report (its findings), not with the log%s." % (
                 ": the 2 M-step part is met" if longer["steps"] >= 2_000_000 else "")
                 if same else " Memory grows with the log: the 2 M-step part is not met.")
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"),
                   help="build folder holding the rldk binary (default build/release)")
    p.add_argument("--data-dir", default=gen_logs.DEFAULT_DIR, help="where generated logs live (default bench/data)")
    p.add_argument("--steps", type=int, default=200_000)
    p.add_argument("--metrics", type=int, default=70)
    p.add_argument("--repeat", type=int, default=3, help="rldk runs per log; the best time is reported (default 3)")
    p.add_argument("--baseline-repeat", type=int, default=1,
                   help="runs of the NumPy baseline; the best is reported (default 1)")
    p.add_argument("--cpu", type=int, default=None, help="pin rldk and the baseline to this CPU (default: not pinned)")
    p.add_argument("--skip-baseline", action="store_true")
    p.add_argument("--memory-growth", action="store_true",
                   help="also scan a log of --long-steps steps (generated once: ~5.6 GB at the default size)")
    p.add_argument("--long-steps", type=int, default=2_000_000,
                   help="steps of the longer log of --memory-growth (default 2,000,000, the goal's)")
    p.add_argument("--markdown", help="also write the results as Markdown to this file")
    p.add_argument("--docs", help="replace the bench:scan block of this Markdown file (e.g. docs/benchmarks.md)")
    args = p.parse_args(argv)

    started, load = time.gmtime(), os.getloadavg()
    if args.docs:
        block_bounds(args.docs, "scan")  # a missing marker should stop the run before, not after, the measurement
    rldk = os.path.join(args.build, "rldk")
    if not os.access(rldk, os.X_OK):
        fail(f"no rldk binary at {rldk}; build first (cmake --build {args.build} --target rldk)")
    prefix = pin_to(args.cpu)
    os.makedirs(args.data_dir, exist_ok=True)

    path = ensure_wide(args.data_dir, args.steps, args.metrics)
    print(f"rldk scan {os.path.basename(path)} ...", flush=True)
    r = scan(rldk, path, args.steps, args.repeat, prefix)
    longer = None
    if args.memory_growth:
        long_steps = args.long_steps
        long_path = ensure_wide(args.data_dir, long_steps, args.metrics)
        print(f"rldk scan {os.path.basename(long_path)} ...", flush=True)
        longer = {"steps": long_steps, "path": long_path, "all": scan(rldk, long_path, long_steps, args.repeat, prefix)}
        counts = {d: r["findings"].count(d) for d in set(r["findings"])}
        flood = sorted(d for d, n in counts.items() if n > FLOOD_PER_1000_STEPS * args.steps / 1000)
        if flood:
            skip = ["--skip", ",".join(flood)]
            print(f"rldk scan both logs --skip {','.join(flood)} ...", flush=True)
            longer.update(flood=flood, short_quiet=scan(rldk, path, args.steps, 1, prefix, skip),
                          long_quiet=scan(rldk, long_path, long_steps, 1, prefix, skip))
    baseline = None
    if not args.skip_baseline:
        print("NumPy baseline ...", flush=True)
        baseline = min(numpy_baseline(path) for _ in range(args.baseline_repeat))

    def label(steps, quiet=False):
        return "{:,} steps x {} metrics{}".format(steps, args.metrics, ", --skip the noise-firing detectors" if quiet
                                                  else "")

    rows = [row(label(args.steps), args.steps, args.metrics, path, r, baseline)]
    if longer:
        rows.append(row(label(longer["steps"]), longer["steps"], args.metrics, longer["path"], longer["all"], None))
        if longer.get("flood"):
            rows.append(row(label(args.steps, True), args.steps, args.metrics, path, longer["short_quiet"], None))
            rows.append(row(label(longer["steps"], True), longer["steps"], args.metrics, longer["path"],
                            longer["long_quiet"], None))
    print()
    print(machine())
    print(text_table(TABLE, rows))
    goal = goal_text(args.steps, args.metrics, r, longer)
    print()
    print(paragraph(goal))

    notes = ["rldk: `rldk scan FILE --json` with every detector (%d skipped for a metric the log does not have), "
             "best of %d runs, process start included; peak RSS: the largest of those runs, by GNU time." %
             (r["skipped"], args.repeat)]
    if baseline is not None:
        notes.append("NumPy baseline: best of %d%s; \"baseline / rldk time\": its seconds divided by rldk's on "
                     "the same log." % (args.baseline_repeat, ", on the shorter log only" if longer else ""))
    if args.cpu is not None:
        notes.append("Both pinned to CPU %d." % args.cpu)
    text = "\n\n".join([run_header(started, load), markdown_table(TABLE, rows), paragraph(" ".join(notes)),
                        paragraph(goal)]) + "\n"
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"\nwrote {args.markdown}")
    if args.docs:
        replace_block(args.docs, "scan", text)
        print(f"\nupdated the bench:scan block of {args.docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
