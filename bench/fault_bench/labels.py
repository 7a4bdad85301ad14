"""The label of an injected fault and the per-run label file (`<run>.labels.json`).

    {"schema": "rldk.fault_bench.labels/v1", "run_id": "ppo-0007", "algorithm": "ppo", "steps": 1000,
     "log_every": 1, "regime": "long-mid", "clean": false,
     "faults": [{"fault": "kl_level_shift", "metrics": ["policy/kl"], "onset_step": 412, "end_step": 999,
                 "magnitude": 4.0, "unit": "sigma", "also_accept": ["kl_drift", ...]}]}

A clean run has "clean": true and no faults. Steps are the run's own optimizer-step numbers, as logged: 1, 2, 3, ...
for a run that logs every step, 10, 20, 30, ... for one with log_every 10 ("steps" is then 10x its logged rows).
`log_every` and `regime` were added with generator 4; a file without them is a long run logged every step.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

LABELS_SCHEMA = "rldk.fault_bench.labels/v1"


@dataclass
class Label:
    fault: str
    metrics: list
    onset_step: int
    end_step: int
    magnitude: float
    unit: str
    also_accept: list = field(default_factory=list)


@dataclass
class RunLabels:
    run_id: str
    algorithm: str
    steps: int
    faults: list  # of Label
    log_every: int = 1  # optimizer steps between logged rows (rows at steps log_every, 2 log_every, ...)
    regime: str = "long-mid"  # long|short x mid|early|drift, or long-clean / short-clean

    @property
    def clean(self) -> bool:
        return not self.faults

    @property
    def points(self) -> int:
        """Logged rows: what a detector sees (false alarms are counted per 10,000 of them)."""
        return self.steps // self.log_every

    def to_json(self) -> dict:
        return {"schema": LABELS_SCHEMA, "run_id": self.run_id, "algorithm": self.algorithm, "steps": self.steps,
                "log_every": self.log_every, "regime": self.regime, "clean": self.clean,
                "faults": [asdict(f) for f in self.faults]}

    def write(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(self.to_json(), f, indent=1, sort_keys=True)
            f.write("\n")


def read_labels(path: str) -> RunLabels:
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema") != LABELS_SCHEMA:
        raise ValueError("%s: not a fault-bench label file (schema %r, expected %r)"
                         % (path, doc.get("schema"), LABELS_SCHEMA))
    faults = [Label(**entry) for entry in doc["faults"]]
    clean_regime = "long-clean" if not faults else "long-mid"
    return RunLabels(run_id=doc["run_id"], algorithm=doc["algorithm"], steps=int(doc["steps"]), faults=faults,
                     log_every=int(doc.get("log_every", 1)), regime=doc.get("regime", clean_regime))
