"""Reward-model health from the samples the policy generated: the same engine and checks as ``rldk reward health``.

    import rldk
    report = rldk.reward.health("out/completions")          # TRL's completions Parquet folder
    report.verdict                                            # "pass" | "warn" | "fail"
    report.findings                                           # [{check, reward, severity, message}, ...]
    report.columns[0]["checks"]["length_bias"]["within_spearman"]

    rldk.reward.drift("scores_a.jsonl", "scores_b.jsonl").verdict  # "agree" | "drifted" | "disagree"
    rldk.reward.drift("rm_v1/", "rm_v2/", prompts="samples.jsonl")  # two local reward models (transformers)

Reports have exactly the fields of the rldk.reward-health/v1 and rldk.reward-drift/v1 JSON (docs/reward.md), as
dicts whose top-level keys are also attributes.
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Iterable, Optional, Sequence, Tuple, Union

from . import _core
from ._values import as_path, as_text
from .errors import InvalidArgumentError


class RewardHealth(dict):
    """The rldk.reward-health/v1 document: a dict, with its top-level keys readable as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _sources(data, scratch: str) -> list:
    # A DataFrame goes through a Parquet file, so it is read by the same reader as files are.
    if hasattr(data, "to_parquet"):
        path = os.path.join(scratch, "samples.parquet")
        data.to_parquet(path, index=False)
        return [path]
    if isinstance(data, (str, bytes, os.PathLike)):
        return [as_path(data, "samples")]
    if isinstance(data, Iterable):
        return [as_path(p, "samples") for p in data]
    raise InvalidArgumentError("samples must be a path, a list of paths or a pandas DataFrame, got %s"
                               % type(data).__name__)


def health(samples, *, reward_cols: Optional[Sequence[str]] = None, prompt_col: str = "",
           response_col: str = "", step_col: str = "", group_col: str = "", gold_col: str = "",
           reward_range: Optional[Tuple[float, float]] = None, chosen_col: str = "", rejected_col: str = "",
           chosen_score_col: str = "", rejected_score_col: str = "", label_col: str = "", kl_log=None,
           kl_metric: str = "") -> RewardHealth:
    """Runs every reward-model check on per-sample data: files or folders (TRL completions Parquet, verl rollout
    dumps, JSONL/Parquet score files, preference pairs) or a pandas DataFrame. Column arguments name columns the
    defaults miss. ``kl_log``: a training log whose KL per step the gold score is fitted against (Gao et al.)."""
    lo, hi = (None, None) if reward_range is None else (float(reward_range[0]), float(reward_range[1]))
    cols = [as_text(c, "reward_cols") for c in (reward_cols or [])]
    pair_columns = [as_text(v, name) for name, v in (("chosen_col", chosen_col), ("rejected_col", rejected_col),
                                                     ("chosen_score_col", chosen_score_col),
                                                     ("rejected_score_col", rejected_score_col),
                                                     ("label_col", label_col))]
    kl_path = "" if kl_log is None else as_path(kl_log, "kl_log")
    with tempfile.TemporaryDirectory(prefix="rldk-reward-") as scratch:
        text = _core.reward_health_json(
            _sources(samples, scratch), cols, as_text(prompt_col, "prompt_col"),
            as_text(response_col, "response_col"), as_text(step_col, "step_col"),
            as_text(group_col, "group_col"), as_text(gold_col, "gold_col"), lo, hi, pair_columns, kl_path,
            as_text(kl_metric, "kl_metric"))
    return RewardHealth(json.loads(text))


def length_bias(samples, **columns) -> dict:
    """The length part of :func:`health` per reward column: {column: length_bias check}."""
    report = health(samples, **columns)
    return {c["name"]: c["checks"]["length_bias"] for c in report.columns}


def drift(a, b, *, a_col: str = "", b_col: str = "", prompt_col: str = "", response_col: str = "",
          slices: Optional[dict] = None, seed: int = 0, bootstrap: int = 2000, prompts=None,
          batch_size: int = 8, max_length: int = 1024, device: Optional[str] = None, dtype: str = "float32",
          scores_dir=None) -> RewardHealth:
    """Compares two reward models' scores on the same samples (files or folders; the same file with two columns
    via a_col/b_col), as ``rldk reward drift``: paired correlations overall and within prompt, same-prompt ranking
    agreement, scale/offset, the paired mean difference with a bootstrap interval, slices {name: regex}.

    ``a`` or ``b`` may be a local reward model folder (config.json; a transformers sequence-classification model):
    it then scores ``prompts`` (a JSONL or Parquet file of prompts and completions) with
    :mod:`rldk.reward_models` (batch_size, max_length, device, dtype), and its scores are compared like a score
    file's. ``scores_dir``: a folder to keep those score files in (scores_a.jsonl, scores_b.jsonl)."""
    from . import reward_models

    pairs = [(as_text(k, "slices"), as_text(v, "slices")) for k, v in (slices or {}).items()]
    a, b = as_path(a, "a"), as_path(b, "b")
    models = {side: reward_models.is_model_dir(path) for side, path in (("a", a), ("b", b))}
    if not any(models.values()) and prompts is not None:
        raise InvalidArgumentError("prompts is for reward model folders (holding config.json); a and b are score files")
    if any(models.values()) and prompts is None:
        raise InvalidArgumentError("%s is a reward model folder: give the prompts and completions to score with "
                                   "prompts=FILE" % ("a" if models["a"] else "b"))
    with tempfile.TemporaryDirectory(prefix="rldk-drift-") as scratch:
        folder = scratch if scores_dir is None else as_path(scores_dir, "scores_dir")
        if scores_dir is not None:
            os.makedirs(folder, exist_ok=True)
        sides = {"a": [a, as_text(a_col, "a_col")], "b": [b, as_text(b_col, "b_col")]}
        for side, is_model in models.items():
            if not is_model:
                continue
            if sides[side][1]:
                raise InvalidArgumentError("%s is a reward model folder; %s_col names a column of a score file"
                                           % (side, side))
            sides[side] = [reward_models.score_file(
                sides[side][0], as_path(prompts, "prompts"), os.path.join(folder, "scores_%s.jsonl" % side),
                prompt_col=as_text(prompt_col, "prompt_col"), response_col=as_text(response_col, "response_col"),
                batch_size=int(batch_size), max_length=int(max_length), device=device, dtype=as_text(dtype, "dtype")),
                "score"]
        text = _core.reward_drift_json(sides["a"][0], sides["b"][0], sides["a"][1], sides["b"][1],
                                       as_text(prompt_col, "prompt_col"), as_text(response_col, "response_col"),
                                       pairs, int(seed), int(bootstrap))
    doc = json.loads(text)
    for side, path in (("a", a), ("b", b)):
        if models[side]:  # read from a temporary score file: name the model instead, as the CLI does
            doc[side]["format"] = "reward model " + path
    return RewardHealth(doc)
