#!/usr/bin/env python3
"""Monitor benchmarks, each against baselines measured in the same run.

1. Throughput: `rldk monitor --once` with the grpo_strict preset over the generated narrow log (long-form events),
   process start included, against the least a Python guard script must do before it can evaluate any rule: read
   the same file. Three readers, each on one thread (see bench/run_bench.py for why these):
     orjson.loads per line   the fastest Python JSON parser; lines with NaN (which orjson rejects) go to json.loads
     polars.read_ndjson      a native columnar NDJSON reader with POLARS_MAX_THREADS=1, in a fresh process; it
                             rejects NaN too, so it reads a copy with NaN written as null (made once, not timed)
     json.loads per line     the standard library
   Every reader must count the same events as the monitor's report (summary.observations).
2. Alert latency: `rldk monitor` follows a file while this script appends lines; for each triggering line, the time
   from the write returning to the alert record appearing in alerts.jsonl (p50, p95, max), against the time for
   this same script to see its own appended line by polling the file (the floor of any file-based observer).

With --docs FILE the results replace the text between <!-- bench:monitor:begin --> and <!-- bench:monitor:end -->
in FILE, with the command line, the machine and the load average at the start.

Usage:
  python3 bench/bench_monitor.py --cpu 1                       # build/release/rldk, 10 M events
  python3 bench/bench_monitor.py --cpu 1 --docs docs/benchmarks.md
  python3 bench/bench_monitor.py --events 200000 --repeat 1 --latency-samples 5   # a quick check
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
from run_bench import (LABELS, POLARS_CODE, best_of, block_bounds, ensure_narrow, machine,  # noqa: E402
                       markdown_table, nan_free, orjson_loads, paragraph, parse_lines, pin_to, read_frame,
                       replace_block, run_header, text_table)


def throughput(rldk: str, path: str, repeat: int, prefix: list[str]) -> dict:
    best = None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            proc = subprocess.run(prefix + [rldk, "monitor", "--once", path, "--preset", "grpo_strict", "--out", out,
                                            "-q", "--fail-on", "never"], capture_output=True, text=True)
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
    p.add_argument("--repeat", type=int, default=2, help="monitor runs; the best is reported (default 2)")
    p.add_argument("--baseline-repeat", type=int, default=1,
                   help="runs of each reader; the best is reported (default 1)")
    p.add_argument("--latency-samples", type=int, default=50)
    p.add_argument("--cpu", type=int, default=None, help="pin the monitor and the readers to this CPU")
    p.add_argument("--markdown", help="also write the results as Markdown to this file")
    p.add_argument("--docs", help="replace the bench:monitor block of this Markdown file (e.g. docs/benchmarks.md)")
    args = p.parse_args()
    started, load = time.gmtime(), os.getloadavg()
    if args.docs:
        block_bounds(args.docs, "monitor")  # a missing marker should stop the run before, not after, the measurement
    prefix = pin_to(args.cpu)
    path = ensure_narrow(args.data_dir, args.events)
    size_mb = os.path.getsize(path) / 1e6
    print("rldk monitor --once ...", flush=True)
    mon = throughput(args.rldk, path, args.repeat, prefix)
    loads = orjson_loads()
    polars_path = nan_free(path)
    readers = {
        "orjson": lambda: parse_lines(path, loads, wide=False),
        "polars": lambda: read_frame(POLARS_CODE, polars_path, "narrow"),
        "json": lambda: parse_lines(path, json.loads, wide=False),
    }
    rows = [["`rldk monitor --once`, grpo_strict, %d alerts" % mon["alerts"], "%.3f" % mon["seconds"],
             "{:,.0f}".format(mon["events"] / mon["seconds"]), "%.1f" % (size_mb / mon["seconds"]), "-"]]
    measured = {}
    for name, read in readers.items():
        label = LABELS[name] + ", reading only"
        print(label + " ...", flush=True)
        base = measured[name] = best_of(args.baseline_repeat, read)
        if base["events"] != mon["events"]:
            sys.exit("event counts differ: rldk %d, %s %d" % (mon["events"], label, base["events"]))
        rows.append([label, "%.3f" % base["seconds"], "{:,.0f}".format(base["events"] / base["seconds"]),
                     "%.1f" % (size_mb / base["seconds"]), "%.1fx" % (base["seconds"] / mon["seconds"])])
    print("alert latency ...", flush=True)
    lat = latency(args.rldk, args.latency_samples)

    headers = ["contender (%s events, %.0f MB)" % ("{:,}".format(mon["events"]), size_mb), "s", "events/s", "MB/s",
               "rldk monitor is faster by"]
    lat_headers = ["benchmark", "rldk", "floor (same run)"]
    lat_rows = [["alert latency, followed file, %d samples" % lat["samples"],
                 "p50 %.1f ms, p95 %.1f ms, max %.1f ms" % (lat["p50_ms"], lat["p95_ms"], lat["max_ms"]),
                 "the writer seeing its own line: p50 %.3f ms" % lat["floor_p50_ms"]]]
    print()
    print(machine())
    print(text_table(headers, rows))
    print()
    print(text_table(lat_headers, lat_rows))
    notes = ["Monitor: best of %d runs, process start included; readers: best of %d, each on one thread%s, only "
             "the read timed (polars in a fresh process)." %
             (args.repeat, args.baseline_repeat, ", all pinned to CPU %d" % args.cpu if args.cpu is not None else "")]
    if polars_path != path:
        notes.append("polars read a copy with NaN written as null (read_ndjson rejects NaN).")
    if measured["orjson"]["fallbacks"]:
        notes.append("orjson rejects NaN too: {:,} lines went to json.loads.".format(measured["orjson"]["fallbacks"]))
    text = "\n\n".join([run_header(started, load), markdown_table(headers, rows),
                        markdown_table(lat_headers, lat_rows, 3), paragraph(" ".join(notes))]) + "\n"
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"\nwrote {args.markdown}")
    if args.docs:
        replace_block(args.docs, "monitor", text)
        print(f"\nupdated the bench:monitor block of {args.docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
