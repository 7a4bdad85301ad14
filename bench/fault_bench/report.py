"""Renders an evaluation as the benchmark table: JSON (sorted keys) and Markdown, with the goals checked."""
from __future__ import annotations

import math
import statistics

from .evaluate import percentile

GOALS = {"recall": 0.9, "false_alarms_per_10k": 1.0, "level_shift_3sigma_median_delay": 10}
LEVEL_SHIFT = "kl_level_shift"


def _median_counting_misses(delays, missed):
    values = sorted(delays) + [math.inf] * missed
    if not values:
        return None
    median = statistics.median(values)
    return _r(median) if math.isfinite(median) else None


def _r(x, digits=3):
    return None if x is None else round(float(x), digits)


def to_json(result: dict, meta: dict) -> dict:
    faults = {}
    for name, s in sorted(result["faults"].items()):
        faults[name] = {
            "labels": s.labels, "detected": s.detected, "recall": _r(s.recall),
            "true_findings": s.true_findings, "false_findings": s.false_findings, "tolerated": s.tolerated,
            "precision": _r(s.precision), "early": s.early,
            "median_delay": _r(statistics.median(s.delays)) if s.delays else None,
            "p90_delay": _r(percentile(s.delays, 90)),
            "misses": [{"run_id": r, "onset_step": o, "magnitude": _r(m, 4), "unit": u} for r, o, m, u in s.misses],
        }
    shift = result["faults"].get(LEVEL_SHIFT)
    three = shift.delay_by_magnitude.get(3.0, []) if shift else []
    missed_three = sum(1 for miss in (shift.misses if shift else []) if miss[2] == 3.0)
    labeled = [s for s in result["faults"].values() if s.labels]
    detected = sum(s.detected for s in labeled)
    total = sum(s.labels for s in labeled)
    clean_by_detector = {}
    for f in result["clean_false_alarms"]:
        clean_by_detector[f.detector] = clean_by_detector.get(f.detector, 0) + 1
    headline = {
        "overall_recall": _r(detected / total) if total else None,
        "false_alarms_per_10k_clean_steps": _r(result["false_alarms_per_10k"]),
        "clean_steps": result["clean_steps"],
        "clean_false_alarms": len(result["clean_false_alarms"]),
        "unlabeled_false_alarms_on_faulty_runs": len(result["unlabeled_false_alarms"]),
        # A missed label counts as detected never: with half or more of the 3-sigma shifts missed, there is no
        # median delay to report (and the goal is not met), however quick the detected ones were.
        "level_shift_3sigma": {"labels": len(three) + missed_three, "detected": len(three),
                               "median_delay": _median_counting_misses(three, missed_three)},
        "fault_types_meeting_recall_goal": sum(1 for s in labeled if s.recall is not None
                                               and s.recall >= GOALS["recall"]),
        "fault_types_labeled": len(labeled),
    }
    return {"schema": "rldk.fault_bench.result/v1", "meta": meta, "goals": GOALS, "headline": headline,
            "faults": faults, "clean_false_alarms_by_detector": dict(sorted(clean_by_detector.items())),
            "clean_false_alarms": [{"run_id": f.run_id, "detector": f.detector, "fault": f.fault,
                                    "severity": f.severity, "metric": f.metric, "onset_step": f.onset_step}
                                   for f in result["clean_false_alarms"]],
            "unlabeled_false_alarms": [{"run_id": f.run_id, "detector": f.detector, "fault": f.fault,
                                        "severity": f.severity, "metric": f.metric, "onset_step": f.onset_step}
                                       for f in result["unlabeled_false_alarms"]]}


def _fmt(x, kind="num"):
    if x is None:
        return "–"
    if kind == "pct":
        return "%.2f" % x
    return ("%g" % x) if isinstance(x, float) else str(x)


def _mark(ok):
    return "yes" if ok else "**no**"


def to_markdown(doc: dict) -> str:
    h = doc["headline"]
    meta = doc["meta"]
    lines = ["# rldk scan detector benchmark (%s corpus, seed %s)" % (meta["corpus"], meta["seed"]), ""]
    fa = h["false_alarms_per_10k_clean_steps"]
    ls = h["level_shift_3sigma"]
    lines += [
        "| goal | target | measured | met |", "|---|---|---|---|",
        "| recall per fault type | >= %.2f | %d of %d types; overall %s | %s |" % (
            GOALS["recall"], h["fault_types_meeting_recall_goal"], h["fault_types_labeled"],
            _fmt(h["overall_recall"]), _mark(h["fault_types_meeting_recall_goal"] == h["fault_types_labeled"])),
        "| false alarms per 10k clean steps (all detectors) | <= %g | %s (%d alarms in %d steps) | %s |" % (
            GOALS["false_alarms_per_10k"], _fmt(fa), h["clean_false_alarms"], h["clean_steps"],
            _mark(fa is not None and fa <= GOALS["false_alarms_per_10k"])),
        "| median delay, 3-sigma KL level shift | <= %d steps | %s (%d of %d detected) | %s |" % (
            GOALS["level_shift_3sigma_median_delay"], _fmt(ls["median_delay"]), ls["detected"], ls["labels"],
            _mark(ls["median_delay"] is not None and ls["median_delay"] <= GOALS["level_shift_3sigma_median_delay"]
                  and ls["labels"] > 0)),
        "", "Unlabeled alarms on faulty runs (outside every label window, or of an unrelated type): %d." %
        h["unlabeled_false_alarms_on_faulty_runs"], "",
        "| fault type | n | recall | precision | median delay | p90 delay | early | tolerated | misses |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, f in doc["faults"].items():
        misses = ", ".join("%s@%d (%s %s)" % (m["run_id"], m["onset_step"], _fmt(m["magnitude"]), m["unit"])
                           for m in f["misses"][:4])
        if len(f["misses"]) > 4:
            misses += ", +%d more" % (len(f["misses"]) - 4)
        lines.append("| %s | %d | %s | %s | %s | %s | %d | %d | %s |" % (
            name, f["labels"], _fmt(f["recall"]), _fmt(f["precision"]), _fmt(f["median_delay"]),
            _fmt(f["p90_delay"]), f["early"], f["tolerated"], misses or "–"))
    if doc["clean_false_alarms_by_detector"]:
        lines += ["", "False alarms on clean runs by detector: " + ", ".join(
            "%s %d" % kv for kv in doc["clean_false_alarms_by_detector"].items()) + "."]
    lines += ["", "Scan: %s runs, %s steps in %.1f s wall (%s)." % (
        meta["runs"], meta["total_steps"], meta["scan_seconds"], meta["rldk"])]
    return "\n".join(lines) + "\n"
