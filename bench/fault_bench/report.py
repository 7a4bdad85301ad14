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


REGIME_ORDER = ("long-mid", "short-mid", "long-early", "short-early", "long-drift", "short-drift",
                "long", "short", "mid", "early", "drift")


def _level_shift_3sigma(stats):
    shift = stats.get(LEVEL_SHIFT)
    three = shift.delay_by_magnitude.get(3.0, []) if shift else []
    missed_three = sum(1 for miss in (shift.misses if shift else []) if miss[2] == 3.0)
    return {"labels": len(three) + missed_three, "detected": len(three),
            "median_delay": _median_counting_misses(three, missed_three)}


def _regime(result: dict) -> dict:
    """One regime group's goals: recall per fault type, false alarms on its clean runs, delays (steps and points)."""
    labeled = {name: s for name, s in sorted(result["faults"].items()) if s.labels}
    delays = [d for s in labeled.values() for d in s.delays]
    points = [d for s in labeled.values() for d in s.delays_points]
    detected = sum(s.detected for s in labeled.values())
    total = sum(s.labels for s in labeled.values())
    clean_by_detector = {}
    for f in result["clean_false_alarms"]:
        clean_by_detector[f.detector] = clean_by_detector.get(f.detector, 0) + 1
    return {
        "labels": total, "detected": detected, "recall": _r(detected / total) if total else None,
        "fault_types_labeled": len(labeled),
        "fault_types_meeting_recall_goal": sum(1 for s in labeled.values() if s.recall >= GOALS["recall"]),
        "median_delay": _r(statistics.median(delays)) if delays else None,
        "median_delay_points": _r(statistics.median(points)) if points else None,
        "p90_delay_points": _r(percentile(points, 90)),
        "level_shift_3sigma": _level_shift_3sigma(result["faults"]),
        "clean_runs": result["clean_runs"], "clean_steps": result["clean_steps"],
        "clean_false_alarms": len(result["clean_false_alarms"]),
        "clean_runs_with_alarms": result["clean_runs_with_alarms"],
        "false_alarms_per_10k_clean_steps": _r(result["false_alarms_per_10k"]),
        "clean_false_alarms_by_detector": dict(sorted(clean_by_detector.items())),
        "unlabeled_false_alarms_on_faulty_runs": len(result["unlabeled_false_alarms"]),
        "faults": {name: {"labels": s.labels, "detected": s.detected, "recall": _r(s.recall),
                          "median_delay_points": _r(statistics.median(s.delays_points)) if s.delays_points else None,
                          "misses": [{"run_id": r, "onset_step": o, "magnitude": _r(m, 4), "unit": u}
                                     for r, o, m, u in s.misses]}
                   for name, s in labeled.items()},
    }


def to_json(result: dict, meta: dict, by_regime: dict | None = None) -> dict:
    faults = {}
    for name, s in sorted(result["faults"].items()):
        faults[name] = {
            "labels": s.labels, "detected": s.detected, "recall": _r(s.recall),
            "true_findings": s.true_findings, "false_findings": s.false_findings, "tolerated": s.tolerated,
            "precision": _r(s.precision), "early": s.early,
            "median_delay": _r(statistics.median(s.delays)) if s.delays else None,
            "median_delay_points": _r(statistics.median(s.delays_points)) if s.delays_points else None,
            "p90_delay": _r(percentile(s.delays, 90)),
            "misses": [{"run_id": r, "onset_step": o, "magnitude": _r(m, 4), "unit": u} for r, o, m, u in s.misses],
        }
    labeled = [s for s in result["faults"].values() if s.labels]
    detected = sum(s.detected for s in labeled)
    total = sum(s.labels for s in labeled)
    clean_by_detector = {}
    for f in result["clean_false_alarms"]:
        clean_by_detector[f.detector] = clean_by_detector.get(f.detector, 0) + 1
    headline = {
        "overall_recall": _r(detected / total) if total else None,
        "false_alarms_per_10k_clean_steps": _r(result["false_alarms_per_10k"]),
        "clean_steps": result["clean_steps"], "clean_runs": result["clean_runs"],
        "clean_runs_with_alarms": result["clean_runs_with_alarms"],
        "clean_false_alarms": len(result["clean_false_alarms"]),
        "unlabeled_false_alarms_on_faulty_runs": len(result["unlabeled_false_alarms"]),
        # A missed label counts as detected never: with half or more of the 3-sigma shifts missed, there is no
        # median delay to report (and the goal is not met), however quick the detected ones were.
        "level_shift_3sigma": _level_shift_3sigma(result["faults"]),
        "fault_types_meeting_recall_goal": sum(1 for s in labeled if s.recall is not None
                                               and s.recall >= GOALS["recall"]),
        "fault_types_labeled": len(labeled),
    }
    regimes = {key: _regime(by_regime[key]) for key in REGIME_ORDER if key in (by_regime or {})}
    return {"schema": "rldk.fault_bench.result/v1", "meta": meta, "goals": GOALS, "headline": headline,
            "faults": faults, "regimes": regimes,
            "clean_false_alarms_by_detector": dict(sorted(clean_by_detector.items())),
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
        "| false alarms per 10k clean logged steps (all detectors) | <= %g | %s (%d alarms in %d steps) | %s |" % (
            GOALS["false_alarms_per_10k"], _fmt(fa), h["clean_false_alarms"], h["clean_steps"],
            _mark(fa is not None and fa <= GOALS["false_alarms_per_10k"])),
        "| median delay, 3-sigma KL level shift | <= %d steps | %s (%d of %d detected) | %s |" % (
            GOALS["level_shift_3sigma_median_delay"], _fmt(ls["median_delay"]), ls["detected"], ls["labels"],
            _mark(ls["median_delay"] is not None and ls["median_delay"] <= GOALS["level_shift_3sigma_median_delay"]
                  and ls["labels"] > 0)),
        "", "Unlabeled alarms on faulty runs (outside every label window, or of an unrelated type): %d." %
        h["unlabeled_false_alarms_on_faulty_runs"], "",
        "All regimes together (long and short runs; mid, early and drift onsets); by regime below.", "",
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
    lines += _regimes_markdown(doc)
    lines += ["", "Scan: %s runs, %s logged steps (%s optimizer steps) in %.1f s wall (%s)." % (
        meta["runs"], meta.get("logged_steps", meta["total_steps"]), meta["total_steps"], meta["scan_seconds"],
        meta["rldk"])]
    return "\n".join(lines) + "\n"


def _pct(part, whole):
    return "%d of %d (%.1f%%)" % (part, whole, 100.0 * part / whole) if whole else "–"


def _regimes_markdown(doc: dict) -> list:
    regimes = doc.get("regimes") or {}
    if not regimes:
        return []
    lines = ["", "## By regime", "",
             "Long runs log every step (300-5,000 rows); short runs log every 5, 10 or 20 steps (20-150 rows). Onset: "
             "mid (25-70% of the run), early (first 15%, from the first logged point), drift (a ramp from the first "
             "step to the last). Delays in logged points; false alarms per 10k clean logged steps.", "",
             "| regime | labels | recall | types >= %.2f | median delay (points) | p90 delay (points) | 3-sigma shift "
             "delay | clean runs | false alarms per 10k | clean runs with an alarm | unlabeled alarms |"
             % GOALS["recall"],
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, g in regimes.items():
        ls = g["level_shift_3sigma"]
        shift = ("%s (%d of %d)" % (_fmt(ls["median_delay"]), ls["detected"], ls["labels"])) if ls["labels"] else "–"
        clean = g["clean_runs"]
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
            key, g["labels"], _fmt(g["recall"]),
            "%d of %d" % (g["fault_types_meeting_recall_goal"], g["fault_types_labeled"]) if g["labels"] else "–",
            _fmt(g["median_delay_points"]), _fmt(g["p90_delay_points"]), shift, clean or "–",
            ("%s (%d in %d)" % (_fmt(g["false_alarms_per_10k_clean_steps"]), g["clean_false_alarms"],
                                g["clean_steps"])) if clean else "–",
            _pct(g["clean_runs_with_alarms"], clean) if clean else "–", g["unlabeled_false_alarms_on_faulty_runs"]))
    for key in ("long", "short"):
        by_detector = regimes.get(key, {}).get("clean_false_alarms_by_detector")
        if by_detector:
            lines += ["", "False alarms on %s clean runs by detector: %s." % (
                key, ", ".join("%s %d" % kv for kv in by_detector.items()))]
    combined = [k for k in regimes if k.count("-") == 1]
    lines += ["", "Recall per fault type and regime (labels in brackets):", "",
              "| fault type | " + " | ".join(combined) + " |", "|---|" + "---:|" * len(combined)]
    for name in doc["faults"]:
        cells = []
        for key in combined:
            f = regimes[key]["faults"].get(name)
            cells.append("%s (%d)" % (_fmt(f["recall"]), f["labels"]) if f else "–")
        if any(c != "–" for c in cells):
            lines.append("| %s | %s |" % (name, " | ".join(cells)))
    lines += ["", "Misses by regime:", ""]
    for key in combined:
        missed = [(name, f) for name, f in regimes[key]["faults"].items() if f["misses"]]
        if not missed:
            continue
        parts = []
        for name, f in missed:
            shown = ", ".join("%s@%d (%s)" % (m["run_id"], m["onset_step"], _fmt(m["magnitude"]))
                              for m in f["misses"][:3])
            more = " +%d more" % (len(f["misses"]) - 3) if len(f["misses"]) > 3 else ""
            parts.append("%s %d of %d: %s%s" % (name, len(f["misses"]), f["labels"], shown, more))
        lines.append("- **%s**: %s" % (key, "; ".join(parts)))
    return lines
