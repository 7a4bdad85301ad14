#!/usr/bin/env python3
"""Monitor benchmarks, each against a baseline measured in the same run.

1. Throughput: `rldk monitor --once` with the grpo_strict preset over the generated narrow log (long-form events),
   against Python's json module merely parsing the same file line by line (no rules at all).
2. Alert latency: `rldk monitor` follows a file while this script appends lines; for each triggering line, the time
   from the write returning to the alert record appearing in alerts.jsonl (p50, p95, max), against the time for
   this same script to see its own appended line by polling the file (the floor of any file-based observer).

Usage:
  python3 bench/bench_monitor.py                       # build/release/rldk, 10 M events
  python3 bench/bench_monitor.py --events 1000000 --markdown out.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gen_logs  # noqa: E402
from run_bench import baseline_narrow, ensure_narrow, machine  # noqa: E402


def throughput(rldk: str, path: str, repeat: int) -> dict:
    best = None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            proc = subprocess.run([rldk, "monitor", "--once", path, "--preset", "grpo_strict", "--out", out, "-q",
                                   "--fail-on", "never"], capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if proc.returncode != 0:
                sys.exit("rldk monitor failed: " + proc.stderr[-2000:])
            report = json.load(open(os.path.join(out, "report.json")))
        r = {"seconds": seconds, "events": report["summary"]["observations"], "alerts": report["summary"]["alerts"]}
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    return best


def latency(rldk: str, samples: int) -> dict:
    with tempfile.TemporaryDirectory() as work:
        metrics = os.path.join(work, "live.jsonl")
        out = os.path.join(work, "out")
        alerts_path = os.path.join(out, "alerts.jsonl")
        rules = os.path.join(work, "rules.yaml")
        with open(rules, "w") as f:
            f.write("rules:\n  - {id: spike, metric: policy/kl, condition: value > 1.0}\n")
        mon = subprocess.Popen([rldk, "monitor", metrics, "--rules", rules, "--out", out, "-q", "--fail-on", "never"],
                               stderr=subprocess.DEVNULL)
        monitor_ms, floor_ms = [], []
        try:
            with open(metrics, "w") as f:
                step = 0
                for i in range(samples):
                    for _ in range(20):  # ordinary lines between triggers
                        step += 1
                        f.write(json.dumps({"step": step, "name": "policy/kl", "value": 0.1}) + "\n")
                    f.flush()
                    time.sleep(0.05)
                    seen = len(open(alerts_path).read().splitlines()) if os.path.exists(alerts_path) else 0
                    step += 1
                    line = json.dumps({"step": step, "name": "policy/kl", "value": 5.0}) + "\n"
                    size_before = os.path.getsize(metrics)
                    t0 = time.perf_counter()
                    f.write(line)
                    f.flush()
                    # Floor: this process noticing its own write by polling the file size.
                    while os.path.getsize(metrics) <= size_before:
                        pass
                    floor_ms.append((time.perf_counter() - t0) * 1000)
                    while True:
                        if os.path.exists(alerts_path) and len(open(alerts_path).read().splitlines()) > seen:
                            break
                        if time.perf_counter() - t0 > 5:
                            sys.exit("no alert within 5 s")
                    monitor_ms.append((time.perf_counter() - t0) * 1000)
        finally:
            mon.terminate()
            mon.wait(timeout=10)
    q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]
    return {"samples": samples, "p50_ms": statistics.median(monitor_ms), "p95_ms": q(monitor_ms, 0.95),
            "max_ms": max(monitor_ms), "floor_p50_ms": statistics.median(floor_ms)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rldk", default=os.path.join(ROOT, "build", "release", "rldk"))
    p.add_argument("--data-dir", default=gen_logs.DEFAULT_DIR)
    p.add_argument("--events", type=int, default=10_000_000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--latency-samples", type=int, default=50)
    p.add_argument("--markdown")
    args = p.parse_args()
    path = ensure_narrow(args.data_dir, args.events)
    size_mb = os.path.getsize(path) / 1e6
    mon = throughput(args.rldk, path, args.repeat)
    base = baseline_narrow(path)
    if base["events"] != mon["events"]:
        sys.exit("event counts differ: rldk %d, json %d" % (mon["events"], base["events"]))
    rate = mon["events"] / mon["seconds"]
    base_rate = base["events"] / base["seconds"]
    lat = latency(args.rldk, args.latency_samples)
    lines = [
        "| benchmark | rldk | baseline (same run) | ratio |",
        "|---|---:|---:|---:|",
        "| `monitor --once`, grpo_strict, %s events (%.0f MB) | %.2f M events/s (%.0f MB/s), %d alerts | "
        "json.loads only: %.2f M events/s | %.1fx |" % (f"{mon['events']:,}", size_mb, rate / 1e6,
                                                         size_mb / mon["seconds"], mon["alerts"], base_rate / 1e6,
                                                         rate / base_rate),
        "| alert latency, followed file, %d samples | p50 %.1f ms, p95 %.1f ms, max %.1f ms | "
        "the writer seeing its own line: p50 %.3f ms | - |" % (lat["samples"], lat["p50_ms"], lat["p95_ms"],
                                                                 lat["max_ms"], lat["floor_p50_ms"]),
    ]
    table = "\n".join(lines)
    print(table)
    print("\n" + machine())
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n\n" + machine() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
