"""Plans and writes a benchmark corpus: faulty runs (one labeled fault each) for every fault type and algorithm it
applies to, plus clean runs, each as `<run_id>.jsonl` with a `<run_id>.labels.json` beside it, and a manifest.

Regimes (docs/detector-benchmark.md, "Regimes"): long runs logged every step and short runs logged every 5/10/20
steps, with a fault onset in the middle of the run, in its first 15% ("early") or a drift from the first step.

The same seed gives the same corpus, byte for byte.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

import numpy as np

from . import algorithms
from .faults import CATALOG, inject, onsets
from .labels import RunLabels, read_labels

MANIFEST_SCHEMA = "rldk.fault_bench.manifest/v1"
# Bump when the generator's output changes, so a corpus written by an older generator is rebuilt, not reused.
GENERATOR_VERSION = 7

# Long runs: one logged row per optimizer step (verl, OpenRLHF, custom loops), lengths in steps. Short runs dominate
# faulty cases (cheap, and the hardest: little baseline before the onset); clean runs include long ones, where false
# alarms accumulate.
FAULTY_LENGTHS = (300, 500, 800, 1200, 2000)
CLEAN_LENGTHS = (300, 800, 1500, 3000, 5000)
# Short runs, as real users' logs are: 20-150 logged points, one every 5, 10 or 20 optimizer steps (TRL's
# logging_steps), so the logged steps go 10, 20, 30, ... and the run is 100-3,000 optimizer steps long.
SHORT_POINTS = (20, 30, 40, 60, 80, 100, 150)
LOG_EVERY = (5, 10, 20)
# Early-onset and drift runs: two of every three are short, the rest long.
SHORT_SHARE = (True, False, True)

# Regimes: run length (long / short) x onset (mid / early / drift); clean runs are "long-clean" or "short-clean".
REGIMES = ("long-mid", "short-mid", "long-early", "short-early", "long-drift", "short-drift")


@dataclass(frozen=True)
class CorpusSize:
    runs_per_fault: int  # long runs with a mid-run onset, per fault type, spread over its algorithms
    clean_steps: int  # total steps of long clean runs, at least
    short_runs_per_fault: int = 0  # short runs with a mid-run onset, per fault type that has them
    early_runs_per_fault: int = 0  # early onsets (long and short runs), per fault type that has them
    drift_runs_per_fault: int = 0  # drift from the first step (long and short runs), per fault type that has them
    short_clean_points: int = 0  # total logged points of short clean runs, at least


FULL = CorpusSize(runs_per_fault=30, clean_steps=330_000, short_runs_per_fault=12, early_runs_per_fault=12,
                  drift_runs_per_fault=12, short_clean_points=60_000)
QUICK = CorpusSize(runs_per_fault=3, clean_steps=25_000, short_runs_per_fault=2, early_runs_per_fault=2,
                   drift_runs_per_fault=2, short_clean_points=3_000)


@dataclass(frozen=True)
class PlannedRun:
    run_id: str
    algorithm: str
    steps: int  # optimizer steps; the log has steps // log_every rows
    fault: str | None
    seed: tuple
    regime: str = "long-mid"
    log_every: int = 1

    @property
    def points(self) -> int:
        return self.steps // self.log_every


def plan(size: CorpusSize, seed: int, faults=None) -> list:
    """Decides every run (id, algorithm, length, fault, seed, regime) before generating any, so a subset can be
    rebuilt. The long mid-onset runs of the fault types generator 3 had, and the long clean runs, are drawn exactly
    as generator 3 drew them (same stream, same order), so their figures stay comparable across versions; every
    run added since comes from a stream of its own (generator 4's types and regimes, then each later type)."""
    names = list(faults or CATALOG)
    rng = np.random.default_rng([seed, 0])
    runs = []
    for fault_name in [f for f in names if CATALOG[f].since <= 3]:
        fault = CATALOG[fault_name]
        for k in range(size.runs_per_fault):
            algorithm = fault.algorithms[k % len(fault.algorithms)]
            steps = int(rng.choice(FAULTY_LENGTHS))
            runs.append(PlannedRun("%s-%s-%02d" % (fault_name, algorithm, k), algorithm, steps, fault_name,
                                   (seed, 1, len(runs))))
    total, k = 0, 0
    while total < size.clean_steps:
        algorithm = algorithms.ALGORITHMS[k % len(algorithms.ALGORITHMS)]
        steps = int(rng.choice(CLEAN_LENGTHS))
        runs.append(PlannedRun("clean-%s-%03d" % (algorithm, k), algorithm, steps, None, (seed, 2, k), "long-clean"))
        total += steps
        k += 1

    rng = np.random.default_rng([seed, 3])
    added = []

    def add(fault_name, regime, k, algorithm):
        if regime.startswith("short"):
            every = int(rng.choice(LOG_EVERY))
            steps = int(rng.choice(SHORT_POINTS)) * every
            run_id = "%s-%s-%s-%02d" % (fault_name, regime, algorithm, k)
        else:
            every, steps = 1, int(rng.choice(FAULTY_LENGTHS))
            run_id = ("%s-%s-%02d" % (fault_name, algorithm, k) if regime == "long-mid"
                      else "%s-%s-%s-%02d" % (fault_name, regime, algorithm, k))
        added.append(PlannedRun(run_id, algorithm, steps, fault_name, (seed, 3, len(added)), regime, every))

    def add_fault(fault_name):
        fault = CATALOG[fault_name]
        if fault.since > 3 and fault.mid:
            for k in range(size.runs_per_fault):
                add(fault_name, "long-mid", k, fault.algorithms[k % len(fault.algorithms)])
        per_onset = {"mid": size.short_runs_per_fault if fault.short else 0,
                     "early": size.early_runs_per_fault, "drift": size.drift_runs_per_fault}
        for onset in onsets(fault):
            for k in range(per_onset[onset]):
                algorithm = fault.algorithms[k % len(fault.algorithms)]
                short = onset == "mid" or SHORT_SHARE[k % len(SHORT_SHARE)]
                add(fault_name, "%s-%s" % ("short" if short else "long", onset), k, algorithm)

    for fault_name in [f for f in names if CATALOG[f].since <= 4]:
        add_fault(fault_name)
    total, k = 0, 0
    while total < size.short_clean_points:
        algorithm = algorithms.ALGORITHMS[k % len(algorithms.ALGORITHMS)]
        every = int(rng.choice(LOG_EVERY))
        points = int(rng.choice(SHORT_POINTS))
        added.append(PlannedRun("clean-short-%s-%03d" % (algorithm, k), algorithm, points * every, None,
                                (seed, 4, k), "short-clean", every))
        total += points
        k += 1
    # Types added since generator 5 draw from a stream of their own, after every run generator 4 planned, so adding
    # one leaves the others' draws (and figures) as they were.
    rng = np.random.default_rng([seed, 5])
    for fault_name in [f for f in names if CATALOG[f].since >= 5]:
        add_fault(fault_name)
    return runs + added


def clean_run(planned: PlannedRun):
    """The run without its fault, one row per optimizer step (before subsampling), and the generator's rng."""
    rng = np.random.default_rng(list(planned.seed))
    headroom = planned.fault is not None and CATALOG[planned.fault].length_headroom
    run = algorithms.generate(planned.algorithm, planned.run_id, planned.steps, rng, length_headroom=headroom)
    run.params["log_every"] = planned.log_every
    return run, rng


def clean_twin(planned: PlannedRun):
    """What the log of `planned` would be without its fault (same seed, same draws)."""
    run = clean_run(planned)[0]
    algorithms.add_reward_components(run)
    return run.subsample(planned.log_every)


def build(planned: PlannedRun):
    """Generates one run and its labels (nothing is written)."""
    run, rng = clean_run(planned)
    onset = planned.regime.split("-")[1]
    faults = [inject(run, planned.fault, rng, onset)] if planned.fault else []
    algorithms.add_reward_components(run)
    return run.subsample(planned.log_every), RunLabels(
        run_id=planned.run_id, algorithm=planned.algorithm, steps=planned.steps, faults=faults,
        log_every=planned.log_every, regime=planned.regime)


def write_corpus(directory: str, size: CorpusSize, seed: int, faults=None) -> dict:
    os.makedirs(directory, exist_ok=True)
    entries = []
    for planned in plan(size, seed, faults):
        run, labels = build(planned)
        path = os.path.join(directory, planned.run_id + ".jsonl")
        run.write_jsonl(path)
        labels.write(os.path.join(directory, planned.run_id + ".labels.json"))
        entries.append({"run_id": planned.run_id, "algorithm": planned.algorithm, "steps": planned.steps,
                        "points": planned.points, "log_every": planned.log_every, "regime": labels.regime,
                        "fault": planned.fault, "path": planned.run_id + ".jsonl"})
    manifest = {"schema": MANIFEST_SCHEMA, "generator": GENERATOR_VERSION, "seed": seed, "size": asdict(size),
                "runs_per_fault": size.runs_per_fault, "clean_steps": size.clean_steps, "runs": entries}
    with open(os.path.join(directory, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return manifest


def read_corpus(directory: str):
    """The manifest and the labels of every run in it, keyed by run id."""
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    if manifest.get("schema") != MANIFEST_SCHEMA:
        raise ValueError("%s/manifest.json: not a fault-bench corpus manifest" % directory)
    labels = {e["run_id"]: read_labels(os.path.join(directory, e["run_id"] + ".labels.json"))
              for e in manifest["runs"]}
    return manifest, labels
