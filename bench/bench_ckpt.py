#!/usr/bin/env python3
"""Checkpoint diff benchmark: `rldk ckpt diff A B` against torch computing the same statistics, in the same run.

Writes two checkpoints of --size-mb each (a base model and a slightly perturbed copy, tensors named like a
transformer's: embedding, layers.N.{attn,mlp}, lm_head) into a temporary folder, once as fp32 safetensors, once as
bf16 safetensors and once as fp32 torch.save files, then times per format:
  - rldk: `rldk ckpt diff A B --json` (memory-mapped, --threads as given), wall and CPU seconds of the process;
  - torch: load both (safetensors.torch.load_file or torch.load) and compute, per tensor, the same statistics in
    float64 (L2 of the difference, both norms, dot product for the cosine, max |delta|, NaN/Inf counts) —
    the script a user would write, with torch's own threads (torch.get_num_threads());
  - torch f32: the same load and a lighter float32 computation (no masking or counts), the fastest a quick script gets.
Checkpoint bytes read per second are reported for both (both sides counted), per core for rldk, and the ratio.
The files are written and read once before timing, so both tools read from the page cache.

  python3 bench/bench_ckpt.py                       # 1024 MB per checkpoint, 2 threads
  python3 bench/bench_ckpt.py --size-mb 128 --repeat 1   # a quick run

Prints one Markdown table. RLDK_BIN or --rldk names the binary (default build/release/rldk, else `rldk` on PATH).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def fail(message):
    print(f"bench_ckpt: {message}", file=sys.stderr)
    sys.exit(2)


def make_state(size_mb, seed):
    """A transformer-shaped fp32 state dict of about size_mb MB (hidden 1024, vocab up to 32000 so that embedding and
    head take at most a quarter, as many blocks as fit)."""
    import torch
    g = torch.Generator().manual_seed(seed)
    budget = size_mb * 1024 * 1024 // 4
    hidden = 1024
    vocab = min(32000, max(1000, budget // (8 * hidden)))
    sd = {"model.embed_tokens.weight": torch.randn(vocab, hidden, generator=g)}
    budget -= vocab * hidden * 2  # embedding and lm_head
    block = 4 * hidden * hidden + 2 * hidden * 4 * hidden + 2 * hidden
    layers = max(1, budget // block)
    for i in range(layers):
        p = f"model.layers.{i}."
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            sd[p + f"self_attn.{name}.weight"] = torch.randn(hidden, hidden, generator=g) * 0.02
        sd[p + "mlp.up_proj.weight"] = torch.randn(4 * hidden, hidden, generator=g) * 0.02
        sd[p + "mlp.down_proj.weight"] = torch.randn(hidden, 4 * hidden, generator=g) * 0.02
        sd[p + "input_layernorm.weight"] = torch.ones(hidden)
        sd[p + "post_attention_layernorm.weight"] = torch.ones(hidden)
    sd["model.norm.weight"] = torch.ones(hidden)
    sd["lm_head.weight"] = torch.randn(vocab, hidden, generator=g) * 0.02
    return sd


def perturb(sd, seed):
    import torch
    g = torch.Generator().manual_seed(seed)
    out = {}
    for k, v in sd.items():
        out[k] = v + 1e-3 * torch.randn(v.shape, generator=g) if ".layers." in k or "lm_head" in k else v.clone()
    return out


def torch_stats(load, path_a, path_b):
    """The baseline: load both checkpoints, then the same per-tensor statistics in float64."""
    import torch
    a, b = load(path_a), load(path_b)
    stats = {}
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        if x.shape != y.shape:
            continue
        x64, y64 = x.reshape(-1).to(torch.float64), y.reshape(-1).to(torch.float64)
        fin = torch.isfinite(x64) & torch.isfinite(y64)
        xm, ym = torch.where(fin, x64, 0.0), torch.where(fin, y64, 0.0)
        d = xm - ym
        stats[name] = (d.norm().item(), xm.norm().item(), ym.norm().item(), torch.dot(xm, ym).item(),
                       d.abs().max().item() if d.numel() else 0.0, int(torch.isnan(x64).sum()),
                       int(torch.isinf(x64).sum()), int(torch.isnan(y64).sum()), int(torch.isinf(y64).sum()))
    return stats


def torch_stats_f32(load, path_a, path_b):
    """A lighter baseline: the same quantities in float32 (bf16 upcast to float32), no NaN/Inf masking or counts —
    what a quick script would do, less exact than rldk's double sums."""
    import torch
    a, b = load(path_a), load(path_b)
    stats = {}
    for name in sorted(set(a) & set(b)):
        x, y = a[name].float(), b[name].float()
        if x.shape != y.shape:
            continue
        d = x - y
        stats[name] = (d.norm().item(), x.norm().item(), y.norm().item(), torch.dot(x.reshape(-1), y.reshape(-1)).item(),
                       d.abs().max().item() if d.numel() else 0.0)
    return stats


def time_torch(load, path_a, path_b, repeat, fn=torch_stats):
    best = None
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        stats = fn(load, path_a, path_b)
        wall = time.perf_counter() - start
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if best is None or wall < best[0]:
            best = (wall, cpu, stats)
    return best


def time_rldk(binary, path_a, path_b, threads, repeat):
    best = None
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([binary, "ckpt", "diff", path_a, path_b, "--json", "--threads", str(threads)],
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 1):
            fail(f"rldk failed: {proc.stderr.strip()}")
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if best is None or wall < best[0]:
            best = (wall, cpu, json.loads(proc.stdout))
    return best


def check_agreement(doc, stats):
    """rldk and torch must report the same numbers (1e-9 relative) or the timing comparison means nothing."""
    worst = 0.0
    for t in doc["tensors"]:
        if t["name"] not in stats or "l2" not in t:
            continue
        l2, na, nb, dot, mx = stats[t["name"]][:5]
        for got, want in ((t["l2"], l2), (t["norm_a"], na), (t["norm_b"], nb), (t["max_abs_delta"], mx)):
            if want != 0:
                worst = max(worst, abs(got - want) / abs(want))
    if worst > 1e-9:
        fail(f"rldk and torch disagree: worst relative difference {worst:.3g}")
    return worst


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size-mb", type=int, default=1024, help="fp32 size of each checkpoint (bf16 is half)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--rldk", default=os.environ.get("RLDK_BIN"))
    p.add_argument("--formats", default="safetensors-f32,safetensors-bf16,torch-f32")
    p.add_argument("--keep", help="write the checkpoints here and keep them (default: a temporary folder)")
    args = p.parse_args()
    binary = args.rldk or (os.path.join(ROOT, "build", "release", "rldk")
                           if os.path.exists(os.path.join(ROOT, "build", "release", "rldk")) else shutil.which("rldk"))
    if not binary:
        fail("no rldk binary (give --rldk)")
    import torch
    from safetensors.torch import load_file, save_file

    work = args.keep or tempfile.mkdtemp(prefix="rldk_bench_ckpt_")
    os.makedirs(work, exist_ok=True)
    rows = []
    try:
        base = make_state(args.size_mb, 0)
        moved = perturb(base, 1)
        for fmt in args.formats.split(","):
            if fmt == "safetensors-f32":
                a, b = os.path.join(work, "a.safetensors"), os.path.join(work, "b.safetensors")
                save_file(base, a), save_file(moved, b)
                load = load_file
            elif fmt == "safetensors-bf16":
                a, b = os.path.join(work, "a_bf16.safetensors"), os.path.join(work, "b_bf16.safetensors")
                save_file({k: v.bfloat16() for k, v in base.items()}, a)
                save_file({k: v.bfloat16() for k, v in moved.items()}, b)
                load = load_file
            elif fmt == "torch-f32":
                a, b = os.path.join(work, "a.pt"), os.path.join(work, "b.pt")
                torch.save(base, a), torch.save(moved, b)
                load = lambda path: torch.load(path, map_location="cpu", weights_only=True)  # noqa: E731
            else:
                fail(f"unknown format {fmt}")
            nbytes = os.path.getsize(a) + os.path.getsize(b)
            time_rldk(binary, a, b, args.threads, 1)  # warm the page cache
            r_wall, r_cpu, doc = time_rldk(binary, a, b, args.threads, args.repeat)
            t_wall, t_cpu, stats = time_torch(load, a, b, args.repeat)
            f_wall, f_cpu, _ = time_torch(load, a, b, args.repeat, torch_stats_f32)
            worst = check_agreement(doc, stats)
            gb = nbytes / 1e9
            rows.append((fmt, nbytes / 1e6, len(doc["tensors"]), r_wall, r_cpu, gb / r_wall, gb / r_cpu, t_wall, t_cpu,
                         gb / t_wall, t_wall / r_wall, worst, f_wall, f_cpu, f_wall / r_wall))
            for path in (a, b):
                if not args.keep:
                    os.remove(path)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    import platform
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads); rldk --threads {args.threads}; best of {args.repeat}; page cache warm\n")
    print("| format | both files MB | tensors | rldk s (CPU s) | rldk GB/s | rldk GB/s per CPU s | torch f64 s (CPU s) "
          "| torch f64 GB/s | ratio | torch f32 s (CPU s) | ratio | max rel. diff vs f64 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r[0]} | {r[1]:.0f} | {r[2]} | {r[3]:.2f} ({r[4]:.2f}) | {r[5]:.2f} | {r[6]:.2f} | "
              f"{r[7]:.2f} ({r[8]:.2f}) | {r[9]:.2f} | {r[10]:.1f}x | {r[12]:.2f} ({r[13]:.2f}) | {r[14]:.1f}x | "
              f"{r[11]:.1e} |")


if __name__ == "__main__":
    main()
