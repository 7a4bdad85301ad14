"""The suite's evals: each checkpoint answers the held-out eval items (eight samples each, seeded), the task's gold
measure scores every answer, and `rldk evals compare` says whether checkpoint B is really better or worse than A.

- summarize-healthy: the initial policy (A) against the healthy run's final one (B): training must not make it
  significantly worse.
- summarize-lr100: the healthy run's final policy (A) against the checkpoint the lr100 run saved when rldk
  monitor stopped it (B): is anything of it worth keeping? By the task's own measure it is worse.
"""
from __future__ import annotations

import json
import os
from typing import List, Tuple

from . import catalog, checks, tasks

SAMPLES_PER_ITEM = 8


def answers(model_dir: str, items: List[dict], seed: int = 0) -> List[List[str]]:
    import torch

    from .model import load

    model, tokenizer = load(model_dir)
    model.eval()
    torch.manual_seed(seed)
    prompts = [it["prompt"] for it in items]
    batch = tokenizer(prompts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(**batch, do_sample=True, temperature=1.0, max_new_tokens=16,
                             num_return_sequences=SAMPLES_PER_ITEM, pad_token_id=tokenizer.pad_token_id)
    texts = tokenizer.batch_decode(out[:, batch["input_ids"].shape[1]:], skip_special_tokens=True)
    return [texts[i * SAMPLES_PER_ITEM:(i + 1) * SAMPLES_PER_ITEM] for i in range(len(items))]


def score_file(ctx: checks.Context, name: str, model_dir: str) -> str:
    """OUT/evals/NAME.jsonl: one row per eval item (item, task, score = mean gold over the samples)."""
    items = [json.loads(l) for l in open(os.path.join(ctx.data, "summarize", "eval.jsonl"), encoding="utf-8")]
    path = os.path.join(ctx.out, "evals", name + ".jsonl")
    if os.path.exists(path):  # scored already, for an earlier comparison
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for item, said in zip(items, answers(model_dir, items)):
            score = sum(tasks.summary_quality(s, item["key"], item["prompt"]) for s in said) / len(said)
            f.write(json.dumps({"item": item["id"], "task": "summary_quality", "score": score}) + "\n")
    return path


def compare(ctx: checks.Context, run: catalog.Run, a: Tuple[str, str], b: Tuple[str, str]) -> checks.Result:
    """Scores checkpoints a and b ((name, folder) each) on the eval items and compares them; a checkpoint that
    cannot be scored (its run failed) makes the check an error, never a quiet row."""
    @checks.timed("evals", run)
    def go(ctx, result):
        card = ctx.card("evals", run)
        files = [score_file(ctx, name, folder) for name, folder in (a, b)]
        proc = checks.call([ctx.rldk, "evals", "compare", *files, "--seed", "0", "--json", "--out", card],
                           card + ".log")
        result.card = card
        report = checks.json_of(proc, "rldk evals compare")
        for task in report["tasks"]:
            verdict = task.get("verdict", "")
            result.facts[task["task"]] = verdict
            if verdict == "worse":
                result.hits.append(checks.Hit("worse", None, "%s %.3f -> %.3f (95%% interval of the change %.3f to "
                                                             "%.3f, p = %.2g, %d items paired)" % (
                    task["task"], task["mean_a"], task["mean_b"], task["ci_low"], task["ci_high"], task["p_value"],
                    task["items"])))
    return go(ctx)


def run_evals(ctx: checks.Context, runs: List[catalog.Run]) -> List[Tuple[catalog.Run, checks.Result]]:
    out = []
    for run in runs:
        final = (run.name, os.path.join(ctx.run_dir(run), "final"))
        if run.variant == "healthy":
            baseline = ("initial", ctx.model)
        else:
            healthy = catalog.healthy_of(run)
            baseline = (healthy.name, os.path.join(ctx.run_dir(healthy), "final"))
        out.append((run, compare(ctx, run, baseline, final)))
    return out
