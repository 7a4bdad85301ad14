"""Clean PPO, GRPO and DPO runs with the shapes real logs have (see docs/detector-benchmark.md, "Clean runs").

Every parameter is drawn per run from a range, so detectors meet many scales, noise levels and schedules rather
than one curve. Values follow the ranges reported in public trainer logs: per-token KL of 0.01-0.2 under an
adaptive controller, entropy falling fast early then flattening, pre-clip grad norms of 0.1-3 with heavy tails,
clip fractions of a few percent, GRPO zero-std group fractions that follow accuracy, DPO losses starting at ln 2.
"""
from __future__ import annotations

import math

import numpy as np

from .noise import ar1_student_t, periodic_bumps, saturating, warmup_cosine
from .synthetic_run import SyntheticRun

ALGORITHMS = ("ppo", "grpo", "dpo")

# Held-out ("gold") reward: logged only at eval steps, under the eval/ namespace as HF-style trainers do.
GOLD_REWARD = "eval/reward/mean"

# Relative (log-scale) noise of the per-token KL under the controller.
KL_NOISE = 0.15


# Mean response length at the start, as a fraction of the length cap: most runs start at 15-40% of it; a run that
# must have room to grow 5x (a length-growth fault) starts at 4.5-12% (a 4096-token cap and 200-token answers).
LENGTH_START = (0.15, 0.4)
LENGTH_HEADROOM_SCALE = 0.3


def generate(algorithm: str, run_id: str, n_steps: int, rng: np.random.Generator,
             length_headroom: bool = False) -> SyntheticRun:
    """A clean run of `n_steps` optimizer steps (one row per step; `SyntheticRun.subsample` makes the logged rows).
    `length_headroom` starts the completions far below the length cap (the same random draws, scaled), for faults
    that grow them several-fold."""
    run = SyntheticRun(run_id=run_id, algorithm=algorithm, steps=np.arange(1, n_steps + 1))
    run.params["length_headroom"] = length_headroom
    {"ppo": _ppo, "grpo": _grpo, "dpo": _dpo}[algorithm](run, rng)
    return run


def _u(rng, lo, hi):
    return float(rng.uniform(lo, hi))


def _learning_rate(run, rng, peak_lo, peak_hi):
    peak = math.exp(_u(rng, math.log(peak_lo), math.log(peak_hi)))
    warmup = int(rng.integers(0, max(2, min(100, run.n // 10))))
    if rng.random() < 0.3:  # constant after warmup, the TRL default for many RL recipes
        lr = warmup_cosine(run.steps, peak, warmup, run.n, 1.0)
    else:
        lr = warmup_cosine(run.steps, peak, warmup, run.n, _u(rng, 0.0, 0.2))
    run.set_exact("policy/lr", lr)
    run.params["lr_warmup"] = warmup


def _system(run, rng, tokens_per_step):
    """Memory and speed: flat memory with allocator jitter, throughput with periodic eval/checkpoint stalls."""
    s = run.steps
    memory = _u(rng, 20.0, 70.0)
    run.add(rng, "perf/max_memory_allocated_gb", memory, memory * 0.004, phi=0.9, df=6)
    step_time = _u(rng, 5.0, 60.0)
    eval_every = int(rng.choice([25, 50, 100, 200]))
    run.params["eval_every"] = eval_every
    # A checkpoint or eval pass makes every eval_every-th step slower: seasonality a detector must tolerate.
    stall = np.where(s % eval_every == 0, _u(rng, 0.3, 1.0), 0.0)
    st = run.add(rng, "perf/step_time", step_time * (1.0 + stall), 0.05, phi=0.5, df=4, relative=True)
    run.metrics["perf/throughput"] = tokens_per_step / st
    run.baseline["perf/throughput"] = tokens_per_step / (step_time * (1.0 + stall))
    run.sigma["perf/throughput"] = run.baseline["perf/throughput"] * 0.05
    return eval_every


def _gold(run, rng, progress, eval_every, gain):
    """The held-out reward tracks the proxy's progress on a clean run, logged at eval steps only."""
    s = run.steps
    gold = run.add(rng, GOLD_REWARD, _u(rng, -0.5, 0.5) + gain * _u(rng, 0.4, 0.9) * progress, gain * 0.03,
                   phi=0.0, df=8)
    # Every step's value is kept for fault injectors (a gold fault may need a denser eval cadence); the log has
    # only the eval steps.
    run.params["gold_every_step"] = gold.copy()
    gold[s % eval_every != 0] = np.nan


def _ppo(run: SyntheticRun, rng: np.random.Generator) -> None:
    n, s = run.n, run.steps.astype(float)
    _learning_rate(run, rng, 3e-7, 3e-5)

    # Adaptive KL controller (Ziegler et al.): beta *= 1 + clip(kl/target - 1, +-0.2) * batch/horizon. The policy's
    # drift pressure grows as it learns; the controller raises beta until KL sits near the target.
    target = _u(rng, 0.03, 0.12)
    gain = _u(rng, 0.005, 0.03)
    pressure = target * saturating(s, _u(rng, 0.2, 0.6), _u(rng, 1.3, 3.0), n * _u(rng, 0.05, 0.3))
    kl_noise = KL_NOISE * ar1_student_t(rng, n, 0.5, 4)
    beta0 = _u(rng, 0.02, 0.2)
    kl, beta = _kl_closed_loop(pressure, kl_noise, beta0, target, gain)
    # The noise is inside the loop (the controller reacts to the noisy KL it observes), so set the column directly.
    run.metrics["policy/kl"] = kl
    run.baseline["policy/kl"] = pressure * beta0 / beta
    run.sigma["policy/kl"] = run.baseline["policy/kl"] * KL_NOISE
    run.set_exact("policy/kl_coef", beta)
    run.params.update(kl_target=target, kl_gain=gain, kl_pressure=pressure, kl_beta0=beta0)

    h0, h_inf = _u(rng, 1.2, 3.0), _u(rng, 0.3, 1.0)
    run.add(rng, "policy/entropy", saturating(s, h0, h_inf * h0 / 2.5, n * _u(rng, 0.05, 0.4)), 0.03,
            phi=0.7, df=5, relative=True)

    r0, gain_r = _u(rng, -1.0, 0.5), _u(rng, 0.5, 2.5)
    progress = 1.0 - np.exp(-s / (n * _u(rng, 0.1, 0.5)))
    epoch = int(rng.integers(n // 4 + 1, n + 1))
    run.params["epoch_steps"] = epoch
    reward_trend = r0 + gain_r * progress + periodic_bumps(run.steps, epoch, max(1, epoch // 20), 0.05 * gain_r)
    run.add(rng, "reward/mean", reward_trend, gain_r * _u(rng, 0.03, 0.06), phi=0.3, df=4)
    run.add(rng, "reward/std", gain_r * _u(rng, 0.5, 1.0) * (1.0 - 0.3 * progress), 0.06, phi=0.3, df=5,
            relative=True)
    eval_every = _system(run, rng, tokens_per_step=_u(rng, 2e5, 2e6))
    _gold(run, rng, progress, eval_every, gain_r)

    v0 = _u(rng, 0.2, 3.0)
    run.add(rng, "value/loss", saturating(s, v0, v0 * _u(rng, 0.05, 0.3), n * _u(rng, 0.05, 0.3)), 0.2,
            phi=0.4, df=3, relative=True)
    run.add(rng, "policy/loss", _u(rng, -0.02, 0.01), 0.01, phi=0.1, df=4)
    g0 = _u(rng, 0.2, 2.0)
    run.add(rng, "policy/grad_norm", g0 * (1.0 - 0.3 * progress), 0.25, phi=0.3, df=3, relative=True)
    run.add(rng, "value/grad_norm", g0 * _u(rng, 1.0, 5.0) * saturating(s, 1.0, 0.5, n * 0.2), 0.25,
            phi=0.3, df=3, relative=True)
    c0 = _u(rng, 0.03, 0.15)
    run.add(rng, "policy/clip_frac", c0 * (1.0 + 0.3 * progress), c0 * 0.12, phi=0.5, df=5, lo=0.0, hi=1.0)
    run.add(rng, "policy/importance_ratio", 1.0, 0.003, phi=0.3, df=4)
    run.add(rng, "advantage/mean", 0.0, 0.02, phi=0.2, df=5)
    run.add(rng, "advantage/std", _u(rng, 0.85, 1.0), 0.02, phi=0.3, df=5, relative=True)
    _lengths(run, rng, progress)


# TRL's GRPOTrainer logs each reward function's mean next to the total (rewards/<name>); the synthetic reward is one
# function's, a correctness check. Added once the run's faults are in (corpus.build), from the total they left.
REWARD_COMPONENT = "rewards/correctness"


def add_reward_components(run: SyntheticRun) -> None:
    if run.algorithm == "grpo" and REWARD_COMPONENT not in run.metrics:
        run.set_exact(REWARD_COMPONENT, run.metrics["reward/mean"].copy())


def _grpo(run: SyntheticRun, rng: np.random.Generator) -> None:
    n, s = run.n, run.steps.astype(float)
    _learning_rate(run, rng, 1e-7, 3e-6)
    # GRPO: fixed beta, KL grows from ~0 as the policy leaves the reference (no controller to hold it).
    beta = float(rng.choice([0.0, 0.001, 0.01, 0.04]))
    run.set_exact("policy/kl_coef", np.full(n, beta))
    kl_end = _u(rng, 0.005, 0.1)
    run.add(rng, "policy/kl", kl_end * (1.0 - np.exp(-s / (n * _u(rng, 0.1, 0.5)))) + kl_end * 0.02, 0.15,
            phi=0.5, df=4, relative=True)

    h0 = _u(rng, 0.4, 1.5)
    run.add(rng, "policy/entropy", saturating(s, h0, h0 * _u(rng, 0.3, 0.7), n * _u(rng, 0.05, 0.4)), 0.04,
            phi=0.6, df=5, relative=True)

    # Accuracy-style reward in [0, 1]; group size G sets the fraction of groups with identical rewards.
    acc0, acc1 = _u(rng, 0.05, 0.4), _u(rng, 0.5, 0.85)
    progress = 1.0 - np.exp(-s / (n * _u(rng, 0.1, 0.5)))
    accuracy = acc0 + (acc1 - acc0) * progress
    run.params["accuracy"] = accuracy
    group = int(rng.choice([4, 8, 16]))
    run.params["group_size"] = group
    acc = run.add(rng, "reward/mean", accuracy, 0.025, phi=0.3, df=5, lo=0.0, hi=1.0)
    run.add(rng, "reward/std", np.sqrt(np.clip(accuracy * (1 - accuracy), 1e-4, None)), 0.04, phi=0.3, df=5,
            relative=True)
    zero_std = accuracy ** group + (1.0 - accuracy) ** group
    run.add(rng, "reward/frac_zero_std", zero_std, 0.03, phi=0.3, df=6, lo=0.0, hi=1.0)
    run.add(rng, "reward/group_std", np.sqrt(np.clip(accuracy * (1 - accuracy), 1e-4, None)) * (1 - zero_std),
            0.05, phi=0.3, df=5, relative=True)
    eval_every = _system(run, rng, tokens_per_step=_u(rng, 5e4, 1e6))
    _gold(run, rng, progress, eval_every, 1.0)

    run.add(rng, "policy/loss", 0.0, _u(rng, 0.002, 0.02), phi=0.1, df=4)
    run.add(rng, "policy/grad_norm", _u(rng, 0.05, 0.6) * (1.0 - 0.3 * progress), 0.3, phi=0.3, df=3,
            relative=True)
    if rng.random() < 0.3:
        # num_iterations = 1: the update is exactly on-policy, clip fraction is identically zero (normal, #6).
        run.set_exact("policy/clip_frac", np.zeros(n))
        run.sigma["policy/clip_frac"] = np.full(n, 1e-3)
    else:
        c0 = _u(rng, 0.001, 0.03)
        run.add(rng, "policy/clip_frac", c0, c0 * 0.2, phi=0.5, df=5, lo=0.0, hi=1.0)
    run.add(rng, "policy/importance_ratio", 1.0, 0.002, phi=0.3, df=4)
    run.add(rng, "rollout/is_ratio_max", _u(rng, 1.2, 2.0), 0.1, phi=0.3, df=3, relative=True)
    run.add(rng, "rollout/logprob_diff", _u(rng, 0.005, 0.015), 0.05, phi=0.6, df=5, relative=True)
    run.add(rng, "advantage/mean", 0.0, 0.01, phi=0.2, df=5)
    run.add(rng, "advantage/std", 0.95 * (1.0 - zero_std), 0.03, phi=0.3, df=5, relative=True)
    _lengths(run, rng, progress)


def _lengths(run, rng, progress):
    """Response length drifts with training; a few completions hit the cap (clipped fraction of a few percent)."""
    cap = int(rng.choice([256, 512, 1024, 2048, 4096]))
    if run.params.get("length_headroom"):
        cap = max(cap, 1024)  # answers that grow 5x come from runs with room for long ones
    run.params["max_length"] = cap
    start = cap * _u(rng, *LENGTH_START) * (LENGTH_HEADROOM_SCALE if run.params.get("length_headroom") else 1.0)
    mean_len = start * (1.0 + _u(rng, -0.2, 0.5) * progress)
    run.add(rng, "response/length_mean", mean_len, 0.04, phi=0.6, df=5, relative=True, hi=cap)
    run.add(rng, "response/length_max", np.minimum(cap, mean_len * 2.5), 0.05, phi=0.3, df=5, relative=True,
            hi=cap)
    clipped = _u(rng, 0.002, 0.03)
    run.add(rng, "response/clipped_frac", clipped, clipped * 0.3, phi=0.4, df=5, lo=0.0, hi=1.0)


def _dpo(run: SyntheticRun, rng: np.random.Generator) -> None:
    n, s = run.n, run.steps.astype(float)
    _learning_rate(run, rng, 1e-7, 1e-6)
    epochs = int(rng.integers(1, 4))
    epoch_len = math.ceil(n / epochs)
    run.params["epoch_steps"] = epoch_len
    run.set_exact("train/epoch", s / epoch_len)
    # Each new epoch revisits the same pairs: the loss steps down at the boundary (memorisation), a real seasonality.
    epoch_index = (run.steps - 1) // epoch_len
    beta = _u(rng, 0.05, 0.5)
    margin_end = _u(rng, 0.5, 6.0)
    progress = 1.0 - np.exp(-s / (n * _u(rng, 0.05, 0.3)))
    margin = margin_end * (progress + 0.15 * epoch_index)
    chosen = -0.2 * margin * _u(rng, 0.0, 1.0)  # likelihood displacement: chosen often falls too
    rejected = chosen - margin
    run.add(rng, "pref/reward_margin", margin, 0.15 * margin_end, phi=0.3, df=4)
    run.add(rng, "pref/rewards_chosen", chosen, 0.1 * margin_end, phi=0.3, df=4)
    run.add(rng, "pref/rewards_rejected", rejected, 0.1 * margin_end, phi=0.3, df=4)
    scaled = margin / max(1e-9, margin_end)
    run.add(rng, "pref/reward_accuracy", 0.5 + 0.45 * np.tanh(1.5 * scaled), 0.03, phi=0.2, df=6, lo=0.0, hi=1.0)
    run.add(rng, "train/loss", np.log1p(np.exp(-margin)) + 0.05, 0.06, phi=0.3, df=4, relative=True)
    lp0 = _u(rng, -400.0, -50.0)
    run.add(rng, "pref/logps_chosen", lp0 + chosen / beta, abs(lp0) * 0.05, phi=0.2, df=5)
    run.add(rng, "pref/logps_rejected", lp0 * 1.1 + rejected / beta, abs(lp0) * 0.05, phi=0.2, df=5)
    run.add(rng, "policy/grad_norm", _u(rng, 5.0, 60.0) * (1.0 - 0.5 * progress), 0.3, phi=0.3, df=3,
            relative=True)
    _system(run, rng, tokens_per_step=_u(rng, 5e4, 5e5))


def _kl_closed_loop(pressure, noise, beta0, target, gain, start=0, beta_start=None, responsiveness=None):
    """Observed KL under the adaptive controller. `responsiveness` (per step, default 1) is how strongly KL
    follows beta: a value near 0 models a policy the penalty no longer restrains."""
    n = pressure.size
    kl = np.empty(n)
    beta = np.empty(n)
    b = beta0 if beta_start is None else beta_start
    for i in range(start, n):
        r = 1.0 if responsiveness is None else responsiveness[i]
        kl[i] = pressure[i] * (beta0 / b) ** r * math.exp(noise[i] - 0.5 * KL_NOISE * KL_NOISE)
        beta[i] = b
        b *= 1.0 + min(0.2, max(-0.2, kl[i] / target - 1.0)) * gain
    return kl, beta


def replay_controller(run: SyntheticRun, start: int) -> None:
    """A PPO controller reads the KL the run logged: after an injected KL fault, recompute beta from `start` on,
    open loop (the injected KL is what the trainer saw)."""
    if "kl_target" not in run.params:
        return
    kl = run.metrics["policy/kl"]
    beta = run.metrics["policy/kl_coef"]
    b = beta[start]
    for i in range(start, run.n):
        beta[i] = b
        value = kl[i]
        if math.isfinite(value):
            b *= 1.0 + min(0.2, max(-0.2, value / run.params["kl_target"] - 1.0)) * run.params["kl_gain"]
