"""rldk.read_run / read_runs on every supported format: values, counts, non-finite handling, restarts, errors."""
import gzip
import json
import math
import os
import pathlib
import subprocess

import numpy as np
import pytest

import rldk
from conftest import write

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_long_form_values_and_non_finite(tmp_path):
    p = write(tmp_path / "events.jsonl", "\n".join([
        '{"time": "2026-01-01T00:00:00Z", "step": 1, "name": "kl", "value": 0.01, "run_id": "r1"}',
        '{"time": 1767225601, "step": 2, "name": "kl", "value": NaN, "run_id": "r1"}',
        '{"step": 3, "name": "kl", "value": Infinity, "run_id": "r1"}',
        '{"step": 4, "name": "kl", "value": null, "run_id": "r1"}',
        '{"step": 5, "name": "kl", "value": "0.05", "run_id": "r1"}',
        '{"step": 5, "name": "reward_mean", "value": -Infinity, "run_id": "r1"}',
        "this line is broken",
    ]) + "\n")
    run = rldk.read_run(p)
    assert run.run_id == "r1"
    assert run.format == "jsonl"
    assert run.metrics == ["policy/kl", "reward/mean"]
    kl = run["policy/kl"]
    assert kl.steps.tolist() == [1, 2, 3, 4, 5]
    v = kl.values
    assert v[0] == 0.01 and math.isnan(v[1]) and v[2] == math.inf and math.isnan(v[3]) and v[4] == 0.05
    assert kl.non_finite_count == 3
    assert kl.first_non_finite_step == 2
    assert kl.wall_times[0] == 1767225600.0 and kl.wall_times[1] == 1767225601.0 and math.isnan(kl.wall_times[2])
    assert run["reward/mean"].values[0] == -math.inf
    assert run.raw_to_canonical == {"kl": "policy/kl", "reward_mean": "reward/mean"}
    assert run.diagnostic_counts == {"malformed_json": 1}
    assert run.diagnostics[0]["line"] == 7
    assert kl.steps.dtype == np.int64 and kl.values.dtype == np.float64
    assert not kl.values.flags.writeable


def test_restart_starts_a_new_segment(tmp_path):
    lines = [json.dumps({"step": s, "reward": s / 10}) for s in [0, 1, 2, 3, 4, 2, 3, 4, 5]]
    run = rldk.read_run(write(tmp_path / "wide.jsonl", "\n".join(lines) + "\n"))
    segs = run.segments
    assert [(s.index, s.first_step, s.last_step, s.start_line) for s in segs] == [(0, 0, 4, 1), (1, 2, 5, 6)]
    assert run["reward/mean"].segments.tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1]


def test_trainer_state_train_eval_summary(golden_cases):
    run = rldk.read_run(golden_cases / "info_trainer_state" / "run_x" / "trainer_state.json")
    assert run.run_id == "run_x"
    assert run["train/loss"].steps.tolist() == [10, 20]
    assert run["eval/loss"].steps.tolist() == [20] and run["eval/loss"].values.tolist() == [0.1]
    assert run["summary/train_runtime"].values.tolist() == [1234.5]
    assert math.isnan(run["policy/kl"].values[1])  # null in log_history
    assert math.isnan(run["policy/grad_norm"].values[1])  # NaN in log_history
    assert run.meta["trainer_state.global_step"] == "30"


def test_csv_header_change_and_sparse_cells(golden_cases):
    run = rldk.read_run(golden_cases / "info_csv_header_change" / "metrics.csv")
    assert run["val_loss"].steps.tolist() == [3, 4, 5]
    assert run["train_loss_step"].steps.tolist() == [0, 1, 2, 4, 5]
    assert math.isnan(run["train_loss_step"].values[-1])


@pytest.mark.parametrize("name,expected_metric,expected_steps", [
    ("info_console_verl/verl.log", "policy/approx_kl", [1, 2]),
    ("info_console_openrlhf/openrlhf.log", "policy/grad_norm", [1, 2]),
    ("info_verl_file_logger/exp.jsonl", "policy/approx_kl", [1, 2, 3]),
    ("info_tsv/progress.tsv", "rollout/ep_rew_mean", [2048, 4096, 6144]),
])
def test_console_and_framework_formats(golden_cases, name, expected_metric, expected_steps):
    run = rldk.read_run(golden_cases / name)
    assert run[expected_metric].steps.tolist() == expected_steps


def test_compressed_files_match_plain(tmp_path):
    text = "".join(json.dumps({"step": i, "name": "kl", "value": i * 0.5}) + "\n" for i in range(100))
    plain = write(tmp_path / "a.jsonl", text)
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as f:
        f.write(text)
    subprocess.run(["zstd", "-q", "-f", str(plain), "-o", str(tmp_path / "c.jsonl.zst")], check=True)
    values = [rldk.read_run(tmp_path / n)["policy/kl"].values.tolist() for n in ("a.jsonl", "b.jsonl.gz",
                                                                                 "c.jsonl.zst")]
    assert values[0] == values[1] == values[2] == [i * 0.5 for i in range(100)]
    assert rldk.read_run(tmp_path / "b.jsonl.gz").compression == "gzip"
    assert rldk.read_run(tmp_path / "c.jsonl.zst").compression == "zstd"


def test_directory_of_runs(golden_cases):
    runs = rldk.read_runs(golden_cases / "info_directory" / "runs")
    assert [r.run_id for r in runs] == ["seed1", "seed2"]
    with pytest.raises(rldk.UnrecognizedFormatError):
        rldk.read_run(golden_cases / "info_directory" / "runs")


def test_raw_names_and_forced_format(tmp_path):
    p = write(tmp_path / "log.txt", "step=1 kl=0.5\nstep=2 kl=0.6\n")
    run = rldk.read_run(p, canonical=False, run_id="mine")
    assert run.run_id == "mine" and run.metrics == ["kl"]
    with pytest.raises(ValueError):
        rldk.read_run(p, format="parquet")


def test_metric_tables_through_the_python_api(tmp_path):
    """The package reads what the command reads: a Parquet metric table and a history dumped by column."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"_step": [0, 1, 2, 3], "train/kl": [0.01, 0.02, None, 0.04]})
    frame.to_parquet(tmp_path / "history.parquet")
    run = rldk.read_run(tmp_path / "history.parquet")
    assert run.format == "parquet"
    assert run["policy/kl"].steps.tolist() == [0, 1, 3]
    write(tmp_path / "metrics.json", json.dumps({"step": [10, 20], "loss": [0.5, 0.4]}))
    assert rldk.read_run(tmp_path / "metrics.json")["train/loss"].steps.tolist() == [10, 20]


def test_errors_derive_from_builtins(tmp_path):
    with pytest.raises(FileNotFoundError) as missing:
        rldk.read_run(tmp_path / "nope.jsonl")
    assert isinstance(missing.value, rldk.SourceNotFoundError) and isinstance(missing.value, rldk.RldkError)
    write(tmp_path / "blob.bin", b"\x00\x01\x02binary", mode="wb")
    with pytest.raises(ValueError) as binary:
        rldk.read_run(tmp_path / "blob.bin")
    assert isinstance(binary.value, rldk.UnrecognizedFormatError)
    assert "binary" in str(binary.value)
    write(tmp_path / "empty.jsonl", "")
    with pytest.raises(rldk.UnrecognizedFormatError, match="empty"):
        rldk.read_run(tmp_path / "empty.jsonl")


def test_to_pandas_wide_and_long(examples):
    pd = pytest.importorskip("pandas")
    run = rldk.read_run(examples / "ppo_events.jsonl.gz")
    wide = run.to_pandas()
    assert list(wide.columns[:2]) == ["segment", "step"]
    assert set(run.metrics) <= set(wide.columns)
    # 200 steps in the first segment, 110 after the restart at step 150
    assert len(wide) == 310
    assert wide.groupby("segment").size().tolist() == [200, 110]
    long = run.to_pandas(long=True)
    assert len(long) == run.num_points == 1550
    assert long["value"].isna().sum() == 1  # the NaN grad_norm kept as an observation


def test_examples_all_read(examples):
    for path in ["grpo_trl/trainer_state.json", "grpo_trl/console.log", "ppo_events.jsonl.gz", "verl_console.log",
                 "openrlhf_console.log", "sb3_progress.csv"]:
        run = rldk.read_run(examples / path)
        assert run.num_points > 0, path
        assert not run.diagnostic_counts, (path, run.diagnostics)


def test_trl_console_matches_trainer_state(examples):
    """The same run read from the console and from trainer_state.json gives the same values per metric."""
    state = rldk.read_run(examples / "grpo_trl" / "trainer_state.json")
    console = rldk.read_run(examples / "grpo_trl" / "console.log")
    for name in ["policy/kl", "reward/mean", "policy/entropy", "train/loss", "eval/loss"]:
        assert state[name].values.tolist() == console[name].values.tolist(), name
    # console dicts carry no step; the reader takes the optimizer step from the tqdm counter printed before them
    assert console["policy/kl"].steps.tolist() == list(range(10, 301, 10))
    assert state["policy/kl"].steps.tolist() == list(range(10, 301, 10))


def test_metric_dictionary_api():
    assert rldk.canonical_name("actor/ppo_kl") == "policy/approx_kl"
    assert rldk.canonical_name("objective/kl") == "policy/kl_seq"
    assert rldk.canonical_name("train/reward") == "reward/mean"
    assert rldk.canonical_name("something_custom") == "something_custom"
    info = rldk.metric_info("kl")
    assert info["name"] == "policy/kl" and info["aggregation"] == "token_mean"
    assert "kl" in info["aliases"]["trl"]
    assert rldk.metric_info("something_custom") is None
    assert "policy/kl" in rldk.metric_names()


def test_colab_notebook_reads_like_the_cli():
    # A real Unsloth GRPO notebook saved with its outputs: the HF progress table of the training cell is the run.
    notebook = ROOT / "tests" / "fixtures" / "real" / "unsloth_grpo_qwen3_4b_notebook_truncation" / "train.ipynb"
    run = rldk.read_run(str(notebook))
    assert run.format == "console" and "jupyter notebook" in run.format_detail
    assert (run.first_step, run.last_step) == (1, 46)
    clipped = run["response/clipped_frac"]
    assert len(clipped.values) == 46 and float(clipped.values[0]) == 1.0
    assert "rewards/check_answer/mean" in run.metrics
    assert not any(name.startswith("metadata/") for name in run.metrics)
