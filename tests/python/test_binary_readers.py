"""The native TensorBoard, W&B and MLflow readers against files written by the real libraries: torch's
SummaryWriter, tensorboard's own tf-free EventFileWriter, the wandb SDK in offline mode, MLflow's file and SQLite
stores. rldk must read back exactly the values logged (TensorBoard simple values are float32: compared as float32),
NaN and infinities included; damaged copies (flipped bytes, truncation) give located diagnostics and never a crash;
and `rldk monitor` follows a TensorBoard folder while a SummaryWriter in another process appends to it, and alerts
on a guard rule.

Runs are read through the `rldk` command (`info --json` for formats, meta and diagnostics, `ingest -o -` for every
point), the same native readers the Python package binds. RLDK_BIN names the binary to test (default: the one
installed beside this Python)."""
import datetime
import glob
import json
import math
import os
import random
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest



def rldk_bin():
    beside = os.path.join(os.path.dirname(sys.executable), "rldk")
    return os.environ.get("RLDK_BIN") or (beside if os.path.exists(beside) else shutil.which("rldk"))


class Unrecognized(Exception):
    pass


class Series:
    def __init__(self):
        self.steps, self.values, self.wall_times = [], [], []


class Run:
    """One run as `rldk info --json` and `rldk ingest` report it."""

    def __init__(self, info):
        self.run_id = info["run_id"]
        self.format = info["format"]
        self.meta = info.get("meta", {})
        self.diagnostic_counts = info["diagnostics"]["counts"]
        self.diagnostics = info["diagnostics"]["examples"]
        self.num_points = info["points"]
        self.series = {}

    def __getitem__(self, name):
        return self.series[name]

    def __contains__(self, name):
        return name in self.series


def read_runs(path):
    info = subprocess.run([rldk_bin(), "info", "--json", str(path)], capture_output=True, text=True, timeout=120)
    if info.returncode == 2:
        raise Unrecognized(info.stderr)
    assert info.returncode == 0, info.stderr
    runs = [Run(r) for r in json.loads(info.stdout)["runs"]]
    ingest = subprocess.run([rldk_bin(), "ingest", str(path), "-o", "-"], capture_output=True, text=True,
                            timeout=120)
    assert ingest.returncode == 0, ingest.stderr
    by_id = {r.run_id: r for r in runs}
    for line in ingest.stdout.splitlines():
        p = json.loads(line)
        s = by_id[p["run_id"]].series.setdefault(p["name"], Series())
        s.steps.append(p["step"])
        s.values.append(float(p["value"]))
        s.wall_times.append(datetime.datetime.fromisoformat(p["time"].replace("Z", "+00:00")).timestamp()
                            if "time" in p else math.nan)
    return runs


def read_run(path):
    runs = read_runs(path)
    assert len(runs) == 1, [r.run_id for r in runs]
    return runs[0]


NAN, INF = float("nan"), float("inf")


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def as_f32(values):
    return [float(np.float32(v)) for v in values]


# ---------------------------------------------------------------- TensorBoard

KL = [0.01, 0.025, 0.1 / 3, NAN, 0.5, 1e-8, 123456.789]
REWARD = [0.1, -0.2, INF, -INF, 0.3, 2.0 / 3, -1e30]


@pytest.fixture(scope="module")
def torch_run(tmp_path_factory):
    from torch.utils.tensorboard import SummaryWriter

    log_dir = tmp_path_factory.mktemp("tb") / "ppo_run"
    writer = SummaryWriter(str(log_dir))
    for step, (kl, reward) in enumerate(zip(KL, REWARD)):
        writer.add_scalar("train/kl", kl, step * 5, walltime=1_700_000_000.5 + step)
        writer.add_scalar("train/reward", reward, step * 5, new_style=True)  # a scalar tensor, plugin "scalars"
        writer.add_histogram("weights", np.arange(10.0) * step, step * 5)   # not a scalar: skipped
    writer.close()
    return log_dir


def test_summary_writer_values_read_back_exactly(torch_run):
    run = read_run(torch_run)
    assert run.format == "tensorboard"
    assert run.run_id == "ppo_run"
    assert run.diagnostic_counts == {}
    kl, reward = run["policy/kl"], run["reward/mean"]
    assert kl.steps == [0, 5, 10, 15, 20, 25, 30]
    assert all(same(a, b) for a, b in zip(kl.values, as_f32(KL)))
    assert all(same(a, b) for a, b in zip(reward.values, as_f32(REWARD)))
    assert kl.wall_times == pytest.approx([1_700_000_000.5 + i for i in range(7)], abs=1e-3)
    assert "weights" not in run


def test_tensorboard_own_writer_double_tensors_and_several_runs(tmp_path, torch_run):
    """tensorboard's tf-free EventFileWriter with DT_DOUBLE scalar tensors (TF2 style: metadata on the first value)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    values = [0.1, 1e-300, NAN, -INF, 7.25]
    writer = EventFileWriter(str(tmp_path / "logs" / "grpo"))
    for step, v in enumerate(values):
        value = summary_pb2.Summary.Value(tag="train/loss",
                                          tensor=tensor_pb2.TensorProto(dtype=types_pb2.DT_DOUBLE, double_val=[v]))
        if step == 0:
            value.metadata.plugin_data.plugin_name = "scalars"
        writer.add_event(event_pb2.Event(wall_time=100.0 + step, step=step,
                                         summary=summary_pb2.Summary(value=[value])))
    writer.close()
    run = read_run(tmp_path / "logs" / "grpo")
    assert all(same(a, b) for a, b in zip(run["train/loss"].values, values))  # doubles stay doubles
    assert run["train/loss"].steps == [0, 1, 2, 3, 4]
    # A log dir of runs: one run per subfolder holding event files, named after it.
    shutil.copytree(torch_run, tmp_path / "logs" / "ppo")
    runs = read_runs(tmp_path / "logs")
    assert [r.run_id for r in runs] == ["grpo", "ppo"]
    assert runs[1]["policy/kl"].steps == [0, 5, 10, 15, 20, 25, 30]


def test_a_run_resumed_into_its_log_dir_is_one_run(tmp_path):
    """A trainer resumed from a checkpoint opens a new SummaryWriter on the same log dir: TensorBoard shows one run
    from both event files, and so does rldk (the steps logged again after the resume start a new segment)."""
    from torch.utils.tensorboard import SummaryWriter

    log_dir = tmp_path / "runs" / "grpo"
    first = SummaryWriter(str(log_dir), filename_suffix=".a")
    for step in range(1, 11):
        first.add_scalar("train/kl", 0.01 * step, step, walltime=1_700_000_000 + step)
    first.close()
    second = SummaryWriter(str(log_dir), filename_suffix=".b")
    for step in range(8, 21):
        second.add_scalar("train/kl", 0.02 * step, step, walltime=1_700_000_100 + step)
    second.close()
    assert len(glob.glob(str(log_dir / "events.out.tfevents.*"))) == 2
    run = read_run(tmp_path / "runs")
    assert run.run_id == "grpo"
    assert run.diagnostic_counts == {}
    kl = run["policy/kl"]
    # Both files were created within the same second: the names then sort by host, pid and suffix.
    assert sorted(kl.steps) == sorted(list(range(1, 11)) + list(range(8, 21)))
    assert len(kl.steps) == 23


def test_add_scalars_subfolders_are_part_of_their_run(tmp_path):
    """torch's add_scalars writes each key into a subfolder named <tag>_<key> under the one tag: rldk reads them back
    as <tag>/<key> of the log dir's run. A second writer's subfolder with its own tags stays a run of its own."""
    from torch.utils.tensorboard import SummaryWriter

    log_dir = tmp_path / "runs" / "ppo"
    writer = SummaryWriter(str(log_dir))
    evals = SummaryWriter(str(log_dir / "eval"))
    for step in range(1, 11):
        writer.add_scalar("train/loss", 1.0 / step, step)
        writer.add_scalars("objective/kl", {"mean": 0.01 * step, "max": 0.05 * step}, step)
        evals.add_scalar("eval/loss", 2.0 / step, step)
    writer.close()
    evals.close()
    assert (log_dir / "objective_kl_mean").is_dir() and (log_dir / "objective_kl_max").is_dir()
    runs = {r.run_id: r for r in read_runs(tmp_path / "runs")}
    assert sorted(runs) == ["eval", "ppo"]
    ppo = runs["ppo"]
    mean, peak = ppo["objective/kl/mean"], ppo["objective/kl/max"]
    assert mean.steps == peak.steps == list(range(1, 11))
    assert mean.values == pytest.approx([0.01 * s for s in range(1, 11)], rel=1e-6)
    assert peak.values == pytest.approx([0.05 * s for s in range(1, 11)], rel=1e-6)
    assert "eval/loss" in runs["eval"]


def test_tensorboard_scalar_downloads_read_as_the_tag(torch_run, tmp_path):
    """TensorBoard's "download data" (CSV or JSON of one tag), produced by its own scalars plugin, saved under the name
    the dashboard gives it (run-<run>-tag-<tag>, '/' written '_')."""
    scalars_plugin = pytest.importorskip("tensorboard.plugins.scalar.scalars_plugin")
    from tensorboard import context
    from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer
    from tensorboard.plugins import base_plugin

    logdir, run_name = os.path.dirname(torch_run), os.path.basename(torch_run)
    mux = plugin_event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(logdir)
    mux.Reload()
    provider = data_provider.MultiplexerDataProvider(mux, logdir)
    plugin = scalars_plugin.ScalarsPlugin(base_plugin.TBContext(logdir=logdir, multiplexer=mux, data_provider=provider))
    expected = read_run(torch_run)["policy/kl"]
    for fmt, ext in ((scalars_plugin.OutputFormat.CSV, "csv"), (scalars_plugin.OutputFormat.JSON, "json")):
        body, _ = plugin.scalars_impl(context.RequestContext(), "train/kl", run_name, "", fmt)
        path = tmp_path / ("run-%s-tag-train_kl.%s" % (run_name, ext))
        path.write_text(body if isinstance(body, str) else json.dumps(body))
        run = read_run(path)
        assert run.run_id == run_name, ext
        kl = run["policy/kl"]
        assert kl.steps == expected.steps, ext
        assert all(same(a, b) for a, b in zip(as_f32(kl.values), as_f32(expected.values))), ext
        assert [round(t, 3) for t in kl.wall_times] == [round(t, 3) for t in expected.wall_times], ext
    # A folder of one run's downloads, one tag a file, is that run with every tag.
    for fmt, ext in ((scalars_plugin.OutputFormat.CSV, "csv"), (scalars_plugin.OutputFormat.JSON, "json")):
        folder = tmp_path / ext
        folder.mkdir()
        for tag in ("train/kl", "train/reward"):
            body, _ = plugin.scalars_impl(context.RequestContext(), tag, run_name, "", fmt)
            path = folder / ("run-%s-tag-%s.%s" % (run_name, tag.replace("/", "_"), ext))
            path.write_text(body if isinstance(body, str) else json.dumps(body))
        run = read_run(folder)
        assert run.run_id == run_name and sorted(run.series) == ["policy/kl", "reward/mean"], (ext, sorted(run.series))
        assert run["reward/mean"].steps == read_run(torch_run)["reward/mean"].steps, ext


def test_info_and_ingest_on_a_tensorboard_folder(torch_run, tmp_path):
    info = subprocess.run([rldk_bin(), "info", "--json", str(torch_run)], capture_output=True, text=True)
    assert info.returncode == 0, info.stderr
    doc = json.loads(info.stdout)
    (run,) = doc["runs"]
    assert run["format"] == "tensorboard"
    out = tmp_path / "canonical.jsonl"
    ingest = subprocess.run([rldk_bin(), "ingest", str(torch_run), "-o", str(out)], capture_output=True, text=True)
    assert ingest.returncode == 0, ingest.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    kl = [r for r in rows if r.get("name") == "policy/kl"]
    assert [r["step"] for r in kl] == [0, 5, 10, 15, 20, 25, 30]


def flipped(data, at):
    data = bytearray(data)
    data[at] ^= 0x55
    return bytes(data)


def damaged_copies(data, seed, boundaries=()):
    """25 copies with one flipped byte, 10 cut short (never at a record boundary: that is a shorter valid file)."""
    rng = random.Random(seed)
    for _ in range(25):
        yield "flip", flipped(data, rng.randrange(len(data)))
    cuts = 0
    while cuts < 10:
        at = rng.randrange(1, len(data))
        if at not in boundaries:
            cuts += 1
            yield "cut", data[:at]


def tfrecord_boundaries(data):
    offsets, pos = set(), 0
    while pos < len(data):
        offsets.add(pos)
        pos += 12 + int.from_bytes(data[pos:pos + 8], "little") + 4
    return offsets


def test_damaged_event_files_give_located_diagnostics(torch_run, tmp_path):
    (event_file,) = glob.glob(str(torch_run / "events.out.tfevents.*"))
    data = open(event_file, "rb").read()
    clean = read_run(torch_run)
    for i, (kind, bad) in enumerate(damaged_copies(data, 7, tfrecord_boundaries(data))):
        path = tmp_path / ("d%d" % i) / os.path.basename(event_file)
        path.parent.mkdir()
        path.write_bytes(bad)
        try:
            run = read_run(path)
        except Unrecognized as e:  # the damage took every record with scalars: the error names the first problem
            assert "byte" in str(e), str(e)
            continue
        assert run.num_points <= clean.num_points
        if run.num_points < clean.num_points or kind == "cut":
            assert run.diagnostic_counts, (kind, i)
            messages = [d["message"] for d in run.diagnostics]
            assert any("byte" in m for m in messages), messages


def test_damaged_file_through_the_cli_says_where(torch_run, tmp_path):
    (event_file,) = glob.glob(str(torch_run / "events.out.tfevents.*"))
    data = open(event_file, "rb").read()
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(data[:-7])
    proc = subprocess.run([rldk_bin(), "info", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "tfrecord_truncated" in proc.stdout and "incomplete last record" in proc.stdout


# ---------------------------------------------------------------- W&B

WANDB_ROWS = [{"train/kl": 0.1 * i, "train/reward": [0.5, NAN, INF, -INF, 1e-300][i], "train/global_step": 4 * i,
               "eval/text": "not a number"} for i in range(5)]


@pytest.fixture(scope="module")
def wandb_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("wandb")
    script = textwrap.dedent("""
        import json, os, sys
        import wandb
        rows = json.loads(sys.argv[1])
        run = wandb.init(project="rldk-test", id="abc123", config={"lr": 1e-5, "nested": {"beta": 0.1}},
                         settings=wandb.Settings(console="off", x_disable_stats=True))
        for row in rows:
            run.log({k: float(v) if isinstance(v, str) and v in ("nan", "inf", "-inf") else v for k, v in row.items()})
        run.summary["best_reward"] = 0.5
        run.finish()
    """)
    rows = [{k: (repr(v) if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
            for r in WANDB_ROWS]
    env = dict(os.environ, WANDB_MODE="offline", WANDB_DIR=str(root), WANDB_SILENT="true")
    subprocess.run([sys.executable, "-c", script, json.dumps(rows)], env=env, check=True, timeout=300)
    (log,) = glob.glob(str(root / "wandb" / "offline-run-*" / "run-abc123.wandb"))
    return root, log


def test_wandb_offline_values_read_back_exactly(wandb_run):
    root, log = wandb_run
    run = read_run(log)
    assert run.format == "wandb" and run.run_id == "abc123"
    assert run.diagnostic_counts == {}
    kl, reward = run["policy/kl"], run["reward/mean"]
    assert kl.steps == [0, 4, 8, 12, 16]  # train/global_step, the trainer's step
    assert kl.values == [0.1 * i for i in range(5)]
    assert all(same(a, b) for a, b in zip(reward.values, [r["train/reward"] for r in WANDB_ROWS]))
    assert "eval/text" not in run
    assert not math.isnan(kl.wall_times[0]) and kl.wall_times[0] > 1.6e9
    meta = run.meta
    assert meta["wandb_run_id"] == "abc123" and meta["wandb_project"] == "rldk-test"
    assert float(meta["config.lr"]) == 1e-5
    assert meta["summary.best_reward"] == "0.5"
    # The whole wandb folder: the run's .wandb log only, not W&B's copies of console output and debug logs.
    runs = read_runs(root)
    assert [r.run_id for r in runs] == ["abc123"]


def test_a_resumed_wandb_run_is_one_run(tmp_path):
    """wandb.init(id=..., resume="allow") after a crash writes the same run's log into a new run folder: W&B shows
    one run, and so does rldk, whether the folder or the first log is named (offline, the resumed _step starts at 0
    again: a second segment)."""
    script = textwrap.dedent("""
        import os, sys, time, wandb
        os.environ["WANDB_MODE"] = "offline"
        for part in range(2):
            run = wandb.init(project="p", id="resumed1", resume="allow", dir=sys.argv[1])
            for s in range(10):
                run.log({"train/kl": 0.01 * (10 * part + s)})
            run.finish()
            time.sleep(1.1)  # run folders are named by the second they start
    """)
    env = dict(os.environ, WANDB_SILENT="true", WANDB_DISABLE_GIT="true")
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, env=env, timeout=300)
    logs = sorted(glob.glob(str(tmp_path / "wandb" / "*-resumed1" / "run-resumed1.wandb")))
    assert len(logs) == 2
    for path in (tmp_path / "wandb", logs[0]):
        run = read_run(path)
        assert run.run_id == "resumed1"
        assert run["policy/kl"].values == pytest.approx([0.01 * i for i in range(20)])
        assert run["policy/kl"].steps == list(range(10)) * 2
    assert read_run(logs[1])["policy/kl"].values == pytest.approx([0.01 * i for i in range(10, 20)])


def wandb_boundaries(data):
    offsets, pos = {7}, 7
    while pos + 7 <= len(data):
        left = 32768 - pos % 32768
        pos += left if left < 7 else 7 + int.from_bytes(data[pos + 4:pos + 6], "little")
        offsets.add(pos)
    return offsets


def test_damaged_wandb_logs_give_located_diagnostics(wandb_run, tmp_path):
    _, log = wandb_run
    data = open(log, "rb").read()
    clean = read_run(log)
    for i, (kind, bad) in enumerate(damaged_copies(data, 11, wandb_boundaries(data))):
        path = tmp_path / ("run-d%d.wandb" % i)
        path.write_bytes(bad)
        try:
            run = read_run(path)
        except Unrecognized as e:  # the damage took every history row: the error names the first problem
            assert "byte" in str(e), str(e)
            continue
        assert run.num_points <= clean.num_points  # every chunk is checksummed: damage loses values, never alters
        if run.num_points < clean.num_points:
            assert run.diagnostic_counts, (kind, i)
            assert any("byte" in d["message"] for d in run.diagnostics)


# ---------------------------------------------------------------- monitor tailing a live TensorBoard folder

WRITER = textwrap.dedent("""
    import os, sys, time
    from torch.utils.tensorboard import SummaryWriter
    log_dir, go = sys.argv[1], sys.argv[2]
    w = SummaryWriter(log_dir, flush_secs=1)  # creates the event file (its first record: the file version)
    w.flush()
    while not os.path.exists(go):  # the monitor is following the folder now
        time.sleep(0.02)
    for step in range(40):
        w.add_scalar("train/kl", 0.02 if step < 25 else 0.9, step)
        w.add_scalar("train/reward", 0.5, step)
        w.flush()
        time.sleep(0.05)
    w.close()
""")


def test_monitor_tails_a_tensorboard_folder_while_a_writer_appends(tmp_path):
    log_dir = tmp_path / "tb"
    log_dir.mkdir()
    go = tmp_path / "go"
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - {id: kl_guard, metric: policy/kl, condition: value > 0.5,"
                     " window: {size: 3, kind: consecutive}}\n")
    out = tmp_path / "out"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(log_dir), str(go)])
    try:
        deadline = time.time() + 120
        while not glob.glob(str(log_dir / "events.out.tfevents.*")):
            assert time.time() < deadline and writer.poll() is None, "the writer did not start"
            time.sleep(0.05)
        monitor = subprocess.Popen([rldk_bin(), "monitor", str(log_dir), "--rules", str(rules), "--out", str(out),
                                    "--idle-exit", "5", "--fail-on", "warn"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        go.write_text("go")
        assert writer.wait(timeout=120) == 0
        stdout, stderr = monitor.communicate(timeout=120)
    finally:
        writer.kill()
    assert monitor.returncode == 1, stderr  # an alert at or above --fail-on warn
    alerts = [json.loads(line) for line in (out / "alerts.jsonl").read_text().splitlines()]
    assert alerts and alerts[0]["rule_id"] == "kl_guard" and alerts[0]["step"] == 27
    assert "kl_guard" in stderr


# ---------------------------------------------------------------- MLflow

MLFLOW_ROWS = [{"train/kl": 0.1 * i, "train/reward": [0.5, NAN, INF, -INF, 1e-300][i]} for i in range(5)]

MLFLOW_SCRIPT = textwrap.dedent("""
    import json, sys
    import mlflow
    mlflow.set_tracking_uri(sys.argv[1])
    mlflow.set_experiment("rldk-test")
    rows = [{k: float(v) for k, v in r.items()} for r in json.loads(sys.argv[2])]
    with mlflow.start_run(run_name="ppo-a") as run:
        mlflow.log_params({"learning_rate": "1e-05"})
        mlflow.set_tag("trainer", "trl")
        for step, row in enumerate(rows):
            mlflow.log_metrics(row, step=3 * step, timestamp=1_700_000_000_000 + step)
        print(run.info.run_id)
""")


def mlflow_run(uri):
    rows = [{k: repr(v) for k, v in r.items()} for r in MLFLOW_ROWS]
    env = dict(os.environ, MLFLOW_ALLOW_FILE_STORE="true")
    proc = subprocess.run([sys.executable, "-c", MLFLOW_SCRIPT, uri, json.dumps(rows)], env=env, check=True,
                          capture_output=True, text=True, timeout=300)
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("store", ["file", "sqlite"])
def test_mlflow_stores_read_back_exactly(tmp_path, store):
    target = tmp_path / ("mlruns" if store == "file" else "mlflow.db")
    run_id = mlflow_run(("file://" if store == "file" else "sqlite:///") + str(target))
    runs = read_runs(target)
    assert [r.run_id for r in runs] == [run_id]
    run = runs[0]
    assert run.format == "mlflow"
    kl, reward = run["policy/kl"], run["reward/mean"]
    assert kl.steps == [0, 3, 6, 9, 12]
    assert kl.values == [0.1 * i for i in range(5)]
    assert all(same(a, b) for a, b in zip(reward.values, [r["train/reward"] for r in MLFLOW_ROWS]))
    assert kl.wall_times == [(1_700_000_000_000 + i) / 1000 for i in range(5)]
    assert run.meta["mlflow_run_name"] == "ppo-a"
    assert run.meta["params.learning_rate"] == "1e-05" and run.meta["tags.trainer"] == "trl"
    info = subprocess.run([rldk_bin(), "info", str(target)], capture_output=True, text=True)
    assert info.returncode == 0, info.stderr
    assert "mlflow" in info.stdout


def test_mlflow_bad_metric_lines_are_located(tmp_path):
    mlflow_run("file://" + str(tmp_path / "mlruns"))
    (kl_file,) = glob.glob(str(tmp_path / "mlruns" / "*" / "*" / "metrics" / "train" / "kl"))
    with open(kl_file, "a") as f:
        f.write("garbage line\n1700000000999 0.7 15\n")
    run = read_run(tmp_path / "mlruns")
    assert run["policy/kl"].values[-1] == 0.7
    (d,) = [d for d in run.diagnostics if d["kind"] == "mlflow_bad_line"]
    assert d["file"] == kl_file and d["line"] == 6


# ---------------------------------------------------------------- Metric tables: Parquet, Feather, JSON by column

def wandb_history_frame():
    """A table shaped as W&B's `run.history()` returns it: one row per step, `_step`/`_runtime`/`_timestamp`, and
    NaN where a metric was not logged at that step (the eval score every 5 steps)."""
    pd = pytest.importorskip("pandas")
    steps = np.arange(40)
    return pd.DataFrame({
        "_step": steps, "_runtime": steps * 2.5, "_timestamp": 1_700_000_000 + steps * 2.5,
        "train/kl": 0.01 * steps, "train/reward": np.linspace(0.1, 0.9, 40),
        "eval/score": [0.5 + 0.01 * s if s % 5 == 0 else np.nan for s in steps],
    })


def test_a_wandb_history_export_reads_as_a_run(tmp_path):
    frame = wandb_history_frame()
    frame.to_parquet(tmp_path / "history.parquet")
    indexed = frame.copy()
    indexed.index = indexed.index ** 2  # not a range: pandas keeps it as a column, __index_level_0__
    indexed.to_parquet(tmp_path / "indexed.parquet")
    frame.to_feather(tmp_path / "history.feather")
    for name in ("history.parquet", "indexed.parquet", "history.feather"):
        run = read_run(tmp_path / name)
        assert run.format == ("arrow" if name.endswith("feather") else "parquet"), name
        assert run["policy/kl"].steps == list(range(40)) and same(run["policy/kl"].values[3], 0.03), name
        score = run["eval/score"]
        assert score.steps == list(range(0, 40, 5)) and score.values == [0.5 + 0.01 * s for s in range(0, 40, 5)]
        assert not any(k.startswith("__index_level") or k == "_runtime" for k in run.series), sorted(run.series)
        assert run.diagnostic_counts == {}, name


def test_a_polars_table_keeps_its_nan_and_nulls_are_not_values(tmp_path):
    pl = pytest.importorskip("polars")
    pl.DataFrame({"step": [1, 2, 3, 4], "loss": [0.5, float("nan"), 0.4, None],
                  "run": ["a", "a", "a", "a"]}).write_parquet(tmp_path / "metrics.parquet")
    run = read_run(tmp_path / "metrics.parquet")
    loss = run["train/loss"]
    assert loss.steps == [1, 2, 3] and same(loss.values[1], NAN)


def test_a_folder_reads_a_metrics_table_but_not_completion_samples(tmp_path):
    wandb_history_frame().to_parquet(tmp_path / "run_history.parquet")
    pd = pytest.importorskip("pandas")
    (tmp_path / "completions").mkdir()
    pd.DataFrame({"step": [5, 5], "prompt": ["a", "b"], "completion": ["x", "y"], "reward": [1.0, 0.0],
                  "advantage": [0.5, -0.5]}).to_parquet(tmp_path / "completions" / "completions_00005.parquet")
    runs = read_runs(tmp_path)
    assert [r.run_id for r in runs] == ["run_history"]


def test_damaged_tables_are_an_error_not_a_crash(tmp_path):
    frame = wandb_history_frame()
    frame["note"] = ["step %d" % s for s in range(len(frame))]  # a string column: offsets a damaged file can break
    frame.to_parquet(tmp_path / "history.parquet")
    data = (tmp_path / "history.parquet").read_bytes()
    for cut in (8, len(data) // 2, len(data) - 3):
        (tmp_path / "cut.parquet").write_bytes(data[:cut])
        proc = subprocess.run([rldk_bin(), "info", str(tmp_path / "cut.parquet")], capture_output=True, text=True)
        assert proc.returncode != 0 and "cut.parquet" in proc.stderr and "Parquet" in proc.stderr, proc.stderr
    # Feather's batches are used as stored: flipped bytes in the offsets must be caught, not followed.
    frame.to_feather(tmp_path / "history.feather", compression="uncompressed")
    data = (tmp_path / "history.feather").read_bytes()
    rng = random.Random(7)
    for trial in range(60):
        damaged = bytearray(data)
        for _ in range(3):
            damaged[rng.randrange(8, len(data) - 8)] ^= 1 << rng.randrange(8)
        (tmp_path / "flipped.feather").write_bytes(bytes(damaged))
        proc = subprocess.run([rldk_bin(), "info", str(tmp_path / "flipped.feather")], capture_output=True, text=True)
        assert proc.returncode in (0, 2), (trial, proc.returncode, proc.stderr)


def test_json_dumped_by_column_reads_as_a_run(tmp_path):
    """A loop's history kept as a dict of lists and json.dump'ed, and pandas' to_json layouts of the same table."""
    pd = pytest.importorskip("pandas")
    history = {"steps": [10, 20, 30, 40], "loss": [0.5, 0.4, float("nan"), 0.3], "kl": [0.01, 0.02, 0.03, 0.04],
               "eval_acc": [0.2, 0.3]}  # evaluated every other log call: its own length, left out and reported
    (tmp_path / "metrics.json").write_text(json.dumps(history))
    (tmp_path / "pretty.json").write_text(json.dumps({"config": {"lr": 1e-5}, "history": history}, indent=2))
    for name in ("metrics.json", "pretty.json"):
        run = read_run(tmp_path / name)
        assert run["policy/kl"].steps == [10, 20, 30, 40] and run["policy/kl"].values == [0.01, 0.02, 0.03, 0.04]
        loss = run["train/loss"]
        assert loss.steps == [10, 20, 30, 40] and same(loss.values[2], NAN), name
        assert "eval_acc" not in run and run.diagnostic_counts == {"column_length": 1}, (name, run.diagnostic_counts)
    frame = pd.DataFrame({"step": [10, 20, 30, 40], "loss": [0.5, 0.4, None, 0.3], "kl": [0.01, 0.02, 0.03, 0.04]})
    layouts = {"columns": frame.to_json(), "indexed": frame.set_index("step").to_json(),
               "split": frame.to_json(orient="split"), "split_indexed": frame.set_index("step").to_json(orient="split")}
    for layout, text in layouts.items():
        (tmp_path / (layout + ".json")).write_text(text)
        run = read_run(tmp_path / (layout + ".json"))
        assert run["policy/kl"].steps == [10, 20, 30, 40], (layout, text)
        assert run["train/loss"].steps == [10, 20, 40], layout  # a null cell of a column is a value not logged
        assert run.diagnostic_counts == {}, layout


def test_a_record_with_a_list_beside_its_numbers_stays_a_record(tmp_path):
    lines = [json.dumps({"step": s, "loss": 0.5, "rewards": [0.1, 0.9, 0.5]}) for s in (1, 2, 3)]
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n")
    run = read_run(tmp_path / "log.jsonl")
    assert run["train/loss"].steps == [1, 2, 3]
