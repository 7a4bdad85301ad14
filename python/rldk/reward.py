"""Reward-model health from the samples the policy generated: the same engine and checks as ``rldk reward health``.

    import rldk
    report = rldk.reward.health("out/completions")          # TRL's completions Parquet folder
    report.verdict                                            # "pass" | "warn" | "fail"
    report.findings                                           # [{check, reward, severity, message}, ...]
    report.columns[0]["checks"]["length_bias"]["within_spearman"]

    rldk.reward.drift("scores_a.jsonl", "scores_b.jsonl").verdict  # "agree" | "drifted" | "disagree"

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
          slices: Optional[dict] = None, seed: int = 0, bootstrap: int = 2000) -> RewardHealth:
    """Compares two reward models' scores on the same samples (files or folders; the same file with two columns
    via a_col/b_col), as ``rldk reward drift``: paired correlations overall and within prompt, same-prompt ranking
    agreement, scale/offset, the paired mean difference with a bootstrap interval, slices {name: regex}."""
    pairs = [(as_text(k, "slices"), as_text(v, "slices")) for k, v in (slices or {}).items()]
    text = _core.reward_drift_json(as_path(a, "a"), as_path(b, "b"), as_text(a_col, "a_col"),
                                   as_text(b_col, "b_col"), as_text(prompt_col, "prompt_col"),
                                   as_text(response_col, "response_col"), pairs, int(seed), int(bootstrap))
    return RewardHealth(json.loads(text))
