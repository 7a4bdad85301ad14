"""Fault injectors: one per fault type of the `rldk scan` contract, each with documented magnitude units.

An injector edits a clean run in place from an onset index on and returns the label: which metrics it changed,
the onset and end step, and the magnitude actually applied. Magnitudes are drawn from each type's documented range
(docs/detector-benchmark.md, "Fault catalog"); "sigma" always means the standard deviation of that metric's noise
at the onset step, "x level" a multiple of the metric's noise-free trend there.

Each type is injected in up to three onset regimes (`inject(..., onset=)`): "mid" (25-70% of the run), "early" (the
first 15% of the logged points, from the type's `early_lead` on) and "drift" (the type's `drift` injector, a ramp
from the first logged step to the last). Runs are generated one row per optimizer step and subsampled to the logged rows
afterwards (`SyntheticRun.subsample`), so onsets are drawn on logged steps and labels carry logged step numbers.

`also_accept` on a label lists fault types that are a genuine consequence of the injected fault (a truncation
wave also lengthens responses; a GRPO zero-variance batch also zeroes the advantages). A finding of such a type
inside the label's window is neither a detection of this label nor a false alarm: the evaluator reports it as
"tolerated".
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .algorithms import GOLD_REWARD, KL_NOISE, REWARD_COMPONENT, _kl_closed_loop, replay_controller
from .labels import Label
from .synthetic_run import SyntheticRun


@dataclass(frozen=True)
class FaultType:
    name: str
    algorithms: tuple
    magnitude: tuple  # documented (low, high) range; integers in a tuple of >2 values mean "one of"
    unit: str
    summary: str
    inject: object  # fn(run, rng, i0, magnitude) -> (end_index_inclusive, metrics, also_accept)
    onset_range: tuple = (0.25, 0.7)  # onset drawn in this fraction of the run
    choose_onset: object = None  # fn(run, rng) -> index, for faults whose onset depends on the run's shape
    # Regimes beyond "a long run logged every step, onset in its middle" (docs/detector-benchmark.md, "Regimes"):
    short: bool = True  # also injected into short runs (20-150 logged points, logged every 5/10/20 steps)
    early_lead: int | None = None  # early onsets: logged points before the onset (0: the first point); None: none
    drift: object = None  # fn(run, rng, i0, magnitude) ramping from the first logged step to the last; None: none
    drift_magnitude: tuple = ()
    drift_unit: str = ""
    length_headroom: bool = False  # runs start with completions far below the length cap (room to grow 5x)
    since: int = 3  # generator version that added the type (older types keep their draws, see corpus.plan)
    mid: bool = True  # also injected mid-run; False for a fault that is a property of the whole run (drift only)


def _level(run, name, i0, width=20):
    """The noise-free level just before the onset (median of the trend over a short window)."""
    return float(np.median(run.baseline[name][max(0, i0 - width):i0 + 1]))


def _sigma(run, name, i0):
    return float(run.sigma[name][i0])


def _ramp(n_total, i0, ramp):
    """0 before i0, rising linearly to 1 over `ramp` steps, 1 afterwards."""
    r = np.clip((np.arange(n_total) - i0 + 1) / max(1, ramp), 0.0, 1.0)
    r[:i0] = 0.0
    return r


def _sustained_end(run, rng, i0, lo=150, hi=600):
    """Half of the sustained faults last to the end of the run (as a real failure does), half recover."""
    if rng.random() < 0.5:
        return run.n - 1
    return min(run.n - 1, i0 + int(rng.integers(lo, hi)))


def _ramp_length(run, rng, i0, lo=150, hi=600):
    """Steps a gradual fault takes to reach its full magnitude: 150-600, but never more than the steps left, so the
    magnitude on the label is one the run actually reaches (a drift cut off at 1.2x by the end of the run would be a
    label no detector could honestly confirm)."""
    return max(1, min(int(rng.integers(lo, hi)), run.n - 1 - i0))


def _scale_window(run, name, i0, i1, factor):
    run.metrics[name][i0:i1 + 1] *= factor
    run.baseline[name][i0:i1 + 1] *= factor
    run.sigma[name][i0:i1 + 1] *= np.abs(factor)


def _log_every(run):
    return int(run.params.get("log_every", 1))


def _fast_ramp(run, rng, points, steps):
    """Steps a fast fault takes: `points` (lo, hi) logged points when the trainer logs every few steps, `steps`
    (lo, hi) when it logs every step ("within a few logged points" of a log that has a point per step would be a
    jump no trainer shows)."""
    every = _log_every(run)
    if every > 1:
        return int(rng.integers(points[0], points[1] + 1)) * every
    return int(rng.integers(steps[0], steps[1] + 1))


def _progress(run, i0, power=1.0):
    """0 at i0, rising to 1 at the run's last step (steady faults that run to the end), as (t / T) ** power."""
    t = np.clip((np.arange(run.n) - i0) / max(1, run.n - 1 - i0), 0.0, 1.0)[i0:]
    return t ** power


def _set_trend(run, name, i0, trend):
    """Replaces the trend of a metric with relative noise from i0 on, keeping the run's own noise draws."""
    _scale_window(run, name, i0, run.n - 1, trend / np.maximum(run.baseline[name][i0:], 1e-12))


# ------------------------------------------------------------------------------------------------------------ KL
def _kl_spike(run, rng, i0, mag):
    i1 = min(run.n - 1, i0 + int(rng.integers(0, 3)))
    run.metrics["policy/kl"][i0:i1 + 1] *= mag
    replay_controller(run, i0)
    return i1, ["policy/kl"], ["kl_level_shift", "ratio_breach", "kl_above_range"]


def _kl_level_shift(run, rng, i0, mag):
    i1 = _sustained_end(run, rng, i0)
    run.metrics["policy/kl"][i0:i1 + 1] += mag * _sigma(run, "policy/kl", i0)
    replay_controller(run, i0)
    # Under an adaptive controller a sustained shift is also, correctly, an off-target controller.
    return i1, ["policy/kl"], ["kl_drift", "kl_controller_off_target", "kl_spike", "kl_above_range"]


def _kl_controller_off_target(run, rng, i0, mag):
    """The penalty stops restraining the policy (e.g. the KL term is dropped from the loss, or the policy found a
    direction the reference does not penalise): drift pressure jumps by `mag` and KL no longer follows beta, so KL
    settles at several times the target while the controller keeps raising beta."""
    p = run.params
    pressure = p["kl_pressure"].copy()
    pressure[i0:] *= 1.0 + (mag - 1.0) * _ramp(run.n, i0, 20)[i0:]
    responsiveness = np.ones(run.n)
    responsiveness[i0:] = 0.1
    beta = run.metrics["policy/kl_coef"]
    # Reuse the run's own noise draws so the fault changes the dynamics, not the noise.
    noise = np.log(run.metrics["policy/kl"] / np.maximum(run.baseline["policy/kl"], 1e-12)) + 0.5 * KL_NOISE ** 2
    kl, new_beta = _kl_closed_loop(pressure, noise, p["kl_beta0"], p["kl_target"], p["kl_gain"], start=i0,
                                   beta_start=beta[i0], responsiveness=responsiveness)
    run.metrics["policy/kl"][i0:] = kl[i0:]
    run.metrics["policy/kl_coef"][i0:] = new_beta[i0:]
    return run.n - 1, ["policy/kl", "policy/kl_coef"], ["kl_level_shift", "kl_drift", "kl_above_range"]


def _kl_drift(run, rng, i0, mag):
    """KL walks away from the reference: multiplied by 1 + (mag - 1) * (t / D)^p, p in {1, 2}, from i0 to the end
    (a runaway does not come back on its own)."""
    length = _ramp_length(run, rng, i0)
    power = float(rng.choice([1.0, 2.0]))
    t = np.clip((np.arange(run.n) - i0) / length, 0.0, None)
    factor = 1.0 + (mag - 1.0) * t ** power
    run.metrics["policy/kl"][i0:] *= factor[i0:]
    replay_controller(run, i0)
    return run.n - 1, ["policy/kl"], ["kl_level_shift", "kl_controller_off_target", "kl_above_range"]


# ------------------------------------------------------------------------------------------------------- entropy
def _entropy_collapse(run, rng, i0, mag):
    """Entropy falls to (1 - mag) of its level with an exponential approach over 10-100 steps and stays there."""
    tau = float(rng.integers(10, 100)) / 3.0
    t = np.arange(run.n) - i0
    factor = np.where(t < 0, 1.0, (1.0 - mag) + mag * np.exp(-np.clip(t, 0, None) / tau))
    _scale_window(run, "policy/entropy", i0, run.n - 1, factor[i0:])
    return run.n - 1, ["policy/entropy"], ["reward_saturation"]


def _entropy_surge(run, rng, i0, mag):
    ramp = int(rng.integers(5, 30))
    i1 = _sustained_end(run, rng, i0, 100, 400)
    factor = 1.0 + (mag - 1.0) * _ramp(run.n, i0, ramp)[i0:i1 + 1]
    _scale_window(run, "policy/entropy", i0, i1, factor)
    return i1, ["policy/entropy"], ["entropy_rise"]


# -------------------------------------------------------------------------------------------------------- reward
def _reward_hacking_length(run, rng, i0, mag):
    """Reward climbs together with response length (length exploitation); KL creeps up with them."""
    length = _ramp_length(run, rng, i0)
    cap = run.params["max_length"]
    r = np.clip((np.arange(run.n) - i0) / length, 0.0, 1.0)[i0:]
    level = _level(run, "response/length_mean", i0)
    target = min(mag * level, 0.9 * cap)
    grow = 1.0 + (target / level - 1.0) * r
    for name in ("response/length_mean", "response/length_max"):
        run.metrics[name][i0:] = np.minimum(run.metrics[name][i0:] * grow, cap)
    reward_sigma = _sigma(run, "reward/mean", i0)
    bump = float(rng.uniform(4.0, 8.0)) * reward_sigma * r
    run.metrics["reward/mean"][i0:] += bump
    if run.algorithm == "grpo":
        np.clip(run.metrics["reward/mean"], 0.0, 1.0, out=run.metrics["reward/mean"])
    run.metrics["policy/kl"][i0:] *= 1.0 + 0.5 * r
    replay_controller(run, i0)
    return run.n - 1, ["response/length_mean", "reward/mean"], ["truncation", "kl_drift", "kl_level_shift",
                                                                 "reward_saturation", "length_growth"]


# A run with a gold fault evaluates at least this often: a held-out metric logged a handful of times per run cannot
# show a decline, so such a label could not be confirmed from the log by any detector.
GOLD_FAULT_MAX_EVAL_EVERY = 50


def _reward_hacking_gold(run, rng, i0, mag):
    """Over-optimisation: from the onset the held-out (gold) reward stops improving and falls by `mag` gold-noise
    sigmas while the proxy reward keeps improving (3 proxy sigmas more)."""
    length = _ramp_length(run, rng, i0)
    r = np.clip((np.arange(run.n) - i0) / length, 0.0, 1.0)[i0:]
    every = min(run.params["eval_every"], GOLD_FAULT_MAX_EVAL_EVERY)
    gold = run.params["gold_every_step"].copy()
    trend = run.baseline[GOLD_REWARD]
    gold[i0:] -= trend[i0:] - trend[i0]  # the natural improvement stops at the onset
    gold[i0:] -= mag * _sigma(run, GOLD_REWARD, i0) * r
    gold[run.steps % every != 0] = np.nan
    run.metrics[GOLD_REWARD] = gold
    run.metrics["reward/mean"][i0:] += 3.0 * _sigma(run, "reward/mean", i0) * r
    if run.algorithm == "grpo":
        np.clip(run.metrics["reward/mean"], 0.0, 1.0, out=run.metrics["reward/mean"])
    run.metrics["policy/kl"][i0:] *= 1.0 + 0.3 * r
    replay_controller(run, i0)
    return run.n - 1, ["reward/mean", GOLD_REWARD], ["kl_drift", "kl_level_shift"]


def _reward_saturation(run, rng, i0, mag):
    """Reward pins at a ceiling: its spread across the batch shrinks to (1 - mag) and the mean stops moving."""
    ramp = int(rng.integers(10, 60))
    r = _ramp(run.n, i0, ramp)[i0:]
    m = run.metrics["reward/mean"]
    if run.algorithm == "grpo":
        ceiling = 1.0
        run.metrics["reward/frac_zero_std"][i0:] += (0.97 - run.metrics["reward/frac_zero_std"][i0:]) * r
        run.metrics["reward/group_std"][i0:] *= 1.0 - mag * r
        run.metrics["advantage/std"][i0:] *= 1.0 - mag * r
    else:
        ceiling = _level(run, "reward/mean", i0) + 3.0 * _sigma(run, "reward/mean", i0)
    noise = m[i0:] - run.baseline["reward/mean"][i0:]
    m[i0:] = (1 - r) * m[i0:] + r * (ceiling - np.abs(noise) * (1.0 - mag))
    run.metrics["reward/std"][i0:] *= 1.0 - mag * r
    return run.n - 1, ["reward/mean", "reward/std"], ["grpo_zero_variance", "advantage_collapse",
                                                       "entropy_collapse", "loss_plateau"]


# ----------------------------------------------------------------------------------------------------- gradients
def _grad_explosion(run, rng, i0, mag):
    """Grad norm grows geometrically to `mag` x its level within 10-100 steps and stays there."""
    length = int(rng.integers(10, 100))
    t = np.clip((np.arange(run.n) - i0 + 1) / length, 0.0, 1.0)[i0:]
    _scale_window(run, "policy/grad_norm", i0, run.n - 1, mag ** t)
    return run.n - 1, ["policy/grad_norm"], ["grad_spike", "grad_imbalance", "clip_fraction_high"]


def _grad_vanishing(run, rng, i0, mag):
    """Grad norm falls to 1/mag of its level within 1-20 steps (a frozen or detached model) and stays there."""
    ramp = int(rng.integers(1, 20))
    r = _ramp(run.n, i0, ramp)[i0:]
    _scale_window(run, "policy/grad_norm", i0, run.n - 1, mag ** (-r))
    return run.n - 1, ["policy/grad_norm"], ["grad_imbalance", "loss_plateau"]


def _grad_spike(run, rng, i0, mag):
    i1 = min(run.n - 1, i0 + int(rng.integers(0, 3)))
    level = _level(run, "policy/grad_norm", i0)
    run.metrics["policy/grad_norm"][i0:i1 + 1] = mag * level * rng.uniform(0.8, 1.2, i1 - i0 + 1)
    return i1, ["policy/grad_norm"], ["grad_imbalance", "grad_explosion"]


def _grad_imbalance(run, rng, i0, mag):
    """The value head's gradient grows to `mag` x its level while the policy's stays put (PPO critic diverging)."""
    ramp = int(rng.integers(5, 50))
    i1 = _sustained_end(run, rng, i0)
    factor = 1.0 + (mag - 1.0) * _ramp(run.n, i0, ramp)[i0:i1 + 1]
    _scale_window(run, "value/grad_norm", i0, i1, factor)
    run.metrics["value/loss"][i0:i1 + 1] *= np.sqrt(factor)
    return i1, ["value/grad_norm"], ["grad_explosion", "grad_spike"]


# ---------------------------------------------------------------------------------------------------- advantages
def _advantage_bias(run, rng, i0, mag):
    """Advantage mean moves off zero by `mag` x the advantage std (a whitening or baseline bug), sustained."""
    i1 = _sustained_end(run, rng, i0)
    sign = float(rng.choice([-1.0, 1.0]))
    std = float(np.median(run.metrics["advantage/std"][max(0, i0 - 20):i0 + 1]))
    run.metrics["advantage/mean"][i0:i1 + 1] += sign * mag * std
    return i1, ["advantage/mean"], []


def _advantage_collapse(run, rng, i0, mag):
    ramp = int(rng.integers(1, 20))
    r = _ramp(run.n, i0, ramp)[i0:]
    _scale_window(run, "advantage/std", i0, run.n - 1, 1.0 - (1.0 - 1.0 / mag) * r)
    return run.n - 1, ["advantage/std"], ["grpo_zero_variance"]


# ------------------------------------------------------------------------------------------------ ratio / clipping
def _clip_fraction_high(run, rng, i0, mag):
    """Clip fraction rises to `mag` (absolute fraction of clipped tokens) over 5-50 steps."""
    ramp = int(rng.integers(5, 50))
    i1 = _sustained_end(run, rng, i0)
    r = _ramp(run.n, i0, ramp)[i0:i1 + 1]
    c = run.metrics["policy/clip_frac"]
    noise = rng.normal(0.0, 0.1 * mag, i1 - i0 + 1)
    c[i0:i1 + 1] = np.clip((1 - r) * c[i0:i1 + 1] + r * (mag + noise), 0.0, 1.0)
    return i1, ["policy/clip_frac"], ["ratio_breach", "kl_level_shift", "kl_spike"]


def _ratio_breach(run, rng, i0, mag):
    """The mean importance ratio leaves 1 for 1-20 steps and reaches `mag` (reported: 12.26 against a limit of
    10); with a rollout engine the largest per-token ratio jumps by orders of magnitude."""
    i1 = min(run.n - 1, i0 + int(rng.integers(0, 20)))
    k = i1 - i0 + 1
    run.metrics["policy/importance_ratio"][i0:i1 + 1] = mag * rng.uniform(0.7, 1.0, k)
    if "rollout/is_ratio_max" in run.metrics:
        run.metrics["rollout/is_ratio_max"][i0:i1 + 1] *= mag * 10.0
    return i1, ["policy/importance_ratio"], ["clip_fraction_high", "kl_spike", "logprob_mismatch",
                                             "grad_spike"]


# ---------------------------------------------------------------------------------------------------- GRPO / data
def _grpo_zero_variance(run, rng, i0, mag):
    """Every group gets identical rewards (reported: reward_std 0, frac_reward_zero_std 1, loss 0, grad_norm 0):
    the zero-std fraction rises to `mag`, the learning signal with it vanishes."""
    ramp = int(rng.integers(1, 30))
    i1 = _sustained_end(run, rng, i0, 100, 400)
    r = _ramp(run.n, i0, ramp)[i0:i1 + 1]
    z = run.metrics["reward/frac_zero_std"]
    z[i0:i1 + 1] = np.clip((1 - r) * z[i0:i1 + 1] + r * (mag + rng.normal(0, 0.01, i1 - i0 + 1)), 0.0, 1.0)
    live = 1.0 - (mag - 0.0) * r
    for name in ("reward/group_std", "advantage/std", "policy/grad_norm"):
        run.metrics[name][i0:i1 + 1] *= np.maximum(live, 0.0) + 1e-3
    run.metrics["policy/loss"][i0:i1 + 1] *= np.maximum(live, 0.0)
    return i1, ["reward/frac_zero_std"], ["advantage_collapse", "grad_vanishing", "reward_saturation",
                                          "loss_plateau"]


def _truncation(run, rng, i0, mag):
    """Completions hit the length cap: clipped fraction rises to `mag`, mean length approaches the cap and the
    reward of truncated answers drops (reported: clipped_ratio 1.0, mean length = max, reward 0)."""
    ramp = int(rng.integers(5, 50))
    i1 = _sustained_end(run, rng, i0)
    r = _ramp(run.n, i0, ramp)[i0:i1 + 1]
    cap = run.params["max_length"]
    cf = run.metrics["response/clipped_frac"]
    cf[i0:i1 + 1] = np.clip((1 - r) * cf[i0:i1 + 1] + r * (mag + rng.normal(0, 0.02, i1 - i0 + 1)), 0.0, 1.0)
    lm = run.metrics["response/length_mean"]
    lm[i0:i1 + 1] = (1 - r * mag) * lm[i0:i1 + 1] + r * mag * cap
    run.metrics["response/length_max"][i0:i1 + 1] = np.where(r > 0, cap, run.metrics["response/length_max"][i0:i1 + 1])
    rm = run.metrics["reward/mean"]
    lowest = rm[:i0].min() if i0 > 0 else rm[0]  # an onset at the first logged step has no history
    rm[i0:i1 + 1] -= r * mag * 0.5 * np.abs(rm[i0:i1 + 1] - lowest)
    return i1, ["response/clipped_frac", "response/length_mean"], ["reward_hacking_length", "grpo_zero_variance",
                                                                   "reward_saturation", "length_growth",
                                                                   "reward_collapse"]


def _logprob_mismatch(run, rng, i0, mag):
    """Rollout-engine and trainer log-probs drift apart: the mean |delta logprob| rises to `mag` x its level over
    10-60 steps (reported: 0.011 -> 0.036 in 30 steps)."""
    ramp = int(rng.integers(10, 60))
    r = _ramp(run.n, i0, ramp)[i0:]
    _scale_window(run, "rollout/logprob_diff", i0, run.n - 1, 1.0 + (mag - 1.0) * r)
    run.metrics["rollout/is_ratio_max"][i0:] *= 1.0 + 0.5 * (mag - 1.0) * r
    return run.n - 1, ["rollout/logprob_diff"], ["ratio_breach", "kl_drift", "kl_level_shift"]


# ----------------------------------------------------------------------------------------- numerics / loss / lr
_NON_FINITE_METRICS = {"ppo": ("policy/grad_norm", "policy/loss", "policy/kl", "value/loss"),
                       "grpo": ("policy/grad_norm", "policy/loss", "policy/kl"),
                       "dpo": ("train/loss", "policy/grad_norm")}


def _non_finite(run, rng, i0, mag):
    """`mag` consecutive steps of NaN/Inf in one metric (reported: grad_norm NaN first, then the loss); a run that
    dies with NaN keeps logging NaN to the end."""
    name = str(rng.choice(_NON_FINITE_METRICS[run.algorithm]))
    count = int(mag)
    i1 = min(run.n - 1, i0 + count - 1)
    kind = str(rng.choice(["nan", "nan", "inf"]))
    run.non_finite.setdefault(name, {}).update({i: kind for i in range(i0, i1 + 1)})
    return i1, [name], []


def _reward_never_paid(run, rng, i0, mag):
    """The task's reward function never pays (a correctness check no answer passes: cut at the length cap, a parser
    that never matches) while a shaping term keeps the total moving (reported: an Unsloth run's correctness reward 0
    at all 250 steps, its xmlcount term 0.05-0.12). A property of the whole run, so its only regime is "drift" (from
    the first step to the last): a function that paid once did pay."""
    run.set_exact("rewards/format", run.metrics["reward/mean"].copy())
    run.set_exact(REWARD_COMPONENT, np.zeros(run.n))
    return run.n - 1, [REWARD_COMPONENT], []


def _eos_mismatch(run, rng, i0, mag):
    """The trainer does not recognise the token completions end on (a chat model's end-of-turn token that is not
    tokenizer.eos_token), so it counts them as cut at the cap while their lengths stay what they were (reported: TRL
    clipped_ratio 1.0 at all 1,328 steps of a Qwen2.5-7B run whose completions were 834-1,185 tokens under a
    2,048 cap). A property of the run's set-up: its only regime is "drift" (from the first step to the last);
    `mag` is the share counted as cut."""
    cf = run.metrics["response/clipped_frac"]
    cf[:] = np.clip(mag + rng.normal(0, 0.01, run.n), 0.0, 1.0)
    return run.n - 1, ["response/clipped_frac"], []


def _plateau_onset(run, rng):
    """DPO: learning must stop while at least half of the loss's total decrease is still ahead (otherwise the
    "plateau" is just convergence), after a 50-step baseline. PPO/GRPO: anywhere in the middle of the run."""
    if run.algorithm != "dpo":
        return int(rng.integers(int(0.25 * run.n), int(0.7 * run.n)))
    base = run.baseline["train/loss"]
    total = base[0] - base[-1]
    ahead = np.nonzero(base - base[-1] >= 0.5 * total)[0]
    latest = int(ahead[-1]) if ahead.size else 50
    lo = min(50, run.n // 6)
    return int(rng.integers(lo, max(lo + 1, latest)))


def _loss_plateau(run, rng, i0, mag):
    """Two reported shapes. DPO: learning stops early while the loss is still falling; the loss (and the margin and
    accuracy) freeze at their onset level, minibatch noise remains; the label's magnitude is the gap between the
    would-be and the frozen final loss in loss-noise sigmas. PPO/GRPO: the policy loss flatlines (reported: loss
    0.0 at every step, from rounding or a vanished gradient); the magnitude is the noise left, as a fraction."""
    if run.algorithm != "dpo":
        loss = run.metrics["policy/loss"]
        level = float(np.round(np.median(loss[max(0, i0 - 20):i0 + 1]), 4))
        loss[i0:] = level + (loss[i0:] - run.baseline["policy/loss"][i0:]) * mag
        run.params["label_magnitude"] = mag
        return run.n - 1, ["policy/loss"], ["grad_vanishing", "reward_saturation", "grpo_zero_variance"]
    name = "train/loss"
    frozen = run.baseline[name][i0]
    noise = run.metrics[name][i0:] / run.baseline[name][i0:]
    gap = (frozen - run.baseline[name][-1]) / max(1e-12, float(run.sigma[name][i0]))
    run.metrics[name][i0:] = frozen * noise
    for other in ("pref/reward_margin", "pref/reward_accuracy", "pref/rewards_chosen", "pref/rewards_rejected"):
        base = run.baseline[other]
        run.metrics[other][i0:] = base[i0] + (run.metrics[other][i0:] - base[i0:])
    run.params["label_magnitude"] = round(float(gap), 3)
    return run.n - 1, [name], ["grad_vanishing", "reward_saturation"]


def _loss_divergence(run, rng, i0, mag):
    """The loss runs away from the onset to the end and ends `mag` loss units from zero (reported: a DPO variant whose
    log-ratio penalty has no lower bound falls from about 2.6 through zero to -200 while the model turns to
    gibberish): through zero downwards in two runs of three, upwards (a diverging loss) in the others; linearly or
    front-loaded (sqrt). The run's own noise is kept, growing with the loss's distance from its onset level."""
    name = "train/loss"
    start = float(run.baseline[name][i0])
    end = start + mag if rng.random() < 1.0 / 3.0 else -mag
    trend = start + (end - start) * _progress(run, i0, float(rng.choice([0.5, 1.0])))
    noise = run.metrics[name][i0:] - run.baseline[name][i0:]
    run.metrics[name][i0:] = trend + noise * np.maximum(1.0, np.abs(trend) / max(start, 1e-9))
    run.baseline[name][i0:] = trend
    return run.n - 1, [name], ["loss_plateau"]


def _lr_anomaly(run, rng, i0, mag):
    """The learning rate leaves its schedule by a factor of `mag` (up or down: a scheduler restored from the wrong
    checkpoint, a units mistake), for 20 steps to the end of the run."""
    i1 = _sustained_end(run, rng, i0, 20, 400)
    factor = mag if rng.random() < 0.5 else 1.0 / mag
    run.metrics["policy/lr"][i0:i1 + 1] *= factor
    return i1, ["policy/lr"], []


def _memory_leak(run, rng, i0, mag):
    """Allocated memory grows linearly by `mag` x its level over the rest of the run (no plateau, no release)."""
    t = np.clip((np.arange(run.n) - i0) / max(1, run.n - 1 - i0), 0.0, 1.0)[i0:]
    level = _level(run, "perf/max_memory_allocated_gb", i0)
    run.metrics["perf/max_memory_allocated_gb"][i0:] += mag * level * t
    return run.n - 1, ["perf/max_memory_allocated_gb"], []


def _throughput_drop(run, rng, i0, mag):
    """Throughput falls by the fraction `mag` (a slow node, a thermal limit, a data-loader stall), sustained."""
    i1 = _sustained_end(run, rng, i0)
    run.metrics["perf/throughput"][i0:i1 + 1] *= 1.0 - mag
    run.metrics["perf/step_time"][i0:i1 + 1] /= 1.0 - mag
    return i1, ["perf/throughput", "perf/step_time"], []


# ------------------------------------------------------------------------------- out-of-range levels and trends
# Faults added with the short / early-onset / drift regimes: what real users' logs show at their first logged points
# (tests/fixtures/real/): KL in whole nats, completions collapsing to a few tokens or growing to the cap, entropy
# climbing, the reward falling back to where it started.
_KL_CONSEQUENCES = ["kl_level_shift", "kl_drift", "kl_spike", "kl_controller_off_target"]


def _kl_above_range(run, rng, i0, mag):
    """Per-token KL leaves its healthy band (0.05-0.3 nats) and climbs to `mag` nats (0.5-5; reported: 0.002 at step
    10, 0.8 at 50, about 3 from 100 on), exponentially over 2-10 logged points (5-100 steps when every step is
    logged), and stays there."""
    ramp = _fast_ramp(run, rng, (2, 10), (5, 100))
    r = _ramp(run.n, i0, ramp)[i0:]
    # Geometric interpolation from the clean trend to `mag` (a GRPO KL still growing from ~0 ends at `mag` too).
    _scale_window(run, "policy/kl", i0, run.n - 1, (mag / np.maximum(run.baseline["policy/kl"][i0:], 1e-6)) ** r)
    replay_controller(run, i0)
    return run.n - 1, ["policy/kl"], _KL_CONSEQUENCES


def _kl_above_range_drift(run, rng, i0, mag):
    """From the first step KL climbs steadily to `mag` nats at the last: at a constant growth rate (exponential, it
    leaves the healthy band late) or linearly (it leaves it early)."""
    t = _progress(run, i0)
    base = run.baseline["policy/kl"][i0:]
    end = max(float(base[-1]), 1e-6)
    growth = (mag / end) ** t if rng.random() < 0.5 else 1.0 + (mag / end - 1.0) * t
    _scale_window(run, "policy/kl", i0, run.n - 1, growth)
    replay_controller(run, i0)
    return run.n - 1, ["policy/kl"], _KL_CONSEQUENCES


def _kl_drift_from_start(run, rng, i0, mag):
    """KL multiplied by 1 + (mag - 1) * (t / T) ** p, p in {1, 2}, from the first step to the last (T): the run drifts
    away from its reference from the start and reaches `mag` x its clean level at the end."""
    power = float(rng.choice([1.0, 2.0]))
    _scale_window(run, "policy/kl", i0, run.n - 1, 1.0 + (mag - 1.0) * _progress(run, i0, power))
    replay_controller(run, i0)
    return run.n - 1, ["policy/kl"], ["kl_level_shift", "kl_controller_off_target", "kl_above_range"]


def _entropy_rise(run, rng, i0, mag):
    """Entropy rises steadily from the onset to `mag` x its onset level at the last step (1.5-3x; reported: 0.9 ->
    6 nats), linearly, front-loaded (sqrt) or back-loaded (square); the clean decline stops at the onset."""
    name = "policy/entropy"
    power = float(rng.choice([0.5, 1.0, 2.0]))
    start = float(run.baseline[name][i0])
    _set_trend(run, name, i0, start * (1.0 + (mag - 1.0) * _progress(run, i0, power)))
    return run.n - 1, [name], ["entropy_surge"]


def _shrink_lengths(run, i0, factor, floor=1.0):
    """Mean and max completion length (and the clipped fraction: short answers do not hit the cap) x factor."""
    mean = run.baseline["response/length_mean"][i0:]
    factor = np.maximum(factor, floor / np.maximum(mean, 1e-9))
    for name in ("response/length_mean", "response/length_max", "response/clipped_frac"):
        _scale_window(run, name, i0, run.n - 1, factor)
    return factor


_LENGTH_COLLAPSE_CONSEQUENCES = ["entropy_collapse", "entropy_surge", "entropy_rise"]


def _length_collapse(run, rng, i0, mag):
    """Mean completion length falls to `mag` (1-30%) of its clean level (reported: 393 -> 5 tokens in 6 logged
    points) and stays: half of the runs within 1-5 logged points (2-20 steps when every step is logged), half
    steadily to the end of the run, at a constant rate. Lengths never go below one token."""
    if rng.random() < 0.5:
        r = _ramp(run.n, i0, _fast_ramp(run, rng, (1, 5), (2, 20)))[i0:]
    else:
        r = _progress(run, i0)
    factor = _shrink_lengths(run, i0, mag ** r)
    run.params["label_magnitude"] = float(factor[-1])  # above `mag` only where the one-token floor stopped it
    return run.n - 1, ["response/length_mean"], _LENGTH_COLLAPSE_CONSEQUENCES


def _length_collapse_drift(run, rng, i0, mag):
    """From the first step the completions shrink steadily to `mag` (10-40%) of their starting length at the last
    step, linearly or at a constant rate."""
    t = _progress(run, i0)
    start = float(run.baseline["response/length_mean"][i0])
    base = run.baseline["response/length_mean"][i0:].copy()
    target = start * (mag ** t if rng.random() < 0.5 else 1.0 - (1.0 - mag) * t)
    factor = _shrink_lengths(run, i0, target / base)
    run.params["label_magnitude"] = float(base[-1] * factor[-1] / start)
    return run.n - 1, ["response/length_mean"], _LENGTH_COLLAPSE_CONSEQUENCES


def _length_growth(run, rng, i0, mag):
    """Mean completion length grows steadily from the onset to `mag` x its onset level at the last step (2-5x;
    reported: 305 -> 930 of a 1024 cap), linearly or front-loaded; the longest completions and the clipped fraction
    grow with it. The run starts far below the cap (length_headroom), and the growth stops at 0.9 x cap."""
    name = "response/length_mean"
    cap = run.params["max_length"]
    start = float(run.baseline[name][i0])
    mag = min(mag, 0.9 * cap / start)
    run.params["label_magnitude"] = mag
    power = float(rng.choice([0.5, 1.0]))
    growth = start * (1.0 + (mag - 1.0) * _progress(run, i0, power)) / np.maximum(run.baseline[name][i0:], 1e-9)
    for other in (name, "response/length_max", "response/clipped_frac"):
        _scale_window(run, other, i0, run.n - 1, growth)
    np.minimum(run.metrics["response/length_max"], cap, out=run.metrics["response/length_max"])
    np.minimum(run.metrics[name], cap, out=run.metrics[name])
    np.clip(run.metrics["response/clipped_frac"], 0.0, 1.0, out=run.metrics["response/clipped_frac"])
    return run.n - 1, [name], ["reward_hacking_length", "truncation"]


# The reward must have climbed this many reward-noise sigmas above its start before it can collapse: a "collapse"
# of a reward that never rose is not confirmable from the log.
REWARD_COLLAPSE_MIN_GAIN = 5.0


def _reward_collapse_onset(run, rng):
    """A logged step in 25-70% of the run where the reward has gained REWARD_COLLAPSE_MIN_GAIN sigmas (else the
    logged step of the largest gain before 85%)."""
    every = _log_every(run)
    logged = np.arange(every - 1, run.n, every)
    base, sigma = run.baseline["reward/mean"], run.sigma["reward/mean"]
    gain = (np.maximum.accumulate(base) - base[0]) / np.maximum(sigma, 1e-12)
    frac = logged / max(1, run.n - 1)
    window = logged[(frac >= 0.25) & (frac <= 0.7)]
    ok = window[gain[window] >= REWARD_COLLAPSE_MIN_GAIN]
    if ok.size:
        return int(rng.choice(ok))
    late = logged[(frac >= 0.25) & (frac <= 0.85)]
    return int(late[np.argmax(gain[late])]) if late.size else int(logged[len(logged) // 2])


def _reward_collapse(run, rng, i0, mag):
    """The mean reward falls from its best level back to its start or below and stays there (reported: 0.44 -> 0.0
    within 6 logged points). `mag` is the fraction of the gain (best - start) lost: 1 = back to the start, 1.5 = half
    the gain below it (an accuracy reward stops at 0). Half of the runs fall within 1-6 logged points (5-60 steps
    when every step is logged), half over 10-30% of the run. GRPO's group statistics follow the accuracy (zero-std
    groups -> 1 as it nears 0); the held-out reward loses the same fraction of its gain."""
    name = "reward/mean"
    base = run.baseline[name]
    start, best = float(base[0]), float(base[:i0 + 1].max())
    gain = max(best - start, 1e-9)
    target = start - (mag - 1.0) * gain
    if run.algorithm == "grpo":
        target = max(target, 0.0)
    run.params["label_magnitude"] = (best - target) / gain
    if rng.random() < 0.5:
        ramp = _fast_ramp(run, rng, (1, 6), (5, 60))
    else:
        ramp = max(1, min(int(run.n * rng.uniform(0.1, 0.3)), run.n - 1 - i0))
    r = _ramp(run.n, i0, ramp)[i0:]
    old = base[i0:].copy()
    new = (1.0 - r) * old + r * target
    run.metrics[name][i0:] += new - old
    run.baseline[name][i0:] = new
    if run.algorithm == "grpo":
        np.clip(run.metrics[name], 0.0, 1.0, out=run.metrics[name])
        group = run.params["group_size"]
        spread_old, spread_new = (np.sqrt(np.clip(a * (1 - a), 1e-4, None)) for a in (old, new))
        zero_old, zero_new = (a ** group + (1.0 - a) ** group for a in (old, new))
        _scale_window(run, "reward/std", i0, run.n - 1, spread_new / spread_old)
        _scale_window(run, "reward/group_std", i0, run.n - 1,
                      spread_new * (1 - zero_new) / np.maximum(spread_old * (1 - zero_old), 1e-9))
        _scale_window(run, "advantage/std", i0, run.n - 1, (1 - zero_new) / np.maximum(1 - zero_old, 1e-9))
        z = run.metrics["reward/frac_zero_std"]
        z[i0:] = np.clip(z[i0:] + zero_new - zero_old, 0.0, 1.0)
    gold_trend = run.baseline[GOLD_REWARD]
    lost = (gold_trend[i0:] - gold_trend[0]) * run.params["label_magnitude"] * r
    run.metrics[GOLD_REWARD][i0:] -= lost
    run.params["gold_every_step"][i0:] -= lost
    return run.n - 1, [name], ["grpo_zero_variance", "advantage_collapse", "reward_saturation"]


_RL = ("ppo", "grpo")
_ALL = ("ppo", "grpo", "dpo")

CATALOG = {f.name: f for f in [
    FaultType("kl_spike", _RL, (5.0, 20.0), "x level", "KL jumps for 1-3 steps", _kl_spike, early_lead=3),
    FaultType("kl_level_shift", _RL, (3, 4, 5, 6), "sigma", "KL steps up and stays", _kl_level_shift),
    FaultType("kl_controller_off_target", ("ppo",), (2.0, 4.0), "x drift pressure",
              "adaptive KL controller cannot hold the target", _kl_controller_off_target),
    FaultType("kl_drift", _RL, (3.0, 10.0), "x level after 150-600 steps", "KL runs away (linear or quadratic)",
              _kl_drift, drift=_kl_drift_from_start, drift_magnitude=(3.0, 10.0), drift_unit="x level at the end"),
    FaultType("entropy_collapse", _RL, (0.7, 0.95), "fraction of level lost", "entropy falls and stays low",
              _entropy_collapse, early_lead=2),
    FaultType("entropy_surge", _RL, (2.0, 4.0), "x level", "entropy rises suddenly", _entropy_surge, early_lead=2),
    FaultType("reward_hacking_length", _RL, (1.8, 3.0), "x response length", "reward rises with response length",
              _reward_hacking_length),
    # Short runs evaluate a handful of times (evals every 25-200 steps): a gold decline is not confirmable there.
    FaultType("reward_hacking_gold", _RL, (4.0, 10.0), "gold-reward sigma", "proxy reward up, gold reward down",
              _reward_hacking_gold, short=False),
    FaultType("reward_saturation", _RL, (0.8, 0.95), "fraction of reward spread lost", "reward pinned at a ceiling",
              _reward_saturation),
    FaultType("grad_explosion", _ALL, (10.0, 1000.0), "x level", "grad norm grows geometrically", _grad_explosion,
              early_lead=2),
    FaultType("grad_vanishing", _ALL, (20.0, 1000.0), "1/x level", "grad norm falls towards zero",
              _grad_vanishing, early_lead=2),
    FaultType("grad_spike", _ALL, (10.0, 50.0), "x level", "grad norm jumps for 1-3 steps", _grad_spike,
              early_lead=3),
    FaultType("grad_imbalance", ("ppo",), (50.0, 200.0), "x value grad norm", "value gradients dominate",
              _grad_imbalance),
    FaultType("advantage_bias", _RL, (0.1, 0.5), "x advantage std", "advantage mean leaves zero", _advantage_bias,
              early_lead=0),
    FaultType("advantage_collapse", _RL, (10.0, 100.0), "1/x advantage std", "advantage std collapses",
              _advantage_collapse, early_lead=2),
    FaultType("clip_fraction_high", _RL, (0.25, 0.5), "clip fraction", "clip fraction rises and stays high",
              _clip_fraction_high, early_lead=0),
    FaultType("ratio_breach", _RL, (2.0, 12.0), "mean importance ratio", "importance ratio leaves 1",
              _ratio_breach, early_lead=0),
    FaultType("grpo_zero_variance", ("grpo",), (0.9, 1.0), "zero-std group fraction",
              "all groups get identical rewards", _grpo_zero_variance, early_lead=0),
    FaultType("truncation", _RL, (0.5, 1.0), "clipped fraction", "completions hit the length cap", _truncation,
              early_lead=0),
    FaultType("non_finite", _ALL, (1, 1, 5, 1000000), "steps of NaN/Inf", "NaN or Inf in a metric", _non_finite,
              early_lead=0),
    FaultType("loss_plateau", _ALL, (0.0, 0.02), "PPO/GRPO: fraction of loss noise left; DPO: loss-noise sigma "
              "between frozen and expected final loss", "the loss stops moving", _loss_plateau,
              choose_onset=_plateau_onset),
    FaultType("lr_anomaly", _ALL, (10.0, 100.0), "x scheduled lr (up or down)", "lr leaves its schedule",
              _lr_anomaly),
    FaultType("memory_leak", _ALL, (0.1, 0.6), "x level by the end", "memory grows linearly", _memory_leak,
              drift=_memory_leak, drift_magnitude=(0.1, 0.6), drift_unit="x level by the end"),
    FaultType("throughput_drop", _ALL, (0.3, 0.7), "fraction of throughput lost", "throughput falls and stays low",
              _throughput_drop),
    FaultType("logprob_mismatch", ("grpo",), (3.0, 10.0), "x level", "rollout/trainer log-probs drift apart",
              _logprob_mismatch),
    FaultType("kl_above_range", _RL, (0.5, 5.0), "nats per token", "KL climbs far above its healthy band",
              _kl_above_range, early_lead=0, drift=_kl_above_range_drift, drift_magnitude=(0.5, 5.0),
              drift_unit="nats per token at the end", since=4),
    FaultType("length_collapse", _RL, (0.01, 0.3), "fraction of the clean length left",
              "completions collapse to a few tokens", _length_collapse, early_lead=2, drift=_length_collapse_drift,
              drift_magnitude=(0.1, 0.4), drift_unit="fraction of the starting length left at the end", since=4),
    FaultType("length_growth", _RL, (2.0, 5.0), "x onset length at the end", "completions grow steadily",
              _length_growth, drift=_length_growth, drift_magnitude=(2.0, 5.0),
              drift_unit="x starting length at the end", length_headroom=True, since=4),
    FaultType("entropy_rise", _RL, (1.5, 3.0), "x onset entropy at the end", "entropy rises steadily",
              _entropy_rise, drift=_entropy_rise, drift_magnitude=(1.5, 3.0),
              drift_unit="x starting entropy at the end", since=4),
    FaultType("reward_collapse", _RL, (1.0, 1.5), "fraction of the reward gain lost",
              "reward falls back to its start or below", _reward_collapse, choose_onset=_reward_collapse_onset,
              since=4),
    FaultType("loss_divergence", ("dpo",), (10.0, 200.0), "loss units from zero at the end",
              "the loss runs away (through zero, or upwards)", _loss_divergence, since=5),
    FaultType("reward_never_paid", ("grpo",), (1.0, 1.0), "reward function", "a reward function never pays out",
              _reward_never_paid, drift=_reward_never_paid, drift_magnitude=(1.0, 1.0),
              drift_unit="reward function at 0 throughout", mid=False, since=6),
    FaultType("eos_mismatch", _RL, (0.6, 1.0), "share of completions counted as cut",
              "completions that ended early counted as cut at the cap", _eos_mismatch, drift=_eos_mismatch,
              drift_magnitude=(0.6, 1.0), drift_unit="share of completions counted as cut throughout", mid=False,
              since=7),
]}

FAULT_TYPES = tuple(CATALOG)

# Onset regimes: "mid" (25-70% of the run, or the type's own rule), "early" (the first 15% of the run's logged
# points, at least the type's early_lead points in; half of them within the first five points after that lead),
# "drift" (the fault ramps from the first logged step to the last).
ONSETS = ("mid", "early", "drift")
EARLY_FRACTION = 0.15
EARLY_FIRST_POINTS = 5


def onsets(fault: FaultType) -> tuple:
    return tuple(o for o in ONSETS if (o == "mid" and fault.mid) or (o == "early" and fault.early_lead is not None)
                 or (o == "drift" and fault.drift is not None))


def draw_magnitude(fault: FaultType, rng: np.random.Generator, magnitude: tuple = ()) -> float:
    m = magnitude or fault.magnitude
    if len(m) > 2:
        return float(rng.choice(m))
    lo, hi = m
    if lo == hi:
        return float(lo)
    if lo > 0 and hi / lo >= 10:  # wide multiplicative ranges are drawn log-uniformly
        return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
    return float(rng.uniform(lo, hi))


def _logged_at_or_after(index, every):
    """The first logged row (steps every, 2 every, ...; index every - 1, ...) at or after an optimizer-step index."""
    return (index // every + 1) * every - 1


def _early_onset(run, rng, lead, every):
    points = run.n // every
    hi = max(lead, int(EARLY_FRACTION * points))
    if rng.random() < 0.5:
        hi = min(hi, lead + EARLY_FIRST_POINTS - 1)
    return (int(rng.integers(lead, hi + 1)) + 1) * every - 1


def inject(run: SyntheticRun, fault_name: str, rng: np.random.Generator, onset: str = "mid") -> Label:
    """Injects one fault into a clean run (one row per optimizer step, `run.params["log_every"]` the logging
    interval the run will be subsampled to) and returns its label, in logged steps."""
    fault = CATALOG[fault_name]
    if run.algorithm not in fault.algorithms:
        raise ValueError("fault %s does not apply to %s runs" % (fault_name, run.algorithm))
    if onset not in onsets(fault):
        raise ValueError("fault %s has no %s-onset regime" % (fault_name, onset))
    every = int(run.params.get("log_every", 1))
    run.params.pop("label_magnitude", None)
    unit, injector = fault.unit, fault.inject
    if onset == "drift":
        # The ramp starts at the first logged step, so the log shows all of it: a steep start between step 0 and the
        # first logged row would be growth no detector could see, yet counted in the label's magnitude.
        i0 = every - 1
        magnitude = draw_magnitude(fault, rng, fault.drift_magnitude)
        unit, injector = fault.drift_unit, fault.drift
    elif onset == "early":
        i0 = _early_onset(run, rng, fault.early_lead, every)
        magnitude = draw_magnitude(fault, rng)
    else:
        if fault.choose_onset is not None:
            i0 = _logged_at_or_after(fault.choose_onset(run, rng), every)
        else:
            lo, hi = fault.onset_range
            points = run.n // every
            i0 = (int(rng.integers(int(lo * points), int(hi * points))) + 1) * every - 1
        magnitude = draw_magnitude(fault, rng)
    i1, metrics, also_accept = injector(run, rng, i0, magnitude)
    magnitude = run.params.pop("label_magnitude", magnitude)
    if fault_name == "non_finite":
        magnitude = i1 - i0 + 1
    first = _logged_at_or_after(i0, every)
    last = max(first, (i1 + 1) // every * every - 1)
    return Label(fault=fault_name, metrics=list(metrics), onset_step=int(run.steps[first]),
                 end_step=int(run.steps[last]), magnitude=float(magnitude), unit=unit,
                 also_accept=sorted(set(also_accept) - {fault_name}))
