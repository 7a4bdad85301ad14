"""Noise and schedule shapes that real training curves have: autocorrelated, heavy-tailed noise, warmup + cosine
learning rates, saturating and decaying trends.

Detectors that assume i.i.d. Gaussian noise over-alarm on real logs (consecutive minibatch metrics are correlated
and a few steps per thousand are far outliers), so the benchmark's clean runs must carry both properties.
"""
from __future__ import annotations

import math

import numpy as np

# Student-t noise is truncated here (in units of its standard deviation): real logs have occasional 4-6 sigma
# steps, but a clean step as extreme as a documented fault (a 10x grad spike) would make the labels wrong.
TAIL_LIMIT = 6.0

# Block length of the vectorised AR(1) filter; any value gives the same numbers, this one is fast.
_AR_BLOCK = 64


def student_t_unit(rng: np.random.Generator, n: int, df: float) -> np.ndarray:
    """Student-t draws rescaled to unit variance (df > 2), so `sigma` keeps meaning standard deviation."""
    if df <= 2:
        raise ValueError("Student-t noise needs df > 2 to have a finite variance, got %r" % df)
    return np.clip(rng.standard_t(df, n) * math.sqrt((df - 2.0) / df), -TAIL_LIMIT, TAIL_LIMIT)


def ar1(innovations: np.ndarray, phi: float) -> np.ndarray:
    """x_t = phi * x_{t-1} + e_t, computed block-wise with a lower-triangular power matrix instead of a Python loop."""
    n = innovations.size
    if phi == 0.0 or n == 0:
        return innovations.copy()
    k = np.arange(_AR_BLOCK)
    powers = np.tril(phi ** (k[:, None] - k[None, :]).clip(min=0)) * (k[:, None] >= k[None, :])
    carry_gain = phi ** (k + 1)
    pad = (-n) % _AR_BLOCK
    blocks = np.concatenate([innovations, np.zeros(pad)]).reshape(-1, _AR_BLOCK)
    within = blocks @ powers.T  # each block filtered as if it started from zero
    out = np.empty_like(within)
    carry = 0.0
    for i in range(within.shape[0]):
        out[i] = within[i] + carry_gain * carry
        carry = out[i, -1]
    return out.reshape(-1)[:n]


def ar1_student_t(rng: np.random.Generator, n: int, phi: float, df: float) -> np.ndarray:
    """Stationary AR(1) noise with Student-t innovations and unit marginal standard deviation."""
    innovations = student_t_unit(rng, n, df) * math.sqrt(1.0 - phi * phi)
    x = ar1(innovations, phi)
    # Start in the stationary distribution rather than at zero, so the first steps are not unnaturally quiet.
    x += (phi ** np.arange(1, n + 1)) * rng.standard_normal()
    return np.clip(x, -TAIL_LIMIT, TAIL_LIMIT)


def warmup_cosine(steps: np.ndarray, peak: float, warmup: int, total: int, floor_ratio: float) -> np.ndarray:
    """Linear warmup to `peak`, then cosine decay to `floor_ratio * peak` at `total` (the Hugging Face default shape)."""
    t = steps.astype(float)
    lr = np.empty_like(t)
    warm = t <= warmup
    lr[warm] = peak * t[warm] / max(1, warmup)
    progress = np.clip((t[~warm] - warmup) / max(1, total - warmup), 0.0, 1.0)
    lr[~warm] = peak * (floor_ratio + (1.0 - floor_ratio) * 0.5 * (1.0 + np.cos(math.pi * progress)))
    return lr


def saturating(steps: np.ndarray, start: float, end: float, tau: float) -> np.ndarray:
    """start -> end with time constant tau: reward curves, KL pressure, learned-value fits."""
    return end + (start - end) * np.exp(-steps / tau)


def periodic_bumps(steps: np.ndarray, period: int, width: int, height: float) -> np.ndarray:
    """A bump of `height` during the first `width` steps of every period (data-epoch boundaries, eval pauses)."""
    if period <= 0:
        return np.zeros(steps.size)
    return np.where((steps % period) < width, height, 0.0)
