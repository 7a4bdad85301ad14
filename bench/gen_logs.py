#!/usr/bin/env python3
"""Generates large synthetic RL training logs for the read benchmarks (stdlib only, deterministic).

Two shapes, the two that matter for reading speed:

  narrow  long-form JSONL, one event per line, exactly as rldk's EventWriter writes it:
            {"name":"policy/kl","run_id":"bench","step":123,"time":"2026-01-01T00:00:00.000Z","value":0.0123}
          A handful of metric names, a restart (the step goes back to an earlier checkpoint part-way through) and a
          few NaN values, as real runs have.
  wide    one JSON object per step with many metrics, as TRL / verl loggers write it (json.dumps style, ", " and
          ": " separators, full-precision floats):
            {"step": 5, "actor/pg_loss": 0.0123..., "critic/score/mean": 0.41..., ...}

The same seed and size always give the same bytes. Values come from per-metric pools of pre-formatted numbers that
are indexed with a step-dependent stride: formatting every float with repr() would dominate generation time, and
the reader's cost depends on the shape of the numbers, not on their exact sequence.

Usage:
  python3 bench/gen_logs.py narrow --events 10000000            # -> bench/data/narrow_10000000.jsonl
  python3 bench/gen_logs.py wide --steps 200000 --metrics 70     # -> bench/data/wide_200000x70.jsonl
  python3 bench/gen_logs.py all                                  # both, default sizes
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

DEFAULT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
DEFAULT_SEED = 20260101
START_EPOCH = 1767225600.0  # 2026-01-01T00:00:00Z
POOL = 4099  # values per metric pool (prime, so that strides visit every entry)
CHUNK_BYTES = 8 << 20

# Narrow (long-form) metric names: what a GRPO/PPO script logs with rldk's EventWriter, canonical names.
NARROW_METRICS = [
    ("policy/kl", 0.02, 0.01),
    ("policy/entropy", 1.8, 0.3),
    ("policy/loss", 0.05, 0.08),
    ("reward/mean", 0.4, 0.2),
    ("reward/std", 0.3, 0.05),
    ("policy/grad_norm", 0.9, 0.4),
    ("policy/clip_frac", 0.08, 0.03),
    ("response/length_mean", 412.0, 60.0),
]

# Wide metric names: verl's console/file logger keys, then TRL-style keys, then per-task extras to reach the count.
# Every name a distinct metric: a record with two names for one metric (verl's timing_s/step and
# perf/time_per_step) gives it one point, which the baselines, counting every value, would not match.
WIDE_BASE = [
    "actor/pg_loss", "actor/pg_clipfrac", "actor/pg_clipfrac_lower", "actor/ppo_kl", "actor/entropy",
    "actor/entropy_loss", "actor/kl_loss", "actor/kl_coef", "actor/grad_norm", "actor/lr",
    "actor/reward_kl_penalty", "critic/values/max", "critic/score/mean", "critic/score/max",
    "critic/score/min", "critic/rewards/mean", "critic/rewards/max", "critic/rewards/min",
    "critic/advantages/mean", "critic/advantages/max", "critic/advantages/min", "critic/returns/mean",
    "critic/returns/max", "critic/returns/min", "critic/values/mean", "critic/vf_loss", "critic/vf_clipfrac",
    "critic/vf_explained_var", "critic/grad_norm", "critic/lr", "response_length/mean", "response_length/max",
    "response_length/min", "response_length/clip_ratio", "prompt_length/mean", "prompt_length/max",
    "prompt_length/min", "prompt_length/clip_ratio", "timing_s/gen", "timing_s/ref", "timing_s/values",
    "timing_s/adv", "timing_s/update_critic", "timing_s/update_actor", "timing_s/step",
    "timing_per_token_ms/gen", "timing_per_token_ms/update_actor", "perf/total_num_tokens", "timing_s/testing",
    "perf/throughput", "perf/max_memory_allocated_gb", "perf/max_memory_reserved_gb", "perf/cpu_memory_used_gb",
    "perf/mfu/actor", "global_seqlen/mean", "global_seqlen/max", "global_seqlen/min", "global_seqlen/balanced_max",
    "global_seqlen/balanced_min", "global_seqlen/minmax_diff", "training/rollout_probs_diff_mean", "training/epoch",
    "objective/kl", "objective/entropy", "timing_per_token_ms/ref", "objective/non_score_reward", "train/loss",
    "timing_per_token_ms/adv", "timing_s/save_checkpoint", "critic/values/min",
]


def fail(message: str) -> None:
    print(f"gen_logs: {message}", file=sys.stderr)
    sys.exit(2)


def iso_time(epoch: float) -> str:
    ms = int(round(epoch * 1000.0))
    tm = time.gmtime(ms // 1000)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (tm[0], tm[1], tm[2], tm[3], tm[4], tm[5], ms % 1000)


def value_pool(rng: random.Random, mean: float, spread: float, integral: bool, nan_every: int = 0) -> list[str]:
    """Pre-formatted values. Floats use repr(), the shortest round-trip form, as json.dumps and EventWriter do."""
    out = []
    for i in range(POOL):
        v = rng.gauss(mean, spread)
        if integral:
            out.append(repr(float(round(abs(v)))))
        else:
            out.append(repr(v))
    if nan_every:
        for i in range(nan_every // 2, POOL, nan_every):
            out[i] = "NaN"
    return out


class ChunkWriter:
    """Collects text and writes it in large chunks: one write per several MB keeps generation I/O-cheap."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tmp = path + ".tmp"
        self.f = open(self.tmp, "w", encoding="ascii", newline="\n")
        self.parts: list[str] = []
        self.size = 0
        self.total = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size >= CHUNK_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            self.f.write("".join(self.parts))
            self.total += self.size
            self.parts = []
            self.size = 0

    def close(self) -> int:
        self.flush()
        self.f.close()
        os.replace(self.tmp, self.path)  # never leave a half-written file under the final name
        return self.total


def gen_narrow(path: str, events: int, seed: int, run_id: str = "bench") -> dict:
    """Long-form events, EventWriter's line format (keys sorted, no spaces)."""
    rng = random.Random(seed)
    names = NARROW_METRICS
    k = len(names)
    steps = max(1, -(-events // k))
    # The run restarts from a checkpoint 60% of the way through, going back 10% of the steps.
    restart_at = int(steps * 0.6)
    resume_from = restart_at - max(1, steps // 10)
    # A few NaN values, in the loss only (one pool entry in ~1000: about events/8/1000 in the file).
    pools = [value_pool(rng, mean, spread, name.startswith("response/"), nan_every=1000 if name == "policy/loss" else 0)
             for name, mean, spread in names]
    prefixes = ['{"name":"%s","run_id":"%s","step":' % (name, run_id) for name, _, _ in names]
    w = ChunkWriter(path)
    written = 0
    logical = 0  # the step the trainer logs; jumps back once
    stride = [7 + 2 * i for i in range(k)]
    t = START_EPOCH
    for s in range(steps):
        if s == restart_at:
            logical = resume_from
        t += 0.75  # seconds per step
        tail = ',"time":"%s","value":' % iso_time(t)
        step_text = str(logical)
        n = min(k, events - written)
        lines = []
        for i in range(n):
            lines.append(prefixes[i] + step_text + tail + pools[i][(s * stride[i] + i) % POOL] + "}\n")
        w.add("".join(lines))
        written += n
        logical += 1
    size = w.close()
    return {"path": path, "bytes": size, "events": written, "lines": written}


def wide_names(metrics: int) -> list[str]:
    names = list(WIDE_BASE[:metrics])
    i = 0
    while len(names) < metrics:  # extra per-task reward breakdowns, as multi-task runs log
        names.append("val/test_score/task_%03d" % i)
        i += 1
    return names


def gen_wide(path: str, steps: int, metrics: int, seed: int) -> dict:
    """One object per step, json.dumps style; step first (TRL/verl put it first or last, the reader copes)."""
    rng = random.Random(seed + 1)
    names = wide_names(metrics)
    pools = []
    for name in names:
        integral = any(p in name for p in ("length/", "seqlen/", "num_tokens"))
        mean = 300.0 if integral else rng.uniform(-0.5, 2.0)
        spread = 50.0 if integral else abs(mean) * 0.3 + 0.01
        pools.append(value_pool(rng, mean, spread, integral))
    keys = ['"%s": ' % n for n in names]
    w = ChunkWriter(path)
    stride = [5 + 2 * i for i in range(len(names))]
    lines = []
    for s in range(steps):
        parts = ['{"step": %d' % s]
        for i, key in enumerate(keys):
            parts.append(key + pools[i][(s * stride[i] + i) % POOL])
        lines.append(", ".join(parts) + "}\n")
        if len(lines) >= 512:
            w.add("".join(lines))
            lines = []
    w.add("".join(lines))
    size = w.close()
    return {"path": path, "bytes": size, "events": steps * len(names), "lines": steps}


def narrow_path(directory: str, events: int) -> str:
    return os.path.join(directory, "narrow_%d.jsonl" % events)


def wide_path(directory: str, steps: int, metrics: int) -> str:
    return os.path.join(directory, "wide_%dx%d.jsonl" % (steps, metrics))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("shape", choices=["narrow", "wide", "all"])
    p.add_argument("--events", type=int, default=10_000_000, help="narrow: number of events (default 10M)")
    p.add_argument("--steps", type=int, default=200_000, help="wide: number of steps (default 200k)")
    p.add_argument("--metrics", type=int, default=70, help="wide: metrics per step (default 70)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--out-dir", default=DEFAULT_DIR, help="output folder (default bench/data)")
    p.add_argument("--output", help="exact output path (one shape only)")
    args = p.parse_args(argv)
    if args.events < 1 or args.steps < 1 or args.metrics < 1:
        fail("sizes must be positive")
    if args.output and args.shape == "all":
        fail("--output needs one shape")
    os.makedirs(args.out_dir, exist_ok=True)
    started = time.perf_counter()
    results = []
    if args.shape in ("narrow", "all"):
        results.append(gen_narrow(args.output or narrow_path(args.out_dir, args.events), args.events, args.seed))
    if args.shape in ("wide", "all"):
        out = args.output or wide_path(args.out_dir, args.steps, args.metrics)
        results.append(gen_wide(out, args.steps, args.metrics, args.seed))
    for r in results:
        print("%s: %.1f MB, %d events, %d lines" % (r["path"], r["bytes"] / 1e6, r["events"], r["lines"]))
    print("generated in %.1f s" % (time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
