"""The rldk capabilities the reference suite applies, each run as a user runs it (the `rldk` command) and read back
from its JSON report. A check returns a Result: the hits it reported (finding or alert ids, with the step where
there is one), whether it stayed quiet, its time and the folder of its card.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .catalog import PRESETS

# A check reads a healthy run as quiet when it reports nothing at these levels.
LOUD_SEVERITIES = ("warning", "critical")


@dataclass
class Hit:
    id: str
    step: Optional[int] = None
    detail: str = ""


@dataclass
class Result:
    check: str
    run: str
    hits: List[Hit] = field(default_factory=list)
    seconds: float = 0.0
    card: Optional[str] = None
    error: Optional[str] = None
    facts: Dict = field(default_factory=dict)  # numbers a catch is judged on (e.g. the weights' relative change)

    @property
    def quiet(self) -> bool:
        return not self.hits and self.error is None


class Context:
    """Where everything goes, and how to call rldk and the trainer."""

    def __init__(self, out: str, rldk: str, python: str, model: str, full: bool, steps: int):
        self.out, self.rldk, self.python, self.model, self.full, self.steps = out, rldk, python, model, full, steps
        self.data = os.path.join(out, "data")
        self.cards = os.path.join(out, "cards")

    def run_dir(self, run) -> str:
        return os.path.join(self.out, "runs", run.name)

    def metrics(self, run) -> str:
        return os.path.join(self.run_dir(run), "monitor", "metrics.jsonl")

    def card(self, check: str, run) -> str:
        return os.path.join(self.cards, "%s-%s" % (check, run.name))

    def train_command(self, run, out: str, steps: Optional[int] = None, save: bool = True) -> List[str]:
        command = [self.python, "-m", "rldk.reference.train", "--task", run.task, "--model", self.model,
                   "--data", self.data, "--out", out, "--steps", str(steps or self.steps), "--lr", "5e-5"]
        command += list(run.flags)  # later flags win (argparse): a variant's --lr or --steps overrides these
        if not save:
            command.append("--no-save")
        return command


def call(args: List[str], log: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """Runs one rldk command, its output kept in `log` (the suite's own screen stays a table)."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as f:
        f.write("$ " + " ".join(shlex.quote(a) for a in args) + "\n")
        f.flush()
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=f, text=True, timeout=timeout)
        f.write(proc.stdout if len(proc.stdout) < 20000 else proc.stdout[:20000] + "\n...\n")
    return proc


def json_of(proc: subprocess.CompletedProcess, what: str):
    try:
        return json.loads(proc.stdout)
    except ValueError:
        raise RuntimeError("%s exited with %d and printed no JSON report" % (what, proc.returncode))


def timed(check: str, run):
    """Decorator: measures the check, turns an exception into the Result's error (a failed check is never quiet)."""
    def wrap(fn):
        def inner(ctx: Context, *args) -> Result:
            result = Result(check, run.name)
            start = time.time()
            try:
                fn(ctx, result, *args)
            except Exception as e:  # noqa: BLE001 - reported in the table, the suite goes on
                result.error = str(e)
            result.seconds = time.time() - start
            return result
        return inner
    return wrap


# ------------------------------------------------------------------------------------------------------------------

def train_under_monitor(ctx: Context, run) -> Result:
    """Trains the run with `rldk monitor --cmd` (the task's preset and memory_leak, RSS sampled every 0.25 s,
    stop actions live): the monitor check's result, and the run's metrics for every later check."""
    @timed("monitor", run)
    def go(ctx, result):
        out = os.path.join(ctx.run_dir(run), "monitor")
        command = " ".join(shlex.quote(a) for a in ctx.train_command(run, ctx.run_dir(run)))
        proc = call([ctx.rldk, "monitor", "--preset", PRESETS[run.task], "--preset", "memory_leak",
                     "--sys-interval", "0.25", "--fail-on", "never", "--out", out, "--cmd", command],
                    os.path.join(ctx.run_dir(run), "monitor.log"))
        if proc.returncode not in (0, 1):
            raise RuntimeError("rldk monitor exited with %d (see %s)" % (proc.returncode,
                                                                       os.path.join(ctx.run_dir(run), "monitor.log")))
        result.card = out
        alerts_path = os.path.join(out, "alerts.jsonl")
        seen = set()
        if os.path.exists(alerts_path):
            for line in open(alerts_path, encoding="utf-8"):
                if not line.strip():
                    continue
                alert = json.loads(line)
                key = (alert["rule_id"], alert.get("action"))
                if key in seen:
                    continue
                seen.add(key)
                step = alert.get("step")
                unit = "sample" if alert.get("metric", "").startswith("sys/") else "step"
                result.hits.append(Hit(alert["rule_id"], step if unit == "step" else None,
                                       "%s at %s %s%s" % (alert.get("action"), unit, step,
                                                          ", trainer stopped" if alert.get("action") == "stop" else "")))
        if not os.path.exists(os.path.join(out, "metrics.jsonl")):
            raise RuntimeError("the trainer logged no metrics (see %s)" % os.path.join(ctx.run_dir(run), "monitor.log"))
    return go(ctx)


def doctor(ctx: Context, run) -> Result:
    """`rldk doctor`: the scan's findings (judged here) with the environment audit and charts on its card. The
    audit is the same for every run of the suite (one machine, one environment), so it is shown, not judged."""
    @timed("doctor", run)
    def go(ctx, result):
        card = ctx.card("doctor", run)
        proc = call([ctx.rldk, "doctor", ctx.metrics(run), "--json", "--out", card, "--fail-on", "never",
                     "--python", ctx.python], card + ".log")
        result.card = card
        scanned = json_of(proc, "rldk doctor")["scan"]
        for r in scanned.get("runs", [scanned]):  # one run: the scan itself; a folder of runs: "runs"
            for f in r["findings"]:
                if f["severity"] in LOUD_SEVERITIES:
                    result.hits.append(Hit(f["detector"], f.get("onset_step"),
                                           "%s %s %s, onset step %s" % (f["severity"], f["detector"], f["metric"],
                                                                        f.get("onset_step"))))
    return go(ctx)


def diff(ctx: Context, run, healthy) -> Result:
    @timed("diff", run)
    def go(ctx, result):
        card = ctx.card("diff", run)
        proc = call([ctx.rldk, "diff", ctx.metrics(healthy), ctx.metrics(run), "--json", "--out", card], card + ".log")
        result.card = card
        summary = json_of(proc, "rldk diff")["summary"]
        first = summary.get("first_divergence")
        report_signals = json_of(proc, "rldk diff")["signals"]
        result.facts["diverged"] = [s["name"] for s in report_signals if s.get("divergence", {}).get("diverged")]
        if summary.get("verdict") == "diverged" and first:
            result.hits.append(Hit(first["signal"], first.get("detected_step"),
                                   "%s first (%s, onset step %s, detected at %s); diverged: %s" % (
                                       first["signal"], first.get("kind"), first.get("onset_step"),
                                       first.get("detected_step"), ", ".join(result.facts["diverged"]))))
            result.facts["first_signal"] = first["signal"]
    return go(ctx)


def reward(ctx: Context, run) -> Result:
    @timed("reward", run)
    def go(ctx, result):
        card = ctx.card("reward", run)
        proc = call([ctx.rldk, "reward", "health", os.path.join(ctx.run_dir(run), "completions"), "--json",
                     "--out", card], card + ".log")
        result.card = card
        for f in json_of(proc, "rldk reward health")["findings"]:
            if f["severity"] in LOUD_SEVERITIES:
                result.hits.append(Hit(f["check"], None, "%s: %s" % (f["severity"], f["message"])))
    return go(ctx)


def determinism(ctx: Context, run) -> Result:
    @timed("determinism", run)
    def go(ctx, result):
        card = ctx.card("determinism", run)
        command = " ".join(shlex.quote(a) for a in ctx.train_command(run, "out", steps=6, save=False))
        proc = call([ctx.rldk, "check-determinism", "--cmd", command, "--replicas", "2", "--parallel", "2",
                     "--no-env-audit", "--json", "--out", card], card + ".log")
        result.card = card
        report = json_of(proc, "rldk check-determinism")
        verdict = report["verdict"]
        result.facts["verdict"] = verdict
        if verdict == "error":
            raise RuntimeError("check-determinism could not compare the replicas: %s (see %s.log)"
                               % ("; ".join(str(e) for e in report.get("errors", [])) or report["summary"], card))
        if verdict != "pass":
            steps = [m["first_divergent_step"] for m in report["metrics"] if m.get("first_divergent_step") is not None]
            result.hits.append(Hit("replicas_differ", min(steps) if steps else None, report["summary"]))
    return go(ctx)


def contamination(ctx: Context, run) -> Result:
    @timed("contamination", run)
    def go(ctx, result):
        card = ctx.card("contamination", run)
        train = "train_leak.jsonl" if run.variant == "eval_leak" else "train.jsonl"
        columns = []
        for column in CONTAMINATION_TEXT.get(run.task, ()):
            columns += ["--text-col", column]
        proc = call([ctx.rldk, "contamination", "--train", os.path.join(ctx.data, run.task, train), "--eval",
                     os.path.join(ctx.data, run.task, "eval.jsonl"), "--json", "--out", card] + columns, card + ".log")
        result.card = card
        report = json_of(proc, "rldk contamination")
        for s in report["eval_sets"]:
            result.facts.update(full=s["full"], partial=s["partial"], items=s["items"],
                                by_method=s["contaminated_by_method"])
            if s["full"] or s["partial"]:
                methods = ", ".join("%s %d" % kv for kv in sorted(s["contaminated_by_method"].items()) if kv[1])
                result.hits.append(Hit("contaminated_items", None, "%d of %d eval items contaminated (%d partly; %s)"
                                       % (s["full"] + s["partial"], s["items"], s["partial"], methods)))
    return go(ctx)


# The text that identifies an eval item, where not the default prompt and answer columns. A safety eval's item is its
# request: its reference answers are canned refusals that the preference data shares by design, and MinHash (which
# has no boilerplate filter, unlike the n-gram rule) would call every such pair a near-duplicate.
CONTAMINATION_TEXT = {"refusal": ("prompt",)}


def ckpt(ctx: Context, run, healthy) -> Result:
    """How far the run's final weights moved from the initial policy, against the healthy run's."""
    @timed("ckpt", run)
    def go(ctx, result):
        moved = {}
        for r in (healthy, run):
            card = ctx.card("ckpt", r)
            proc = call([ctx.rldk, "ckpt", "diff", ctx.model, os.path.join(ctx.run_dir(r), "final"), "--json",
                         "--out", card], card + ".log")
            moved[r.variant] = relative_change(json_of(proc, "rldk ckpt diff"))
        result.card = ctx.card("ckpt", run)
        ratio = moved[run.variant] / moved[healthy.variant] if moved[healthy.variant] > 0 else float("inf")
        result.facts.update(moved=moved, ratio=ratio)
        if ratio >= 5:
            result.hits.append(Hit("weights_moved", None, "relative change %.3g vs %.3g healthy (%.0fx)" % (
                moved[run.variant], moved[healthy.variant], ratio)))
    return go(ctx)


def relative_change(report: Dict) -> float:
    summary = report.get("summary", {})
    for key in ("relative_change", "relative_l2", "global_relative_change"):
        if isinstance(summary.get(key), (int, float)):
            return float(summary[key])
    raise RuntimeError("rldk ckpt diff reported no whole-model relative change (keys: %s)" % ", ".join(summary))
