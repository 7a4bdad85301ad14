"""Judging rldk on real training logs (tests/fixtures/real/, see its README for the labels).

For each labeled log: does `rldk info` read the right steps and values, does `rldk scan` name every labeled
failure (right type, onset within 10 % of the run's length of the labeled step) and stay at info level or quieter
on healthy logs, and does every stop of `rldk monitor --once` with the matching preset come with a scan finding
at the same or an earlier step. Used by tests/python/test_real_logs.py, and run as a script it prints the table
published in docs/detector-benchmark.md:

    python tests/python/real_logs.py [--markdown]
"""
import json
import math
import pathlib
import subprocess
import sys
import tempfile

import yaml
from conftest import rldk_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "real"

# The labels' failure vocabulary -> the scan faults that name it.
ACCEPTED_FAULTS = {
    "kl_blowup": {"kl_above_range", "kl_level_shift", "kl_drift", "kl_spike"},
    "entropy_collapse": {"entropy_collapse"},
    "entropy_rise": {"entropy_rise", "entropy_surge"},
    "length_collapse": {"length_collapse"},
    "length_growth": {"length_growth", "reward_hacking_length", "truncation"},
    "reward_collapse": {"reward_collapse"},
    "reward_hacking_length": {"reward_hacking_length", "length_growth"},
    "grad_explosion": {"grad_explosion", "grad_spike"},
    "non_finite": {"non_finite"},
    "loss_divergence": {"loss_divergence", "non_finite"},
    "no_signal": {"grpo_zero_variance", "grad_vanishing", "advantage_collapse", "reward_never_paid"},
    "truncation": {"truncation"},
    "logprob_mismatch": {"logprob_mismatch"},
}
SEVERITY = {"info": 0, "warning": 1, "critical": 2}
# Onset tolerance: 10 % of the run's length in steps, and never less than one logging interval.
ONSET_TOLERANCE = 0.10
# A guard rule's alert names a failure by the metric it watches (canonical-name prefixes per failure type); a scan
# rule (`scan_ID`) by its detector's fault.
FAILURE_METRICS = {
    "kl_blowup": ("policy/kl", "policy/approx_kl"), "entropy_collapse": ("policy/entropy",),
    "entropy_rise": ("policy/entropy",), "length_collapse": ("response/",), "length_growth": ("response/",),
    "reward_collapse": ("reward/", "pref/"), "reward_hacking_length": ("response/", "reward/"),
    "grad_explosion": ("policy/grad_norm", "value/grad_norm"), "non_finite": ("",),
    # A DPO run without signal shows it in its implicit rewards (margins that never leave 0).
    "loss_divergence": ("train/loss", "policy/loss", "value/loss"), "no_signal": ("reward/", "advantage/",
                                                                                  "policy/grad_norm", "pref/"),
    "truncation": ("response/",), "logprob_mismatch": ("rollout/", "training/"),
}


def _detector_faults():
    faults = {}
    for path in (ROOT / "data" / "detectors").glob("*.yaml"):
        for d in yaml.safe_load(path.read_text())["detectors"]:
            faults["scan_" + d["id"]] = d["fault"]
    return faults


DETECTOR_FAULTS = _detector_faults()


def names_failure(alert, failure_type):
    """Whether a live alert is about a failure of this type (by its detector's fault, or its metric)."""
    fault = DETECTOR_FAULTS.get(alert["rule_id"])
    if fault is not None:
        return fault in ACCEPTED_FAULTS.get(failure_type, {failure_type})
    return any(str(alert.get("metric", "")).startswith(p) for p in FAILURE_METRICS.get(failure_type, ("",)))


# The preset a user would run for each algorithm (the "safe" guard set; strict presets stop earlier by design).
MATCHING_PRESET = {"grpo": "grpo_safe", "ppo": "ppo_safe", "dpo": "dpo_basic", "rloo": "grpo_safe",
                   "reinforce": "grpo_safe", "reinforce++": "grpo_safe", "dapo": "grpo_safe"}


def cases():
    """Every labeled log, sorted by folder name."""
    out = []
    for labels in sorted(CORPUS.glob("*/labels.yaml")):
        meta = yaml.safe_load(labels.read_text())
        meta["slug"] = labels.parent.name
        meta["path"] = labels.parent / meta["file"]
        out.append(meta)
    return out


def _run(args, ok=(0, 1)):
    proc = subprocess.run([rldk_binary()] + [str(a) for a in args], capture_output=True, text=True, timeout=300)
    if proc.returncode not in ok:
        raise RuntimeError("rldk %s failed (exit %d): %s" % (args[0], proc.returncode, proc.stderr[-2000:]))
    return proc


def info(path):
    return json.loads(_run(["info", "--json", path]).stdout)


def scan(path):
    doc = json.loads(_run(["scan", "--json", "--fail-on", "never", path]).stdout)
    (run,) = doc["runs"]
    return run


def monitor_alerts(path, presets):
    """Every alert of `rldk monitor --once` with the presets (as report.json lists them)."""
    with tempfile.TemporaryDirectory() as out:
        _run(["monitor", "--once", path, "--out", out, "--fail-on", "never"] + [a for p in presets for a in ("--preset", p)])
        report = json.loads((pathlib.Path(out) / "report.json").read_text())
    return report["alerts"]


def monitor_stops(path, preset):
    """(step, metric, rule) of every stop alert of `rldk monitor --once` with the preset."""
    return stops_of(monitor_alerts(path, [preset]))


def stops_of(alerts):
    return [(a["step"], a["metric"], a["rule_id"]) for a in alerts if a["action"] == "stop"]


def ingest(path, every=False):
    """{canonical name: {step: value}} as `rldk ingest` writes it (the last value where a step repeats); with
    every=True, {step: [values]}: a notebook with a smoke test and then the real run logs both at steps 1-5."""
    with tempfile.TemporaryDirectory() as out:
        target = pathlib.Path(out) / "run.jsonl"
        _run(["ingest", path, "-o", target], ok=(0,))
        values = {}
        for line in target.read_text().splitlines():
            event = json.loads(line)
            if every:
                values.setdefault(event["name"], {}).setdefault(event["step"], []).append(event["value"])
            else:
                values.setdefault(event["name"], {})[event["step"]] = event["value"]
    return values


def _raw(metric):
    """A labeled metric's raw name as logged: a notebook's HTML progress table shows a logged `rewards/chosen` as
    `rewards / chosen`, and labels quote the table."""
    return str(metric.get("raw", "")).replace(" / ", "/")


def check_parse(case, doc, path):
    """Problems with how the log was read, as text (empty: read right)."""
    want = case.get("parse") or {}
    problems = []
    (run,) = doc["runs"]
    raw_to_name = {raw: name for name, m in run["metrics"].items() for raw in m.get("raw_names", [])}
    # The training metrics' step range (eval and summary metrics may sit outside it, e.g. an eval at step 0).
    labeled = [run["metrics"][n] for n in {raw_to_name.get(_raw(m)) for m in want.get("metrics") or []}
               if n in run["metrics"]]
    if labeled:
        first, last = min(m["first_step"] for m in labeled), max(m["last_step"] for m in labeled)
        if "first_step" in want and first != want["first_step"]:
            problems.append("first step %s, labeled %s" % (first, want["first_step"]))
        if "last_step" in want and last != want["last_step"]:
            problems.append("last step %s, labeled %s" % (last, want["last_step"]))
    values = ingest(path, every=True) if want.get("metrics") else {}
    for m in want.get("metrics") or []:
        name = raw_to_name.get(_raw(m)) or (m["canonical"] if m["canonical"] in run["metrics"] else None)
        if name is None:
            problems.append("metric %s not read" % m.get("raw", m["canonical"]))
            continue
        # Consoles print rounded values (TRL: 4 significant digits), labels may quote the exact ones.
        # Where a log holds two runs (a restart), the labeled value is one of the values at its step.
        got = values.get(name, {}).get(m["step"], []) if "step" in m else []
        want_value = float(m["value"])
        same = any(math.isclose(g, want_value, rel_tol=1e-3, abs_tol=1e-12) or
                   (math.isnan(g) and math.isnan(want_value)) for g in got)  # a logged NaN read as NaN
        got = got[0] if len(got) == 1 else (got or None)
        if "step" in m and not same:
            problems.append("%s at step %s: %s, labeled %s" % (m.get("raw", name), m["step"], got, m["value"]))
    return problems


def judge(case):
    """One row of the table: parse problems, missed failures, false alarms, contract breaks."""
    path = case["path"]
    row = {"slug": case["slug"], "framework": case.get("framework"), "format": case.get("format"),
           "verdict": case.get("verdict"), "parse": [], "missed": [], "found": [], "false_alarms": [],
           "contract": []}
    try:
        doc = info(path)
    except RuntimeError as e:
        row["parse"].append(str(e).splitlines()[0].replace(str(ROOT) + "/", ""))  # no machine's path in the table
        return row
    row["parse"] = check_parse(case, doc, path)
    run = scan(path)
    steps = run["steps"]
    row["points"] = steps["count"]
    span = max(steps["last"] - steps["first"], 1)
    interval = span / max(steps["count"] - 1, 1)
    tolerance = max(ONSET_TOLERANCE * span, interval)
    warn = [f for f in run["findings"] if SEVERITY[f["severity"]] >= SEVERITY["warning"]]
    if case.get("verdict") == "healthy":
        row["false_alarms"] = ["%s@%d" % (f["detector"], f["onset_step"]) for f in warn]
    # A failure is found by a finding of its type at any severity (an info finding still names it, with its onset);
    # healthy logs must stay below warning.
    for failure in case.get("failures") or []:
        accepted = ACCEPTED_FAULTS.get(failure["type"], {failure["type"]})
        hits = [f for f in run["findings"] if f["fault"] in accepted]
        on_time = [f for f in hits if abs(f["onset_step"] - failure["onset_step"]) <= tolerance]
        if on_time:
            best = min(on_time, key=lambda f: abs(f["onset_step"] - failure["onset_step"]))
            row["found"].append("%s@%d %s (labeled %d)" % (best["detector"], best["onset_step"], best["severity"],
                                                          failure["onset_step"]))
        elif hits:
            row["missed"].append("%s: onset %s, labeled %d (tolerance %.0f)" % (
                failure["type"], ",".join(str(f["onset_step"]) for f in hits), failure["onset_step"], tolerance))
        else:
            row["missed"].append("%s@%d: no finding" % (failure["type"], failure["onset_step"]))
    # Live: the algorithm's guard preset and the scan's detectors (`--preset scan`), as a user would watch the run.
    # Its stops are the contract's; its first alert says whether the run was flagged in time.
    preset = MATCHING_PRESET.get(str(case.get("algorithm") or "").lower())
    alerts = monitor_alerts(path, ([preset] if preset else []) + ["scan"])
    row["contract"] = contract_breaks(path, case.get("algorithm"), run["findings"], stops_of(alerts) if preset else [])
    alerts = [a for a in alerts if a.get("run_id") != "sys"]
    row["live_first_alert"] = min((a["step"] for a in alerts), default=None)
    if case.get("verdict") == "healthy":
        row["live_alerted"] = bool(alerts)
    elif case.get("failures"):
        # In time: an alert about one of the labeled failures (its detector's fault or its metric) within the
        # tolerance of that failure's onset. An earlier alert about something else does not count.
        row["live_on_time"] = any(names_failure(a, f["type"]) and abs(a["step"] - f["onset_step"]) <= tolerance
                                  for f in case["failures"] for a in alerts)
    return row


def contract_breaks(path, algorithm, findings, stops=None):
    """Stops of `rldk monitor --once` with the algorithm's preset (or `stops`, when the caller already has them)
    that have no warning-or-worse scan finding on the same metric (or a non-finite finding) with an onset at or
    before the stop."""
    preset = MATCHING_PRESET.get(str(algorithm or "").lower())
    if not preset:
        return []
    if stops is None:
        stops = monitor_stops(path, preset)
    warn = [f for f in findings if SEVERITY[f["severity"]] >= SEVERITY["warning"]]
    breaks = []
    for step, metric, rule in stops:
        if not any(f["onset_step"] <= step and (f["metric"] == metric or f["fault"] == "non_finite") for f in warn):
            breaks.append("%s stopped at %d on %s, no scan finding by then" % (rule, step, metric))
    return breaks


def markdown(rows):
    lines = ["| log | framework | format | points | verdict | found | missed / false alarms | parse |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        bad = r["missed"] + ["false alarm " + x for x in r["false_alarms"]] + r["contract"]
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["slug"], r["framework"], r["format"], r.get("points", "-"), r["verdict"],
            "<br>".join(r["found"]) or "-", "<br>".join(bad) or "-", "<br>".join(r["parse"]) or "ok"))
    failures = sum(len(c.get("failures") or []) for c in cases())
    found = sum(len(r["found"]) for r in rows)
    healthy = [r for r in rows if r["verdict"] == "healthy"]
    lines.append("")
    lines.append("%d logs: %d of %d labeled failures found on time; %d of %d healthy logs without a warning; "
                 "%d read right; %d contract breaks." % (
                     len(rows), found, failures, sum(1 for r in healthy if not r["false_alarms"]), len(healthy),
                     sum(1 for r in rows if not r["parse"]), sum(len(r["contract"]) for r in rows)))
    lines.append("")
    lines.append(live_summary(rows))
    return "\n".join(lines)


def live_summary(rows):
    failing = [r for r in rows if "live_on_time" in r]
    healthy = [r for r in rows if "live_alerted" in r]
    return ("Live (`rldk monitor --once` with the algorithm's guard preset and `--preset scan`): %d of %d failing logs "
            "with an alert about a labeled failure within the tolerance of its onset, %d with no alert at all; %d of "
            "%d healthy logs with an alert (a warning)." % (
                sum(1 for r in failing if r["live_on_time"]), len(failing),
                sum(1 for r in failing if r["live_first_alert"] is None),
                sum(1 for r in healthy if r["live_alerted"]), len(healthy)))


if __name__ == "__main__":
    rows = [judge(c) for c in cases()]
    if "--markdown" in sys.argv:
        print(markdown(rows))
    else:
        for r in rows:
            print(json.dumps(r))
