"""Runs the reference suite: prepares the policy and the data, trains every run under `rldk monitor` (two at a time),
applies each run's checks, judges every bug's expected catch and every healthy run's silence, and writes the table
(results.md, results.json) and index.html linking every card.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List

from . import catalog, checks, evaluate, report, tasks

QUICK_STEPS, FULL_STEPS = 40, 150
TRAINED_CHECKS = {"monitor", "doctor", "diff", "reward", "evals", "ckpt"}


def write_jsonl(path: str, rows) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


def prepare_data(data: str) -> None:
    """Train and eval items of each task (held out: other seeds, the eval sets' own phrasing, and the refusal eval's
    objects never in training),
    and each eval_leak bug's training file: the training items with every eval item copied in."""
    splits = {
        "summarize": (tasks.summarize_items(256, seed=1), tasks.summarize_items(96, seed=2)),
        "refusal": (tasks.refusal_items(256, seed=1, things=tasks.THINGS_TRAIN),
                    tasks.refusal_items(48, seed=2, things=tasks.THINGS_EVAL, phrasing="eval")),
        "codefix": (tasks.codefix_items(256, seed=1), tasks.codefix_items(20, seed=2, phrasing="eval")),
    }
    for task, (train, held_out) in splits.items():
        write_jsonl(os.path.join(data, task, "train.jsonl"), train)
        write_jsonl(os.path.join(data, task, "eval.jsonl"), held_out)
        leaked = train[:]
        for i, item in enumerate(held_out):  # spread through the pool, as a careless merge of sources leaves them
            leaked.insert((i * 7919) % len(leaked), dict(item, id=item["id"] + "-copied"))
        write_jsonl(os.path.join(data, task, "train_leak.jsonl"), leaked)


def judge(run: catalog.Run, results: Dict[str, checks.Result]) -> List[Dict]:
    """One row per expected catch of a bug, or per check of a healthy run."""
    rows = []
    if run.bug is None:
        for name, r in results.items():
            rows.append(dict(run=run.name, task=run.task, variant=run.variant, bug="(healthy)", check=name,
                             expected="quiet: no warning, alert or finding", ok=r.quiet,
                             found="quiet" if r.quiet else (r.error or "; ".join(h.detail or h.id for h in r.hits)),
                             step=None, seconds=r.seconds, card=r.card))
        return rows
    for e in run.expect:
        r = results.get(e.check)
        if r is None:
            rows.append(dict(run=run.name, task=run.task, variant=run.variant, bug=run.bug, check=e.check,
                             expected=e.what, ok=False, found="not run", step=None, seconds=0.0, card=None))
            continue
        ok, step = caught(e, run, r)
        found = r.error or ("; ".join(h.detail or h.id for h in r.hits) if r.hits else "nothing")
        rows.append(dict(run=run.name, task=run.task, variant=run.variant, bug=run.bug, check=e.check, expected=e.what,
                         ok=ok, found=found, step=step, seconds=r.seconds, card=r.card))
    return rows


KL_POLICY = ("kl", "entropy", "length", "policy", "response", "clip", "ratio", "logp", "reward_margin", "chosen",
             "rejected", "pref")


def caught(e: catalog.Expect, run: catalog.Run, r: checks.Result):
    """Whether the check reported what the bug's expectation names (not merely anything), and the step."""
    if r.error:
        return False, None
    steps = [h.step for h in r.hits if h.step is not None]
    step = min(steps) if steps else None
    if e.check == "monitor":
        if run.variant == "memory_leak":
            return any(h.id.startswith("memory_leak") for h in r.hits), None
        stopped = [h for h in r.hits if "stopped" in h.detail and any(k in h.id for k in KL_POLICY)]
        step = min((h.step for h in stopped if h.step is not None), default=None)
        return bool(stopped) and (e.within_step is None or (step is not None and step <= e.within_step)), step
    if e.check == "doctor":
        hits = [h for h in r.hits if any(k in h.id for k in KL_POLICY)]
        step = min((h.step for h in hits if h.step is not None), default=None)
        return bool(hits) and (e.within_step is None or (step is not None and step <= e.within_step)), step
    if e.check == "diff":
        return ("policy/kl" in r.facts.get("diverged", []) and step is not None and step <= e.within_step), step
    if e.check == "reward":
        want = {"saturating_rm": "saturation", "length_rm": "length_bias"}[run.variant]
        return any(h.id == want for h in r.hits), None
    if e.check == "evals":
        return any(h.id == "worse" for h in r.hits), None
    return bool(r.hits), step


def run_suite(out: str, rldk: str, python: str, full: bool, model_path: str = None, jobs: int = 2,
              docs: str = None, only: List[str] = None) -> int:
    start = time.time()
    out = os.path.abspath(out)
    if os.path.isdir(out):
        shutil.rmtree(out)  # a run's outputs are its own: nothing of an earlier run may be judged as this one's
    os.makedirs(out)
    selected = catalog.runs(full)
    if only:
        known = {r.name for r in selected}
        unknown = sorted(set(only) - known)
        if unknown:
            raise SystemExit("rldk reference: no run named %s in %s mode; runs: %s" % (
                ", ".join(unknown), "full" if full else "quick", ", ".join(sorted(known))))
        needed = set(only) | {catalog.healthy_of(r).name for r in selected if r.name in only and
                              {"diff", "ckpt", "evals"} & set(catalog.checks_of(r, full))}
        selected = [r for r in selected if r.name in needed]
    log("reference suite (%s): %d run%s, writing to %s" % ("full" if full else "quick", len(selected),
                                                            "" if len(selected) == 1 else "s", out))

    data = os.path.join(out, "data")
    prepare_data(data)
    if model_path is None:
        from .model import make_initial_model

        t = time.time()
        model_path = make_initial_model(os.path.join(out, "model", "init"))
        log("initial policy: tiny GPT-2 warmed up in %.1f s" % (time.time() - t))
    ctx = checks.Context(out, rldk, python, os.path.abspath(model_path), full, FULL_STEPS if full else QUICK_STEPS)

    results: Dict[str, Dict[str, checks.Result]] = {r.name: {} for r in selected}
    trained = [r for r in selected if TRAINED_CHECKS & set(catalog.checks_of(r, full))]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for r, result in zip(trained, pool.map(lambda r: checks.train_under_monitor(ctx, r), trained)):
            log("trained %-28s %5.1f s  monitor: %s" % (r.name, result.seconds, summary_of(result)))
            results[r.name]["monitor"] = result

    for r in selected:
        wanted = catalog.checks_of(r, full)
        if "monitor" not in wanted:
            results[r.name].pop("monitor", None)
        if "monitor" in results[r.name] and results[r.name]["monitor"].error:
            continue  # nothing to read: the monitor row already says why
        for name in wanted:
            if name in ("monitor", "evals"):
                continue
            if name == "doctor":
                res = checks.doctor(ctx, r)
            elif name == "diff":
                res = checks.diff(ctx, r, catalog.healthy_of(r))
            elif name == "ckpt":
                res = checks.ckpt(ctx, r, catalog.healthy_of(r))
            elif name == "reward":
                res = checks.reward(ctx, r)
            elif name == "determinism":
                res = checks.determinism(ctx, r)
            elif name == "contamination":
                res = checks.contamination(ctx, r)
            else:
                raise ValueError("unknown check %r in the catalog" % name)
            results[r.name][name] = res
            log("%-13s %-28s %5.1f s  %s" % (name, r.name, res.seconds, summary_of(res)))

    for r, res in evaluate.run_evals(ctx, [r for r in selected if "evals" in catalog.checks_of(r, full)]):
        results[r.name]["evals"] = res
        log("%-13s %-28s %5.1f s  %s" % ("evals", r.name, res.seconds, summary_of(res)))

    rows = [row for r in selected for row in judge(r, results[r.name])]
    seconds = time.time() - start
    report.write(out, rows, seconds, full)
    if docs:
        report.update_docs(docs, out)
    sys.stdout.write("\n" + report.table(rows) + "\n")
    failed = [row for row in rows if not row["ok"]]
    log("%d of %d expectations met in %.0f s; cards: %s" % (len(rows) - len(failed), len(rows), seconds,
                                                           os.path.join(out, "index.html")))
    return 1 if failed else 0


def summary_of(r: checks.Result) -> str:
    if r.error:
        return "ERROR " + r.error
    return "quiet" if not r.hits else ", ".join(h.id for h in r.hits)


def log(text: str) -> None:
    sys.stderr.write("rldk reference: " + text + "\n")
    sys.stderr.flush()
