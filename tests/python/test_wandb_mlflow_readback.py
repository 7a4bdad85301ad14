"""Runs logged by the real wandb (offline mode) and mlflow (a local file store and a local SQLite store) are read
back by rldk with exactly the values logged: the Python reader and the `rldk` command. No network is used."""
import json
import math
import subprocess

import pytest

import tiny_models  # noqa: F401  (WANDB_MODE=offline and the other offline switches)
from test_cli import rldk_binary

import rldk

# Values chosen to catch lossy decoding: full double precision, tiny and huge magnitudes, negatives, integers,
# and a NaN (a real TRL run logs one when every completion of a window failed).
STEPS = [1, 2, 3, 5, 8]
LOGGED = {
    "kl": [0.012345678901234567, 0.02, 0.0315, 1e-300, 0.5],
    "reward": [-1.25, 0.3333333333333333, 2.0, 7.0, 123456789.123],
    "train/entropy": [3.4, 3.1, 2.9, 2.5, 2.0],
    "grad_norm": [1.5, float("nan"), 2.25, 1e12, 0.0],
}


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def check_run(run):
    for raw, values in LOGGED.items():
        name = rldk.canonical_name(raw)
        assert name in run.metrics, "%s (logged as %s) missing; rldk read %s" % (name, raw, run.metrics)
        series = run[name]
        assert series.steps.tolist() == STEPS, name
        got = series.values.tolist()
        assert len(got) == len(values) and all(same(g, v) for g, v in zip(got, values)), (name, got, values)


def from_store(source, suffix):
    # A wandb/ folder also holds debug.log and debug-internal.log (links into the run), which are text logs,
    # not runs; only the run read from the store itself is compared.
    return source.endswith(suffix) if suffix else True


def the_run_with_metrics(path, suffix=None):
    runs = [r for r in rldk.read_runs(str(path)) if r.metrics and from_store(r.source, suffix)]
    assert len(runs) == 1, [(r.run_id, r.source, r.metrics) for r in runs]
    return runs[0]


def check_cli(path, suffix=None, settings=None):
    """`rldk info` agrees: counts, non-finite counts and the last value of every metric, and the training settings
    found in the run's config or params (nested W&B config keys, dotted MLflow param names)."""
    proc = subprocess.run([rldk_binary(), "info", "--json", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    entries = [r for r in json.loads(proc.stdout)["runs"] if r["metrics"] and from_store(r["source"], suffix)]
    assert len(entries) == 1, entries
    metrics = entries[0]["metrics"]
    for raw, values in LOGGED.items():
        m = metrics[rldk.canonical_name(raw)]
        assert m["count"] == len(values)
        assert m["non_finite"] == sum(1 for v in values if math.isnan(v))
        assert m["last"] == values[-1] and m["first_step"] == STEPS[0] and m["last_step"] == STEPS[-1]
    for name, value in (settings or {}).items():
        assert float(entries[0]["meta"].get("setting." + name, "nan")) == value, entries[0]["meta"]


def test_wandb_offline_run_is_read_back_exactly(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    run = wandb.init(project="rldk-readback", dir=str(tmp_path), config={"learning_rate": 1e-6, "beta": 0.04,
                                                                    "actor": {"entropy_coeff": 0.05}},
                     settings=wandb.Settings(console="off", x_disable_stats=True))
    for i, step in enumerate(STEPS):
        run.log({name: values[i] for name, values in LOGGED.items()}, step=step)
    run.finish()
    # finish() hands the last records to wandb's service process; teardown() waits until it has written them, so
    # the run file is complete before rldk reads it (on a loaded machine the service can lag by seconds).
    wandb.teardown()
    run_files = list((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(run_files) == 1, list((tmp_path / "wandb").rglob("*"))

    check_run(the_run_with_metrics(tmp_path / "wandb", ".wandb"))
    check_run(rldk.read_run(run_files[0]))
    check_cli(tmp_path / "wandb", ".wandb", settings={"entropy_coeff": 0.05})


def log_mlflow(mlflow, tracking_uri):
    mlflow.set_tracking_uri(tracking_uri)
    mlflow.set_experiment("rldk-readback")
    with mlflow.start_run(run_name="grpo-readback"):
        mlflow.log_params({"learning_rate": 1e-6, "beta": 0.04, "actor.entropy_coef": 0.01})
        # A tag named like a setting is a note about the run, not its setting: the param's value is the one read.
        mlflow.set_tag("entropy_coef", "0.5")
        for i, step in enumerate(STEPS):
            mlflow.log_metrics({name: values[i] for name, values in LOGGED.items()}, step=step)


def test_mlflow_file_store_run_is_read_back_exactly(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    # MLflow 3 keeps the file store in maintenance mode behind this switch; existing mlruns/ trees are still common.
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = tmp_path / "mlruns"
    log_mlflow(mlflow, store.as_uri())
    assert list(store.glob("*/*/metrics/kl")), list(store.rglob("*"))
    check_run(the_run_with_metrics(store))
    check_cli(store, settings={"entropy_coeff": 0.01})


def test_mlflow_sqlite_store_run_is_read_back_exactly(tmp_path):
    mlflow = pytest.importorskip("mlflow")
    db = tmp_path / "mlflow.db"
    log_mlflow(mlflow, "sqlite:///%s" % db)
    assert db.stat().st_size > 0
    check_run(the_run_with_metrics(db))
    check_cli(db, settings={"entropy_coeff": 0.01})
