#!/usr/bin/env python3
"""Writes the scan fixtures: a clean PPO-style run of 1,000 steps and a doctored copy (stdlib only, seeded).

Shapes follow the older tool's test fixtures (described in words, not copied): KL = 0.05 + 0.01 sin(step/100)
with small noise, kl_coef 0.1, entropy 2.0 + 0.1 cos(step/50), noisy advantage mean around 0 (std 1), policy and
value grad norms around 0.5 and 0.3, a slowly rising reward. The doctored copy is identical except that from step
800 the KL jumps to about 0.3 +- 0.1 while kl_coef stays flat (a stuck controller).

  python3 examples/scan/make_scan_examples.py          # -> examples/scan/ppo_clean.jsonl, ppo_kl_shift.jsonl
"""

from __future__ import annotations

import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 1000
SHIFT_STEP = 800


def rows(doctored: bool) -> list[dict]:
    rng = random.Random(20260101)
    out = []
    for step in range(STEPS):
        kl = 0.05 + 0.01 * math.sin(step / 100) + rng.gauss(0, 0.002)
        shifted_kl = 0.3 + rng.uniform(-0.1, 0.1)  # drawn for both runs so the rest of the stream stays identical
        if doctored and step >= SHIFT_STEP:
            kl = shifted_kl
        out.append({
            "step": step,
            "kl": round(kl, 6),
            "kl_coef": 0.1,
            "entropy": round(2.0 + 0.1 * math.cos(step / 50) + rng.gauss(0, 0.01), 6),
            "advantage_mean": round(rng.gauss(0, 0.05), 6),
            "advantage_std": round(1.0 + rng.gauss(0, 0.02), 6),
            "grad_norm_policy": round(0.5 * math.exp(rng.gauss(0, 0.1)), 6),
            "grad_norm_value": round(0.3 * math.exp(rng.gauss(0, 0.1)), 6),
            "reward_mean": round(0.2 + 0.3 * step / STEPS + rng.gauss(0, 0.03), 6),
        })
    return out


def write(name: str, records: list[dict]) -> None:
    path = os.path.join(HERE, name)
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    print(f"wrote {path} ({len(records)} steps)")


if __name__ == "__main__":
    write("ppo_clean.jsonl", rows(False))
    write("ppo_kl_shift.jsonl", rows(True))
