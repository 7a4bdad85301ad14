#!/usr/bin/env python3
"""rldk contamination throughput and planted-contamination recall, against the Python baselines a user would pick,
measured in the same run on the same generated corpus (bench/contamination/planted.py):

  - exact n-gram screening: `rldk contamination --method ngram` (GPT-3 rule, 13-grams here) vs a pure-Python n-gram
    set (the eval set's 13-grams in a set, every training n-gram looked up: what lm-eval-harness's janitor does in
    Python);
  - MinHash P=128 on word 5-gram shingles: `rldk contamination --method minhash` (signatures of every training
    document, LSH lookup, exact-Jaccard confirmation) vs datasketch's MinHash.update_batch per document (signatures
    only), each of datasketch's two schemes against rldk's run of the same scheme: legacy (rldk's default, methods.md)
    and affine32 (datasketch 2.0's default).

rldk runs end to end (reading the files, tokenising, hashing, probing, the report) on 1 thread (the per-core rate)
and on every core. The baselines run on a slice of the corpus (--baseline-mb) since they are slow; rates are MB/s of
training text. A memory-read rate (NumPy sum over a 1 GB array) is printed as the ceiling a streaming scan can reach.
The planted contamination is checked on the full run: every planted item found with its span and the expected
verdict, the clean eval set's findings counted (false positives).

  python3 bench/contamination/bench_contamination.py [--train-mb 200] [--dir DIR] [--keep]
  python3 bench/contamination/bench_contamination.py --train-mb 1024    # the acceptance run (>= 1 GB)

Prints a Markdown table and writes DIR/bench_contamination.json.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import planted  # noqa: E402

WORD = re.compile(r"[a-z0-9]+")


def rldk_binary():
    candidate = os.path.join(os.path.dirname(sys.executable), "rldk")
    return candidate if os.path.exists(candidate) else shutil.which("rldk")


def corpus_bytes(train_dir):
    return sum(os.path.getsize(os.path.join(train_dir, f)) for f in os.listdir(train_dir))


def run_rldk(train_dir, evals, method, threads, out=None, scheme="legacy"):
    cmd = [rldk_binary(), "contamination", "--train", train_dir, "--eval", *evals, "--method", method, "--threads",
           str(threads), "--json", "--quiet", "--minhash-scheme", scheme]
    if out:
        cmd += ["--out", out]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, json.loads(proc.stdout)


def slice_lines(train_dir, max_bytes):
    lines, total = [], 0
    for name in sorted(os.listdir(train_dir)):
        with open(os.path.join(train_dir, name), encoding="utf-8") as f:
            for line in f:
                lines.append(line)
                total += len(line.encode())
                if total >= max_bytes:
                    return lines, total
    return lines, total


def python_ngram_set(lines, eval_texts, n=13):
    wanted = set()
    for t in eval_texts:
        w = WORD.findall(t.lower())
        wanted.update(tuple(w[i:i + n]) for i in range(len(w) - n + 1))
    hits = 0
    start = time.process_time()
    for line in lines:
        w = WORD.findall(line.lower())
        for i in range(len(w) - n + 1):
            if tuple(w[i:i + n]) in wanted:
                hits += 1
    return time.process_time() - start, hits


def datasketch_minhash(lines, scheme=None, k=5):
    from datasketch import MinHash
    start = time.process_time()
    for line in lines:
        w = WORD.findall(line.lower())
        shingles = [" ".join(w[i:i + k]).encode() for i in range(max(1, len(w) - k + 1))]
        m = MinHash(num_perm=128, scheme=scheme) if scheme else MinHash(num_perm=128)
        m.update_batch(shingles)
    return time.process_time() - start


def memory_read_rate():
    a = np.ones(1 << 27, dtype=np.int64)  # 1 GiB
    a.sum()
    start = time.perf_counter()
    for _ in range(3):
        a.sum()
    return 3 * a.nbytes / (time.perf_counter() - start) / 1e6


def check_planted(report, plan):
    rows = {i["row"]: i for i in report["items"] if i["set"] == 0}
    wrong = []
    for row, p in plan.items():
        item = rows[row]
        if item["verdict"] != planted.EXPECTED[p["kind"]]:
            wrong.append((row, p["kind"], item["verdict"]))
            continue
        if p["kind"] != "clean":
            spans = item["texts"][0]["ngram"]["spans"]
            if not spans or any(s["train"]["file"] != p["file"] or s["train"]["row"] != p["row"] for s in spans):
                wrong.append((row, p["kind"], "span not at the planted place"))
    false_positives = sum(i["verdict"] != "clean" for i in report["items"] if i["set"] == 1)
    return wrong, false_positives


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train-mb", type=float, default=200, help="Size of the generated training corpus")
    ap.add_argument("--baseline-mb", type=float, default=8, help="Slice the Python baselines run on")
    ap.add_argument("--dir", default=None, help="Where to generate (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="Keep the generated corpus")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="'All cores' run")
    a = ap.parse_args()
    root = a.dir or tempfile.mkdtemp(prefix="rldk_contamination_bench_")
    try:
        t0 = time.perf_counter()
        plan = planted.generate(root, train_bytes=int(a.train_mb * 1e6), files=8, per_kind=10, clean_items=200,
                                fmt="txt")
        gen = time.perf_counter() - t0
        train = os.path.join(root, "train")
        evals = [os.path.join(root, "eval_contaminated.jsonl"), os.path.join(root, "eval_clean.jsonl")]
        size = corpus_bytes(train)
        subprocess.run(["cat"] + [os.path.join(train, f) for f in os.listdir(train)], stdout=subprocess.DEVNULL)
        results = {"train_bytes": size, "generate_s": gen, "cores": os.cpu_count()}
        # 1 thread: the per-core rate, as MB per CPU-second (user + system) and per wall-second (the machine may be
        # shared; CPU time is what one core delivers). All cores: wall time.
        w_ngram1, c_ngram1, report = run_rldk(train, evals, "ngram", 1, out=os.path.join(root, "out_ngram"))
        wrong, fp = check_planted(report, plan)
        w_ngramN, _, _ = run_rldk(train, evals, "ngram", a.threads)
        w_min1, c_min1, report_m = run_rldk(train, evals, "minhash", 1)
        w_minN, _, _ = run_rldk(train, evals, "minhash", a.threads)
        w_aff1, c_aff1, report_a = run_rldk(train, evals, "minhash", 1, scheme="affine32")
        w_affN, _, _ = run_rldk(train, evals, "minhash", a.threads, scheme="affine32")
        w_allN, _, report_all = run_rldk(train, evals, "all", a.threads)
        wrong_all, fp_all = check_planted(report_all, plan)
        lines, sliced = slice_lines(train, a.baseline_mb * 1e6)
        eval_texts = [json.loads(l)["question"] for e in evals for l in open(e)]
        t_py, _ = python_ngram_set(lines, eval_texts)
        t_ds = datasketch_minhash(lines)
        t_ds_legacy = datasketch_minhash(lines, scheme="legacy")
        mb = size / 1e6
        results.update({
            "load_average_1min": os.getloadavg()[0],
            "rldk_ngram_1core_MB_per_cpu_s": mb / c_ngram1, "rldk_ngram_1core_MB_per_wall_s": mb / w_ngram1,
            "rldk_ngram_all_MBps": mb / w_ngramN,
            "rldk_minhash_1core_MB_per_cpu_s": mb / c_min1, "rldk_minhash_1core_MB_per_wall_s": mb / w_min1,
            "rldk_minhash_all_MBps": mb / w_minN, "rldk_all_methods_all_MBps": mb / w_allN,
            "rldk_minhash_affine32_1core_MB_per_cpu_s": mb / c_aff1, "rldk_minhash_affine32_1core_MB_per_wall_s":
                mb / w_aff1, "rldk_minhash_affine32_all_MBps": mb / w_affN,
            "minhash_affine32_found": sum(i["verdict"] != "clean" for i in report_a["items"] if i["set"] == 0),
            "minhash_affine32_false_positives": sum(i["verdict"] != "clean" for i in report_a["items"]
                                                    if i["set"] == 1),
            "python_ngram_set_MB_per_cpu_s": sliced / 1e6 / t_py, "datasketch_minhash_MB_per_cpu_s": sliced / 1e6 / t_ds,
            "datasketch_minhash_legacy_MB_per_cpu_s": sliced / 1e6 / t_ds_legacy,
            "memory_read_MBps": memory_read_rate(),
            "planted_items": sum(p["kind"] != "clean" for p in plan.values()),
            "planted_wrong_ngram": wrong, "planted_wrong_all": wrong_all,
            "clean_set_items": 200, "false_positives_ngram": fp, "false_positives_all": fp_all,
            "minhash_found": sum(i["verdict"] != "clean" for i in report_m["items"] if i["set"] == 0),
        })
        r = results
        print(f"corpus: {size / 1e6:.0f} MB in 8 files (generated in {gen:.0f} s); {r['cores']} cores, load average "
              f"{r['load_average_1min']:.1f}\n")
        print("| method | rldk, 1 core: MB per CPU-s (per wall-s) | rldk, all cores (wall) | Python baseline, MB per "
              "CPU-s | ratio per core | goal |")
        print("|---|---|---|---|---|---|")
        print(f"| exact 13-gram screening | {r['rldk_ngram_1core_MB_per_cpu_s']:.0f} "
              f"({r['rldk_ngram_1core_MB_per_wall_s']:.0f}) | {r['rldk_ngram_all_MBps']:.0f} MB/s "
              f"| pure-Python n-gram set {r['python_ngram_set_MB_per_cpu_s']:.1f} "
              f"| {r['rldk_ngram_1core_MB_per_cpu_s'] / r['python_ngram_set_MB_per_cpu_s']:.0f}x | 200 MB/s/core |")
        print(f"| MinHash P=128 legacy scheme (+LSH, confirm) | {r['rldk_minhash_1core_MB_per_cpu_s']:.0f} "
              f"({r['rldk_minhash_1core_MB_per_wall_s']:.0f}) | {r['rldk_minhash_all_MBps']:.0f} MB/s "
              f"| datasketch legacy {r['datasketch_minhash_legacy_MB_per_cpu_s']:.2f} "
              f"| {r['rldk_minhash_1core_MB_per_cpu_s'] / r['datasketch_minhash_legacy_MB_per_cpu_s']:.0f}x "
              f"| 100 MB/s/core |")
        print(f"| MinHash P=128 affine32 scheme (+LSH, confirm) | {r['rldk_minhash_affine32_1core_MB_per_cpu_s']:.0f} "
              f"({r['rldk_minhash_affine32_1core_MB_per_wall_s']:.0f}) | {r['rldk_minhash_affine32_all_MBps']:.0f} MB/s "
              f"| datasketch default (affine32) {r['datasketch_minhash_MB_per_cpu_s']:.2f} "
              f"| {r['rldk_minhash_affine32_1core_MB_per_cpu_s'] / r['datasketch_minhash_MB_per_cpu_s']:.0f}x "
              f"| 100 MB/s/core |")
        print(f"\nall three methods, all cores: {r['rldk_all_methods_all_MBps']:.0f} MB/s; memory read ceiling "
              f"{r['memory_read_MBps']:.0f} MB/s")
        print(f"planted: {r['planted_items']} items, wrong (n-gram run): {len(wrong)}, wrong (all methods): "
              f"{len(wrong_all)}; MinHash alone finds {r['minhash_found']} (affine32: "
              f"{r['minhash_affine32_found']}); false positives on {r['clean_set_items']} "
              f"clean items: {fp} (n-gram), {fp_all} (all)")
        with open(os.path.join(root, "bench_contamination.json"), "w") as f:
            json.dump(results, f, indent=2)
    finally:
        if not a.keep and not a.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
