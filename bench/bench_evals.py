#!/usr/bin/env python3
"""Times rldk's stratified bootstrap of the IQM (issue 14: 50,000 replicates for 10 runs x 100 tasks under 1 s on
one core) against rliable's get_interval_estimates and a batched NumPy equivalent, in the same run.

rliable resamples with NumPy's global generator and SciPy's trim_mean per replicate; the NumPy baseline draws all
replicates' indices at once and trims them with one trim_mean call (memory-bound, so it runs in chunks). Both
baselines run fewer replicates (--baseline-reps) and are scaled linearly to the same count.

  python3 bench/bench_evals.py [--runs 10] [--tasks 100] [--reps 50000] [--baseline-reps 2000]

Prints one Markdown table row.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def rldk_time(scores, reps):
    import rldk
    start = time.perf_counter()
    interval = rldk.evals.aggregate(scores, "iqm", reps=reps, seed=0)
    return time.perf_counter() - start, interval


def numpy_time(scores, reps, chunk=1000):
    from scipy.stats import trim_mean
    runs, tasks = scores.shape
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    out = []
    for done in range(0, reps, chunk):
        k = min(chunk, reps - done)
        idx = rng.integers(0, runs, (k, runs, tasks))
        out.append(trim_mean(scores[idx, np.arange(tasks)].reshape(k, -1), 0.25, axis=1))
    np.percentile(np.concatenate(out), [2.5, 97.5])
    return time.perf_counter() - start


def rliable_time(scores, reps):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
    import pandas.util._decorators as decorators  # arch 7.2 with pandas 3: see tests/python/test_evals.py
    original = decorators.deprecate_kwarg
    decorators.deprecate_kwarg = (lambda *a, **k: original(FutureWarning, *a, **k)
                                  if a and isinstance(a[0], str) else original(*a, **k))
    from rliable import library, metrics
    np.random.seed(0)
    start = time.perf_counter()
    library.get_interval_estimates({"x": scores}, lambda s: np.array([metrics.aggregate_iqm(s)]), reps=reps)
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--tasks", type=int, default=100)
    p.add_argument("--reps", type=int, default=50000)
    p.add_argument("--baseline-reps", type=int, default=2000)
    args = p.parse_args()
    scores = np.random.default_rng(0).random((args.runs, args.tasks))
    ours, interval = rldk_time(scores, args.reps)
    scale = args.reps / args.baseline_reps
    numpy_s = numpy_time(scores, args.baseline_reps) * scale
    try:
        rliable_s = rliable_time(scores, args.baseline_reps) * scale
    except ImportError:
        rliable_s = float("nan")
    print("| IQM stratified bootstrap, %d reps, %d runs x %d tasks | rldk %.2f s | rliable %.1f s (%.0fx) | "
          "NumPy batched %.1f s (%.1fx) |" % (args.reps, args.runs, args.tasks, ours, rliable_s, rliable_s / ours,
                                              numpy_s, numpy_s / ours))


if __name__ == "__main__":
    main()
