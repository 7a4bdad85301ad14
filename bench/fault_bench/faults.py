"""Fault injectors: one per fault type of the `rldk scan` contract, each with documented magnitude units.

An injector edits a clean run in place from an onset index on and returns the label: which metrics it changed,
the onset and end step, and the magnitude actually applied. Magnitudes are drawn from each type's documented range
(docs/detector-benchmark.md, "Fault catalog"); "sigma" always means the standard deviation of that metric's noise
at the onset step, "x level" a multiple of the metric's noise-free trend there.

`also_accept` on a label lists fault types that are a genuine consequence of the injected fault (a truncation
wave also lengthens responses; a GRPO zero-variance batch also zeroes the advantages). A finding of such a type
inside the label's window is neither a detection of this label nor a false alarm: the evaluator reports it as
"tolerated".
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .algorithms import GOLD_REWARD, KL_NOISE, _kl_closed_loop, replay_controller
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


# ------------------------------------------------------------------------------------------------------------ KL
def _kl_spike(run, rng, i0, mag):
    i1 = min(run.n - 1, i0 + int(rng.integers(0, 3)))
    run.metrics["policy/kl"][i0:i1 + 1] *= mag
    replay_controller(run, i0)
    return i1, ["policy/kl"], ["kl_level_shift", "ratio_breach"]


def _kl_level_shift(run, rng, i0, mag):
    i1 = _sustained_end(run, rng, i0)
    run.metrics["policy/kl"][i0:i1 + 1] += mag * _sigma(run, "policy/kl", i0)
    replay_controller(run, i0)
    # Under an adaptive controller a sustained shift is also, correctly, an off-target controller.
    return i1, ["policy/kl"], ["kl_drift", "kl_controller_off_target", "kl_spike"]


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
    return run.n - 1, ["policy/kl", "policy/kl_coef"], ["kl_level_shift", "kl_drift"]


def _kl_drift(run, rng, i0, mag):
    """KL walks away from the reference: multiplied by 1 + (mag - 1) * (t / D)^p, p in {1, 2}, from i0 to the end
    (a runaway does not come back on its own)."""
    length = _ramp_length(run, rng, i0)
    power = float(rng.choice([1.0, 2.0]))
    t = np.clip((np.arange(run.n) - i0) / length, 0.0, None)
    factor = 1.0 + (mag - 1.0) * t ** power
    run.metrics["policy/kl"][i0:] *= factor[i0:]
    replay_controller(run, i0)
    return run.n - 1, ["policy/kl"], ["kl_level_shift", "kl_controller_off_target"]


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
    return i1, ["policy/entropy"], []


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
                                                                 "reward_saturation"]


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
    rm[i0:i1 + 1] -= r * mag * 0.5 * np.abs(rm[i0:i1 + 1] - rm[:i0].min())
    return i1, ["response/clipped_frac", "response/length_mean"], ["reward_hacking_length", "grpo_zero_variance",
                                                                   "reward_saturation"]


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
        run.params["plateau_magnitude"] = mag
        return run.n - 1, ["policy/loss"], ["grad_vanishing", "reward_saturation", "grpo_zero_variance"]
    name = "train/loss"
    frozen = run.baseline[name][i0]
    noise = run.metrics[name][i0:] / run.baseline[name][i0:]
    gap = (frozen - run.baseline[name][-1]) / max(1e-12, float(run.sigma[name][i0]))
    run.metrics[name][i0:] = frozen * noise
    for other in ("pref/reward_margin", "pref/reward_accuracy", "pref/rewards_chosen", "pref/rewards_rejected"):
        base = run.baseline[other]
        run.metrics[other][i0:] = base[i0] + (run.metrics[other][i0:] - base[i0:])
    run.params["plateau_magnitude"] = round(float(gap), 3)
    return run.n - 1, [name], ["grad_vanishing", "reward_saturation"]


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


_RL = ("ppo", "grpo")
_ALL = ("ppo", "grpo", "dpo")

CATALOG = {f.name: f for f in [
    FaultType("kl_spike", _RL, (5.0, 20.0), "x level", "KL jumps for 1-3 steps", _kl_spike),
    FaultType("kl_level_shift", _RL, (3, 4, 5, 6), "sigma", "KL steps up and stays", _kl_level_shift),
    FaultType("kl_controller_off_target", ("ppo",), (2.0, 4.0), "x drift pressure",
              "adaptive KL controller cannot hold the target", _kl_controller_off_target),
    FaultType("kl_drift", _RL, (3.0, 10.0), "x level after 150-600 steps", "KL runs away (linear or quadratic)",
              _kl_drift),
    FaultType("entropy_collapse", _RL, (0.7, 0.95), "fraction of level lost", "entropy falls and stays low",
              _entropy_collapse),
    FaultType("entropy_surge", _RL, (2.0, 4.0), "x level", "entropy rises suddenly", _entropy_surge),
    FaultType("reward_hacking_length", _RL, (1.8, 3.0), "x response length", "reward rises with response length",
              _reward_hacking_length),
    FaultType("reward_hacking_gold", _RL, (4.0, 10.0), "gold-reward sigma", "proxy reward up, gold reward down",
              _reward_hacking_gold),
    FaultType("reward_saturation", _RL, (0.8, 0.95), "fraction of reward spread lost", "reward pinned at a ceiling",
              _reward_saturation),
    FaultType("grad_explosion", _ALL, (10.0, 1000.0), "x level", "grad norm grows geometrically", _grad_explosion),
    FaultType("grad_vanishing", _ALL, (20.0, 1000.0), "1/x level", "grad norm falls towards zero",
              _grad_vanishing),
    FaultType("grad_spike", _ALL, (10.0, 50.0), "x level", "grad norm jumps for 1-3 steps", _grad_spike),
    FaultType("grad_imbalance", ("ppo",), (10.0, 50.0), "x value grad norm", "value gradients dominate",
              _grad_imbalance),
    FaultType("advantage_bias", _RL, (0.1, 0.5), "x advantage std", "advantage mean leaves zero", _advantage_bias),
    FaultType("advantage_collapse", _RL, (10.0, 100.0), "1/x advantage std", "advantage std collapses",
              _advantage_collapse),
    FaultType("clip_fraction_high", _RL, (0.25, 0.5), "clip fraction", "clip fraction rises and stays high",
              _clip_fraction_high),
    FaultType("ratio_breach", _RL, (2.0, 12.0), "mean importance ratio", "importance ratio leaves 1",
              _ratio_breach),
    FaultType("grpo_zero_variance", ("grpo",), (0.9, 1.0), "zero-std group fraction",
              "all groups get identical rewards", _grpo_zero_variance),
    FaultType("truncation", _RL, (0.5, 1.0), "clipped fraction", "completions hit the length cap", _truncation),
    FaultType("non_finite", _ALL, (1, 1, 5, 1000000), "steps of NaN/Inf", "NaN or Inf in a metric", _non_finite),
    FaultType("loss_plateau", _ALL, (0.0, 0.02), "PPO/GRPO: fraction of loss noise left; DPO: loss-noise sigma "
              "between frozen and expected final loss", "the loss stops moving", _loss_plateau,
              choose_onset=_plateau_onset),
    FaultType("lr_anomaly", _ALL, (10.0, 100.0), "x scheduled lr (up or down)", "lr leaves its schedule",
              _lr_anomaly),
    FaultType("memory_leak", _ALL, (0.1, 0.6), "x level by the end", "memory grows linearly", _memory_leak),
    FaultType("throughput_drop", _ALL, (0.3, 0.7), "fraction of throughput lost", "throughput falls and stays low",
              _throughput_drop),
    FaultType("logprob_mismatch", ("grpo",), (3.0, 10.0), "x level", "rollout/trainer log-probs drift apart",
              _logprob_mismatch),
]}

FAULT_TYPES = tuple(CATALOG)


def draw_magnitude(fault: FaultType, rng: np.random.Generator) -> float:
    m = fault.magnitude
    if len(m) > 2:
        return float(rng.choice(m))
    lo, hi = m
    if lo == hi:
        return float(lo)
    if lo > 0 and hi / lo >= 10:  # wide multiplicative ranges are drawn log-uniformly
        return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
    return float(rng.uniform(lo, hi))


def inject(run: SyntheticRun, fault_name: str, rng: np.random.Generator) -> Label:
    fault = CATALOG[fault_name]
    if run.algorithm not in fault.algorithms:
        raise ValueError("fault %s does not apply to %s runs" % (fault_name, run.algorithm))
    if fault.choose_onset is not None:
        i0 = fault.choose_onset(run, rng)
    else:
        lo, hi = fault.onset_range
        i0 = int(rng.integers(int(lo * run.n), int(hi * run.n)))
    magnitude = draw_magnitude(fault, rng)
    i1, metrics, also_accept = fault.inject(run, rng, i0, magnitude)
    if fault_name == "loss_plateau":
        magnitude = run.params["plateau_magnitude"]
    elif fault_name == "non_finite":
        magnitude = i1 - i0 + 1
    return Label(fault=fault_name, metrics=list(metrics), onset_step=int(run.steps[i0]),
                 end_step=int(run.steps[i1]), magnitude=float(magnitude), unit=fault.unit,
                 also_accept=sorted(set(also_accept) - {fault_name}))
