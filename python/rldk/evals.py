"""Trusted evaluation: is checkpoint B really better than A, and how sure are we? The engine of ``rldk evals``.

    import rldk
    card = rldk.evals.compare("ckpt_a.jsonl", "ckpt_b.jsonl", seed=0)   # per-item outputs of two checkpoints
    card.verdict                       # "better" | "worse" | "mixed" | "no detectable difference" | "inconclusive"
    card.tasks[0]["design"]            # "paired": the same items, so a paired test and a paired bootstrap
    card.gate["failed"]                # B worse than A by more than margin= at the stated confidence

    scores = np.random.rand(5, 10)     # rliable's layout: runs x tasks
    rldk.evals.aggregate(scores, "iqm", reps=50000, seed=0)   # Interval(estimate, low, high, note)
    rldk.evals.probability_of_improvement(x, y)               # P(X > Y), ties counting 1/2, with its interval

Cards have exactly the fields of the rldk.evals/v1 JSON (docs/evals.md), as dicts whose top-level keys are also
attributes. Score matrices follow rliable: ``scores[run, task]`` (NumPy arrays or nested lists); a dict
``{task: [runs...]}`` allows different run counts per task.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from typing import NamedTuple, Optional, Sequence

from . import _core
from ._values import as_path, as_text
from .errors import InvalidArgumentError


class EvalCard(dict):
    """The rldk.evals/v1 document: a dict, with its top-level keys readable as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Interval(NamedTuple):
    estimate: float
    low: float
    high: float
    note: str


def _paths(sources, scratch: str) -> list:
    """Paths to read. A pandas DataFrame goes through a Parquet file (the same reader as files); in a dict
    {arm: DataFrame or path} a DataFrame's file is named after its arm, so rows without an arm column get that arm."""
    if isinstance(sources, (str, bytes)) or hasattr(sources, "__fspath__") or hasattr(sources, "to_parquet"):
        sources = [sources]
    named = sources.items() if isinstance(sources, dict) else [(None, s) for s in sources]
    out = []
    for i, (name, source) in enumerate(named):
        if hasattr(source, "to_parquet"):
            arm = "arm%d" % (i + 1) if name is None else as_text(name, "arm name")
            if not arm or "/" in arm or "\0" in arm or arm in (".", ".."):
                raise InvalidArgumentError("arm name %r cannot name a file" % (arm,))
            folder = os.path.join(scratch, str(i))
            os.makedirs(folder)
            path = os.path.join(folder, arm + ".parquet")
            source.to_parquet(path, index=False)
            out.append(path)
        else:
            out.append(as_path(source, "sources"))
    return out


def _card(sources, *, compare, a, b, lower_is_better, confidence, reps, method, seed, task_bootstrap, margin,
          effect, power, gamma, runs, at, arm_col, seed_col, task_col, item_col, score_col):
    at_name, step = ("step", int(at)) if isinstance(at, int) and not isinstance(at, bool) else (as_text(at, "at"), 0)
    if at_name not in ("last", "best", "step"):
        raise InvalidArgumentError("at must be 'last', 'best' or a step number, got %r" % (at,))
    columns = [as_text(c, "columns") for c in (arm_col, seed_col, task_col, item_col, score_col)]
    lower = [as_text(t, "lower_is_better") for t in (lower_is_better or [])]
    with tempfile.TemporaryDirectory(prefix="rldk-evals-") as scratch:
        text = _core.evals_json(_paths(sources, scratch), columns, bool(runs), at_name, step, compare, as_text(a, "a"),
                                as_text(b, "b"), lower, float(confidence), int(reps), as_text(method, "method"),
                                int(seed), bool(task_bootstrap), float(margin),
                                math.nan if effect is None else float(effect), float(power), float(gamma))
    return EvalCard(json.loads(text))


def compare(*sources, a: str = "", b: str = "", lower_is_better: Sequence[str] = (), confidence: float = 0.95,
            reps: int = 10000, method: str = "percentile", seed: int = 0, task_bootstrap: bool = False,
            margin: float = 0.0, effect: Optional[float] = None, power: float = 0.8, gamma: float = 1.0,
            runs: bool = False, at="last", arm_col: str = "", seed_col: str = "", task_col: str = "",
            item_col: str = "", score_col: str = "") -> EvalCard:
    """Compares arm B with arm A as ``rldk evals compare``: files or folders of eval results (results tables,
    per-item outputs; with runs=True run logs whose eval/* metrics are the scores, at='last'|'best'|step), pandas
    DataFrames, or a dict {arm: DataFrame or path}."""
    if len(sources) == 1 and isinstance(sources[0], (list, tuple, dict)):
        sources = sources[0]
    return _card(sources, compare=True, a=a, b=b, lower_is_better=lower_is_better, confidence=confidence, reps=reps,
                 method=method, seed=seed, task_bootstrap=task_bootstrap, margin=margin, effect=effect, power=power,
                 gamma=gamma, runs=runs, at=at, arm_col=arm_col, seed_col=seed_col, task_col=task_col,
                 item_col=item_col, score_col=score_col)


def summary(*sources, lower_is_better: Sequence[str] = (), confidence: float = 0.95, reps: int = 10000,
            method: str = "percentile", seed: int = 0, task_bootstrap: bool = False, gamma: float = 1.0,
            runs: bool = False, at="last", arm_col: str = "", seed_col: str = "", task_col: str = "",
            item_col: str = "", score_col: str = "") -> EvalCard:
    """The aggregates of every arm, as ``rldk evals aggregate``."""
    if len(sources) == 1 and isinstance(sources[0], (list, tuple, dict)):
        sources = sources[0]
    return _card(sources, compare=False, a="", b="", lower_is_better=lower_is_better, confidence=confidence,
                 reps=reps, method=method, seed=seed, task_bootstrap=task_bootstrap, margin=0.0, effect=None,
                 power=0.8, gamma=gamma, runs=runs, at=at, arm_col=arm_col, seed_col=seed_col, task_col=task_col,
                 item_col=item_col, score_col=score_col)


def evaluate(data, suite: str, *, reps: int = 10000, confidence: float = 0.95, seed: int = 0) -> EvalCard:
    """The older tool's suites, as ``rldk evals evaluate DATA --suite NAME``: each probe of the suite measured on a
    per-sample or per-step table (paths, or a pandas DataFrame), or skipped with the reason; the
    rldk.evals-suite/v1 document."""
    with tempfile.TemporaryDirectory(prefix="rldk-evals-") as scratch:
        text = _core.evals_suite_json(_paths(data, scratch), as_text(suite, "suite"), int(reps), float(confidence),
                                      int(seed))
    return EvalCard(json.loads(text))


def suites() -> str:
    """The suites and probes of data/eval_suites.yaml, as ``rldk evals suites`` prints them (Markdown)."""
    return _core.evals_suites_markdown()


def _per_task(scores, name="scores") -> list:
    """rliable's (runs x tasks) matrix, or {task: runs}, as the engine's [task][run] lists."""
    if isinstance(scores, dict):
        columns = [[float(v) for v in runs] for runs in scores.values()]
    else:
        try:
            import numpy as np
            matrix = np.asarray(scores, dtype=float)
        except (TypeError, ValueError) as e:
            raise InvalidArgumentError("%s must be a (runs x tasks) array or a dict {task: runs}: %s" % (name, e))
        if matrix.ndim == 1:
            matrix = matrix[:, None]
        if matrix.ndim != 2:
            raise InvalidArgumentError("%s must be 2-D (runs x tasks), got %d dimensions" % (name, matrix.ndim))
        columns = matrix.T.tolist()
    if not columns or any(len(c) == 0 for c in columns):
        raise InvalidArgumentError("%s has a task without runs" % name)
    if any(not math.isfinite(v) for c in columns for v in c):
        raise InvalidArgumentError("%s holds a non-finite score" % name)
    return columns


def aggregate(scores, metric: str = "iqm", *, reps: int = 50000, confidence: float = 0.95,
              method: str = "percentile", seed: int = 0, task_bootstrap: bool = False, gamma: float = 1.0) -> Interval:
    """rliable's aggregate (mean, median, iqm, optimality_gap) of a (runs x tasks) score matrix with its stratified
    bootstrap interval; reps=0 gives the point estimate alone."""
    return Interval(*_core.evals_aggregate(_per_task(scores), as_text(metric, "metric"), int(reps),
                                           float(confidence), as_text(method, "method"), int(seed),
                                           bool(task_bootstrap), float(gamma)))


def probability_of_improvement(x, y, *, reps: int = 2000, confidence: float = 0.95, seed: int = 0,
                               task_bootstrap: bool = False) -> Interval:
    """P(X > Y) averaged over tasks (ties 1/2), both arms resampled independently within each task."""
    return Interval(*_core.evals_probability_of_improvement(_per_task(x, "x"), _per_task(y, "y"), int(reps),
                                                            float(confidence), int(seed), bool(task_bootstrap)))


def performance_profile(scores, tau, *, reps: int = 2000, confidence: float = 0.95, seed: int = 0):
    """Fraction of runs scoring above each tau, averaged over tasks, with bootstrap bands: (fraction, low, high) as
    NumPy arrays."""
    import numpy as np
    fraction, low, high = _core.evals_profile(_per_task(scores), [float(t) for t in tau], int(reps),
                                              float(confidence), int(seed))
    return np.asarray(fraction), np.asarray(low), np.asarray(high)


def bootstrap_mean(values, *, reps: int = 10000, confidence: float = 0.95, method: str = "percentile",
                   seed: int = 0) -> Interval:
    """The mean of one sample (e.g. paired differences) with its bootstrap interval, percentile or BCa."""
    return Interval(*_core.evals_bootstrap_mean([float(v) for v in values], int(reps), float(confidence),
                                                as_text(method, "method"), int(seed)))


def welch(a, b, *, confidence: float = 0.95) -> dict:
    """Welch's t test of b against a, Hedges' g with its interval and Mann-Whitney's U (two-sided)."""
    r = _core.evals_welch([float(v) for v in a], [float(v) for v in b], float(confidence))
    keys = ("difference", "t", "df", "p_value", "ci_low", "ci_high", "hedges_g", "hedges_g_low", "hedges_g_high",
            "mann_whitney_u", "mann_whitney_p", "mann_whitney_exact")
    return dict(zip(keys, r))


def paired(a, b, *, confidence: float = 0.95) -> dict:
    """The paired t test of b - a on the same items."""
    if len(a) != len(b):
        raise InvalidArgumentError("paired samples must have the same length (%d and %d)" % (len(a), len(b)))
    r = _core.evals_paired([float(y) - float(x) for x, y in zip(a, b)], float(confidence))
    keys = ("mean_difference", "sd_difference", "t", "df", "p_value", "ci_low", "ci_high", "effect_dz")
    return dict(zip(keys, r))


def holm(p_values) -> list:
    """Holm's step-down adjusted p-values, in the order given."""
    return list(_core.evals_holm([float(p) for p in p_values]))


def seeds_needed(effect: float, sd_a: float, sd_b: Optional[float] = None, *, alpha: float = 0.05,
                 power: float = 0.8, two_sided: bool = True) -> int:
    """Seeds per arm for Welch's test to detect `effect` with the given power (Colas et al. 2018); 0 if never."""
    return _core.evals_seeds_needed(float(effect), float(sd_a), float(sd_a if sd_b is None else sd_b), float(alpha),
                                    float(power), bool(two_sided))


def length_controlled_win_rate(preference, length_difference, *, reps: int = 2000, confidence: float = 0.95,
                               seed: int = 0) -> dict:
    """Win rate of B over A from per-item preferences (1 win, 0 loss, 0.5 tie, or a judge's probability), raw and
    controlled for length: least squares of the preference on len(B) - len(A); the intercept is the expected
    preference at equal length. Intervals from a bootstrap over items."""
    pref = [float(p) for p in preference]
    diff = [float(d) for d in length_difference]
    if any(not math.isfinite(v) for v in pref + diff):
        raise InvalidArgumentError("preference and length_difference must be finite numbers")
    n, win, intercept, slope, mean_diff = _core.evals_length_controlled(pref, diff, int(reps), float(confidence),
                                                                         int(seed))
    return {"n": n, "win_rate": Interval(*win), "length_controlled_win_rate": Interval(*intercept),
            "slope": Interval(*slope), "mean_length_difference": mean_diff}


def welch_power(effect: float, sd_a: float, sd_b: Optional[float] = None, n: int = 5, *, alpha: float = 0.05,
                two_sided: bool = True) -> float:
    """Power of Welch's test with n seeds per arm to detect `effect` (Colas et al. 2018's approximation)."""
    return _core.evals_welch_power(float(effect), float(sd_a), float(sd_a if sd_b is None else sd_b), int(n),
                                   float(alpha), bool(two_sided))


def items_needed(effect: float, sd_difference: float, *, alpha: float = 0.05, power: float = 0.8,
                 two_sided: bool = True) -> int:
    """Items for a paired test to detect `effect` when per-item differences have SD sd_difference; 0 if never."""
    return _core.evals_items_needed(float(effect), float(sd_difference), float(alpha), float(power), bool(two_sided))
