"""Matches `rldk scan` findings to fault labels and computes the detector-quality table.

Matching (docs/detector-benchmark.md, "How matching works"):
- a finding detects a label when its fault type is the label's (or listed for it in EQUIVALENT) and its onset lies
  in [label onset - tolerance, label end + max_delay], the tolerance never less than the run's logging interval (a
  run logged every 20 steps can only date a change to a logged step);
- delay = finding onset - label onset, from the earliest matching finding; an early finding (within the tolerance
  before the onset) counts as delay 0 and is reported as early;
- a finding whose type is in the label's `also_accept` and whose onset lies in the same window is "tolerated": a
  true consequence of the injected fault, neither a detection nor a false alarm;
- every other finding is a false alarm: on a clean run it counts towards false alarms per 10,000 clean logged steps
  (rows of the log: a detector sees a run logged every 10 steps as 1/10 of its optimizer steps), on a faulty run it
  is an unlabeled alarm (counted against the precision of its own fault type, reported apart).
Only findings at or above `min_severity` are counted (default info: every finding is a claim about the run, so a
wrong info finding is a false alarm too, and a right one a detection).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SEVERITIES = ("info", "warning", "critical")

# Fault types that count as detecting each other. Kept empty on purpose: every pair we considered (a KL drift seen
# as a level shift, an explosion seen as a spike) is a consequence, not the same fault, and is handled per label
# by `also_accept`, which forgives the alarm without crediting the detection.
EQUIVALENT: dict = {}


@dataclass(frozen=True)
class MatchOptions:
    tolerance: int = 10  # steps a finding may start before the labeled onset and still match (then delay 0)
    max_delay: int = 200  # steps after the labeled end a finding may start and still match
    min_severity: str = "info"


@dataclass
class Finding:
    run_id: str
    detector: str
    fault: str
    severity: str
    metric: str
    onset_step: int


@dataclass
class FaultStats:
    fault: str
    labels: int = 0
    detected: int = 0
    true_findings: int = 0
    false_findings: int = 0
    tolerated: int = 0
    early: int = 0
    delays: list = field(default_factory=list)
    delays_points: list = field(default_factory=list)  # the same delays in logged points (delay / log_every)
    misses: list = field(default_factory=list)  # (run_id, onset_step, magnitude, unit)
    delay_by_magnitude: dict = field(default_factory=dict)  # magnitude -> delays, for discrete magnitudes

    @property
    def recall(self):
        return self.detected / self.labels if self.labels else None

    @property
    def precision(self):
        total = self.true_findings + self.false_findings
        return self.true_findings / total if total else None


def findings_from_scan(doc: dict, run_ids_by_source: dict) -> list:
    """Flattens a rldk.scan/v1 document. Runs are keyed by their source path (as passed to scan), else run_id."""
    if doc.get("schema") != "rldk.scan/v1":
        raise ValueError("not a rldk.scan/v1 document (schema %r)" % doc.get("schema"))
    out = []
    for entry in doc["runs"]:
        run_id = run_ids_by_source.get(entry.get("source"), entry.get("run_id"))
        for f in entry.get("findings", []):
            out.append(Finding(run_id=run_id, detector=f["detector"], fault=f["fault"], severity=f["severity"],
                               metric=f.get("metric", ""), onset_step=int(f["onset_step"])))
    return out


def _window(label, options, log_every=1):
    return label.onset_step - max(options.tolerance, log_every), label.end_step + options.max_delay


def evaluate(labels_by_run: dict, findings: list, options: MatchOptions = MatchOptions(), fault_types=()) -> dict:
    """Returns {"faults": {type: FaultStats}, "clean_steps" (logged), "clean_runs", "clean_runs_with_alarms",
    "clean_false_alarms", "unlabeled_false_alarms", "false_alarms_per_10k", "tolerated_list"}."""
    floor = SEVERITIES.index(options.min_severity)
    counted = [f for f in findings if SEVERITIES.index(f.severity) >= floor]
    unknown = sorted({f.run_id for f in counted} - set(labels_by_run))
    if unknown:
        raise ValueError("findings for runs without labels: %s" % ", ".join(map(str, unknown[:5])))
    by_run = {}
    for f in counted:
        by_run.setdefault(f.run_id, []).append(f)

    stats = {name: FaultStats(name) for name in fault_types}
    clean_steps, clean_runs, alarmed_runs, clean_alarms, unlabeled, tolerated_list = 0, 0, 0, [], [], []
    for run_id, run_labels in labels_by_run.items():
        run_findings = by_run.get(run_id, [])
        every = run_labels.log_every
        if run_labels.clean:
            clean_steps += run_labels.points
            clean_runs += 1
            alarmed_runs += bool(run_findings)
            clean_alarms.extend(run_findings)
            for f in run_findings:
                stats.setdefault(f.fault, FaultStats(f.fault)).false_findings += 1
            continue
        credited = set()
        for label in run_labels.faults:
            s = stats.setdefault(label.fault, FaultStats(label.fault))
            s.labels += 1
            lo, hi = _window(label, options, every)
            accepted = {label.fault} | set(EQUIVALENT.get(label.fault, ()))
            hits = [f for f in run_findings if f.fault in accepted and lo <= f.onset_step <= hi]
            if not hits:
                s.misses.append((run_id, label.onset_step, label.magnitude, label.unit))
                continue
            s.detected += 1
            first = min(f.onset_step for f in hits)
            delay = max(0, first - label.onset_step)
            s.early += first < label.onset_step
            s.delays.append(delay)
            s.delays_points.append(delay / every)
            s.delay_by_magnitude.setdefault(label.magnitude, []).append(delay)
            credited.update(id(f) for f in hits)
        for f in run_findings:
            if id(f) in credited:
                stats.setdefault(f.fault, FaultStats(f.fault)).true_findings += 1
                continue
            if any(f.fault in label.also_accept and _window(label, options, every)[0] <= f.onset_step
                   <= _window(label, options, every)[1] for label in run_labels.faults):
                stats.setdefault(f.fault, FaultStats(f.fault)).tolerated += 1
                tolerated_list.append(f)
                continue
            stats.setdefault(f.fault, FaultStats(f.fault)).false_findings += 1
            unlabeled.append(f)
    return {"faults": stats, "clean_steps": clean_steps, "clean_runs": clean_runs,
            "clean_runs_with_alarms": alarmed_runs, "clean_false_alarms": clean_alarms,
            "unlabeled_false_alarms": unlabeled, "tolerated_list": tolerated_list,
            "false_alarms_per_10k": (len(clean_alarms) * 10_000 / clean_steps) if clean_steps else None}


def percentile(values, q):
    return float(np.percentile(values, q)) if values else None


def regime_groups(labels_by_run: dict) -> dict:
    """Run ids per regime and per axis: "long-mid" ... "short-drift" (faulty runs), "long" / "short" (faulty and clean
    runs of that length), "mid" / "early" / "drift" (faulty runs with that onset). Empty groups are left out."""
    groups = {}
    for run_id, labels in labels_by_run.items():
        length, onset = labels.regime.split("-")
        keys = [length] if labels.clean else [labels.regime, length, onset]
        for key in keys:
            groups.setdefault(key, []).append(run_id)
    return groups


def evaluate_by_regime(labels_by_run: dict, findings: list, options: MatchOptions = MatchOptions(),
                       fault_types=()) -> dict:
    """`evaluate` on each regime group's runs (see `regime_groups`)."""
    out = {}
    for key, run_ids in regime_groups(labels_by_run).items():
        ids = set(run_ids)
        out[key] = evaluate({r: labels_by_run[r] for r in run_ids}, [f for f in findings if f.run_id in ids],
                            options, fault_types)
    return out
