#!/usr/bin/env python3
"""Reading speed of the binary run formats, each against the real library's own Python reader in the same run.

Data is written once by the real libraries into bench/data/ (kept between runs; --regenerate to redo it):
  tensorboard  torch SummaryWriter.add_scalar, one scalar per event as trainers write them (8 tags per step)
  wandb        wandb offline run, wandb.log of 8 metrics per step (plus W&B's _step/_runtime/_timestamp)
  mlflow       MLflow SQL store (sqlite) and file store, log_metrics of 8 metrics per step
Readers timed (best of --repeat, each reading every scalar value and its step):
  rldk         `rldk info --json FILE` (the native streaming reader, process start included)
  tensorboard  tensorboard's tf-free EventFileLoader (framing + CRC + Event protos), taking each scalar; without
               TensorFlow installed its CRC-32C is tensorboard's pure-Python stub, which dominates its time
  wandb        wandb's own Record protos (wandb.proto.wandb_internal_pb2) over the .wandb framing, decoded in
               Python (wandb 0.31 ships no Python reader of its transaction log; the framing loop is this script's)
               and json.loads of each value
  mlflow       MlflowClient.get_metric_history for every metric of the run
MB/s is the file size over the wall time; the ratio is the library's time over rldk's, in wall time and in CPU time
(the CPU figures are the ones to compare on a loaded machine).

Usage:
  .venv/bin/python bench/bench_binary.py --rldk build/release/rldk
  .venv/bin/python bench/bench_binary.py --rldk build/release/rldk --tb-steps 20000 --markdown out/binary.md
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import resource
import shutil
import struct
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data", "binary")
sys.path.insert(0, HERE)
from run_bench import machine  # noqa: E402

TAGS = ["train/kl", "train/reward", "train/loss", "train/entropy", "train/clip_fraction", "train/grad_norm",
        "train/learning_rate", "train/response_length"]


def value(tag_index: int, step: int) -> float:
    return math.sin(step * 0.001 + tag_index) * (tag_index + 1) + step * 1e-6


# ---------------------------------------------------------------- generation (real libraries, once)

def make_tensorboard(steps: int) -> str:
    target = os.path.join(DATA, "tensorboard", "run")
    files = glob.glob(os.path.join(target, "events.out.tfevents.*"))
    if files:
        return files[0]
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(target, max_queue=1000)
    for step in range(steps):
        for i, tag in enumerate(TAGS):
            writer.add_scalar(tag, value(i, step), step)
    writer.close()
    return glob.glob(os.path.join(target, "events.out.tfevents.*"))[0]


def make_wandb(steps: int) -> str:
    found = glob.glob(os.path.join(DATA, "wandb", "wandb", "*-run-*", "run-*.wandb"))
    if found:
        return found[0]
    script = ("import sys, math, wandb\n"
              "tags = %r\n"
              "run = wandb.init(project='rldk-bench', settings=wandb.Settings(console='off', x_disable_stats=True))\n"
              "for step in range(int(sys.argv[1])):\n"
              "    run.log({t: math.sin(step * 0.001 + i) * (i + 1) + step * 1e-6 for i, t in enumerate(tags)})\n"
              "run.finish()\n") % (TAGS,)
    os.makedirs(os.path.join(DATA, "wandb"), exist_ok=True)
    env = dict(os.environ, WANDB_MODE="offline", WANDB_DIR=os.path.join(DATA, "wandb"), WANDB_SILENT="true")
    subprocess.run([sys.executable, "-c", script, str(steps)], env=env, check=True)
    return glob.glob(os.path.join(DATA, "wandb", "wandb", "*-run-*", "run-*.wandb"))[0]


def make_mlflow_sqlite(steps: int) -> str:
    db = os.path.join(DATA, "mlflow", "mlflow.db")
    if os.path.exists(db):
        return db
    os.makedirs(os.path.dirname(db), exist_ok=True)
    script = ("import sys, math, time, mlflow\n"
              "from mlflow.entities import Metric\n"
              "tags = %r\n"
              "mlflow.set_tracking_uri(sys.argv[2])\n"
              "client = mlflow.MlflowClient()\n"
              "with mlflow.start_run() as run:\n"
              "    batch = []\n"
              "    for step in range(int(sys.argv[1])):\n"
              "        now = int(time.time() * 1000)\n"
              "        batch += [Metric(t, math.sin(step * 0.001 + i) * (i + 1) + step * 1e-6, now, step)\n"
              "                  for i, t in enumerate(tags)]\n"
              "        if len(batch) >= 800:\n"
              "            client.log_batch(run.info.run_id, metrics=batch); batch = []\n"
              "    if batch: client.log_batch(run.info.run_id, metrics=batch)\n") % (TAGS,)
    subprocess.run([sys.executable, "-c", script, str(steps), "sqlite:///" + db], check=True)
    return db


# ---------------------------------------------------------------- readers

def read_rldk(rldk: str, path: str) -> int:
    proc = subprocess.run([rldk, "info", "--json", path], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("rldk info failed: " + proc.stderr[-2000:])
    doc = json.loads(proc.stdout)
    return sum(r["points"] for r in doc["runs"])


def read_tensorboard(path: str) -> int:
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    # EventFileLoader migrates simple values to scalar tensors (tensorboard's data_compat) as it yields them.
    n = 0
    for event in EventFileLoader(path).Load():
        for v in event.summary.value:
            if v.WhichOneof("value") in ("simple_value", "tensor"):
                n += 1
    return n


def wandb_history_rows(path: str):
    """The history rows of a .wandb file, {key: value} per row (what wandb's own client builds from each item's
    value_json), read with wandb's Record protos over the file's framing: 32 KiB blocks of chunks, each with a
    7-byte header (CRC-32 of type and payload, length, type: 1 full, 2 first, 3 middle, 4 last)."""
    from wandb.proto import wandb_internal_pb2

    data = open(path, "rb").read()
    pos, block, pending = 7, 32768, b""
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:
            pos += left
            continue
        crc, length, kind = struct.unpack_from("<IHB", data, pos)
        payload = data[pos + 7:pos + 7 + length]
        if zlib.crc32(bytes([kind]) + payload) != crc:
            raise SystemExit("wandb baseline: checksum mismatch at byte %d" % pos)
        pos += 7 + length
        pending = payload if kind in (1, 2) else pending + payload
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            if record.WhichOneof("record_type") == "history":
                yield {item.key or ".".join(item.nested_key): json.loads(item.value_json)
                       for item in record.history.item}


def read_wandb(path: str) -> int:
    n = 0
    for row in wandb_history_rows(path):
        n += sum(1 for key, v in row.items()
                 if not key.startswith("_") and isinstance(v, (int, float)) and not isinstance(v, bool))
    return n


def read_mlflow(db: str) -> int:
    import mlflow

    client = mlflow.MlflowClient(tracking_uri="sqlite:///" + db)
    (run,) = client.search_runs(client.search_experiments()[0].experiment_id) or [None]
    return sum(len(client.get_metric_history(run.info.run_id, key)) for key in run.data.metrics)


def cpu_seconds() -> float:
    """CPU time of this process and its finished children: on a shared machine wall time mostly measures waiting."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best_time(fn, repeat: int):
    """Best wall time and best CPU time over `repeat` calls, and the last result."""
    best, best_cpu, result = None, None, None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), cpu_seconds()
        result = fn()
        seconds, cpu = time.perf_counter() - start, cpu_seconds() - start_cpu
        best = seconds if best is None else min(best, seconds)
        best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
    return best, best_cpu, result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rldk", default=os.path.join(ROOT, "build", "release", "rldk"))
    p.add_argument("--tb-steps", type=int, default=100_000, help="steps of 8 scalars written by SummaryWriter")
    p.add_argument("--wandb-steps", type=int, default=50_000, help="wandb.log calls of 8 metrics")
    p.add_argument("--mlflow-steps", type=int, default=20_000, help="steps of 8 metrics logged to MLflow (sqlite)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--regenerate", action="store_true", help="write the data again")
    p.add_argument("--only", choices=["tensorboard", "wandb", "mlflow"], action="append")
    p.add_argument("--markdown", help="also write the table as Markdown to this file")
    args = p.parse_args()
    if args.regenerate:
        shutil.rmtree(DATA, ignore_errors=True)
    only = set(args.only or ["tensorboard", "wandb", "mlflow"])
    cases = []
    if "tensorboard" in only:
        cases.append(("tensorboard", make_tensorboard(args.tb_steps), read_tensorboard, "EventFileLoader"))
    if "wandb" in only:
        cases.append(("wandb", make_wandb(args.wandb_steps), read_wandb, "wandb_internal_pb2 Record"))
    if "mlflow" in only:
        cases.append(("mlflow sqlite", make_mlflow_sqlite(args.mlflow_steps), read_mlflow, "get_metric_history"))
    rows = []
    for name, path, baseline, baseline_name in cases:
        mb = os.path.getsize(path) / 1e6
        rldk_s, rldk_cpu, rldk_points = best_time(lambda: read_rldk(args.rldk, path), args.repeat)
        base_s, base_cpu, base_points = best_time(lambda: baseline(path), max(1, args.repeat - 1))
        if rldk_points != base_points:
            print("warning: %s: rldk read %d values, %s %d" % (name, rldk_points, baseline_name, base_points))
        rows.append({"format": name, "MB": mb, "values": rldk_points, "rldk_s": rldk_s, "rldk_MBps": mb / rldk_s,
                     "baseline": baseline_name, "baseline_s": base_s, "baseline_MBps": mb / base_s,
                     "ratio": base_s / rldk_s, "rldk_cpu": rldk_cpu, "baseline_cpu": base_cpu,
                     "cpu_ratio": base_cpu / max(rldk_cpu, 1e-9)})
    header = ("| format | size MB | values | rldk s (CPU s) | rldk MB/s | library reader | library s (CPU s) | "
              "library MB/s | ratio (CPU ratio) |")
    lines = [header, "|" + "---|" * 9]
    for r in rows:
        lines.append("| %s | %.1f | %d | %.3f (%.3f) | %.0f | %s | %.2f (%.2f) | %.2f | %.0fx (%.0fx) |" % (
            r["format"], r["MB"], r["values"], r["rldk_s"], r["rldk_cpu"], r["rldk_MBps"], r["baseline"],
            r["baseline_s"], r["baseline_cpu"], r["baseline_MBps"], r["ratio"], r["cpu_ratio"]))
    table = "\n".join(lines)
    print(machine())
    print(table)
    if args.markdown:
        os.makedirs(os.path.dirname(os.path.abspath(args.markdown)), exist_ok=True)
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write("Binary readers, best of %d (%s)\n\n%s\n" % (args.repeat, machine(), table))


if __name__ == "__main__":
    main()
