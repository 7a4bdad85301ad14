"""Plans and writes a benchmark corpus: faulty runs (one labeled fault each) for every fault type and algorithm it
applies to, plus clean runs, each as `<run_id>.jsonl` with a `<run_id>.labels.json` beside it, and a manifest.

The same seed gives the same corpus, byte for byte.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from . import algorithms
from .faults import CATALOG, inject
from .labels import RunLabels, read_labels

MANIFEST_SCHEMA = "rldk.fault_bench.manifest/v1"
# Bump when the generator's output changes, so a corpus written by an older generator is rebuilt, not reused.
GENERATOR_VERSION = 3

# Run lengths in steps. Short runs dominate faulty cases (cheap, and the hardest: little baseline before the
# onset); clean runs include long ones, where false alarms accumulate.
FAULTY_LENGTHS = (300, 500, 800, 1200, 2000)
CLEAN_LENGTHS = (300, 800, 1500, 3000, 5000)


@dataclass(frozen=True)
class CorpusSize:
    runs_per_fault: int  # faulty runs per fault type, spread over the algorithms it applies to
    clean_steps: int  # total steps of clean runs, at least


FULL = CorpusSize(runs_per_fault=30, clean_steps=330_000)
QUICK = CorpusSize(runs_per_fault=3, clean_steps=25_000)


@dataclass(frozen=True)
class PlannedRun:
    run_id: str
    algorithm: str
    steps: int
    fault: str | None
    seed: tuple


def plan(size: CorpusSize, seed: int, faults=None) -> list:
    """Decides every run (id, algorithm, length, fault, seed) before generating any, so a subset can be rebuilt."""
    rng = np.random.default_rng([seed, 0])
    runs = []
    for fault_name in (faults or CATALOG):
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
        runs.append(PlannedRun("clean-%s-%03d" % (algorithm, k), algorithm, steps, None, (seed, 2, k)))
        total += steps
        k += 1
    return runs


def build(planned: PlannedRun):
    """Generates one run and its labels (nothing is written)."""
    rng = np.random.default_rng(list(planned.seed))
    run = algorithms.generate(planned.algorithm, planned.run_id, planned.steps, rng)
    faults = [inject(run, planned.fault, rng)] if planned.fault else []
    return run, RunLabels(run_id=planned.run_id, algorithm=planned.algorithm, steps=planned.steps, faults=faults)


def write_corpus(directory: str, size: CorpusSize, seed: int, faults=None) -> dict:
    os.makedirs(directory, exist_ok=True)
    entries = []
    for planned in plan(size, seed, faults):
        run, labels = build(planned)
        path = os.path.join(directory, planned.run_id + ".jsonl")
        run.write_jsonl(path)
        labels.write(os.path.join(directory, planned.run_id + ".labels.json"))
        entries.append({"run_id": planned.run_id, "algorithm": planned.algorithm, "steps": planned.steps,
                        "fault": planned.fault, "path": planned.run_id + ".jsonl"})
    manifest = {"schema": MANIFEST_SCHEMA, "generator": GENERATOR_VERSION, "seed": seed, "runs_per_fault": size.runs_per_fault,
                "clean_steps": size.clean_steps, "runs": entries}
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
