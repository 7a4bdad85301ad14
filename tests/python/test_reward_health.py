"""`rldk reward health` on real and labeled rollouts (issue 13): a real TRL GRPOTrainer run whose reward pays for
length writes completions Parquet that rldk reads and finds the length bias in, a run whose reward ignores length
does not; every labeled pathology of rollout_fixtures is found and clean sets stay clean; the numbers agree with
scipy on the same samples; the JSON validates; the CLI and the Python API give the same document."""
import json
import pathlib
import subprocess

import jsonschema
import markdown_it
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import rldk
from rollout_fixtures import read_rollouts, run_trl_grpo, write_rollouts
from test_cli import rldk_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "rldk.reward-health.v1.schema.json").read_text())


def health(*args, expect=(0, 1)):
    proc = subprocess.run([rldk_binary(), "reward", "health", "--json"] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in expect, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc


def findings(doc, level=("warning", "critical")):
    return {(f["check"], f["reward"]) for f in doc["findings"] if f["severity"] in level}


@pytest.fixture(scope="module")
def trl_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("trl")
    return {reward: run_trl_grpo(str(base / reward), reward=reward) for reward in ("length", "flat")}


def test_real_trl_run_paying_for_length_is_found(trl_runs):
    doc = health(trl_runs["length"])  # the trainer's output folder: its completions/ folder is read
    assert doc["format"] == "parquet (TRL completions)" and doc["steps"] >= 20
    assert doc["verdict"] in ("warn", "fail")
    [column] = doc["columns"]
    length = column["checks"]["length_bias"]
    assert length["status"] == "finding", length["message"]
    assert length["within_spearman"]["r"] > 0.5 and length["within_spearman"]["p_value"] < 1e-6
    assert ("length_bias", column["name"]) in findings(doc)


def test_real_trl_run_whose_reward_ignores_length_is_not_flagged(trl_runs):
    doc = health(trl_runs["flat"])
    [column] = doc["columns"]
    assert column["checks"]["length_bias"]["status"] == "ok", column["checks"]["length_bias"]["message"]
    assert ("length_bias", column["name"]) not in findings(doc)


@pytest.mark.parametrize("fmt", ["trl_parquet", "verl_jsonl", "jsonl"])
@pytest.mark.parametrize("kind,expected", [
    ("clean", set()), ("clean_binary", set()), ("length_bias", {"length_bias"}), ("saturation", {"saturation"}),
    ("zero_variance", {"zero_variance_groups"}), ("proxy_up_gold_down", {"gold"}),
])
def test_labeled_pathologies(tmp_path, kind, expected, fmt):
    written = write_rollouts(str(tmp_path / kind), kind, fmt=fmt, seed=3)
    doc = health(written.path)
    fired = {check for check, reward in findings(doc) if reward == written.reward_columns[0]}
    assert fired == expected, doc["findings"]
    assert doc["rows"] == written.samples


def test_numbers_agree_with_scipy(tmp_path):
    written = write_rollouts(str(tmp_path / "lb"), "length_bias", fmt="jsonl", seed=1)
    df = read_rollouts(written.path, "jsonl")
    words = df["completion"].str.split().str.len().astype(float)
    reward = df["reward"].astype(float)
    doc = health(written.path)
    lb = doc["columns"][0]["checks"]["length_bias"]
    assert lb["pearson"]["r"] == pytest.approx(stats.pearsonr(reward, words)[0], abs=1e-9)
    assert lb["spearman"]["r"] == pytest.approx(stats.spearmanr(reward, words)[0], abs=1e-9)
    # Within group: both centred on their (step, group) mean first.
    key = [df["step"], df["group"]]
    rc = reward - reward.groupby(key).transform("mean")
    wc = words - words.groupby(key).transform("mean")
    assert lb["within_pearson"]["r"] == pytest.approx(stats.pearsonr(rc, wc)[0], abs=1e-9)
    drift = doc["columns"][0]["checks"]["drift"]
    steps = sorted(df["step"].unique())
    third = len(steps) // 3
    early = reward[df["step"] <= steps[third - 1]]
    late = reward[df["step"] >= steps[-third]]
    assert drift["ks_statistic"] == pytest.approx(stats.ks_2samp(early, late).statistic, abs=1e-12)
    assert drift["wasserstein"] == pytest.approx(stats.wasserstein_distance(early, late), rel=1e-9)


def test_python_api_gives_the_cli_document(tmp_path):
    written = write_rollouts(str(tmp_path / "sat"), "saturation", fmt="trl_parquet", seed=2)
    report = rldk.reward.health(written.path)
    assert report == health(written.path)
    assert report.verdict in ("warn", "fail")
    df = pd.concat(pd.read_parquet(p) for p in sorted(pathlib.Path(written.path).glob("*.parquet")))
    from_frame = rldk.reward.health(df)
    assert from_frame["findings"] == report["findings"]
    per_column = rldk.reward.length_bias(written.path)
    assert set(per_column) == {c["name"] for c in report.columns}
    with pytest.raises(rldk.InvalidArgumentError):
        rldk.reward.health(written.path, reward_range=(1, 0))
    with pytest.raises(rldk.SourceNotFoundError):
        rldk.reward.health(tmp_path / "missing")


def test_gate_out_folder_and_length_bias_command(tmp_path):
    bad = write_rollouts(str(tmp_path / "lb"), "length_bias", fmt="trl_parquet", seed=0)
    clean = write_rollouts(str(tmp_path / "clean"), "clean", fmt="trl_parquet", seed=0)
    out = tmp_path / "report"
    proc = subprocess.run([rldk_binary(), "reward", "health", bad.path, "--gate", "--out", out],
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert {p.name for p in out.iterdir()} == {"reward_health.json", "reward_health.md", "reward_health.html"}
    card = (out / "reward_health.html").read_text()
    assert "Reward card" in card and "length_bias" in card and "<script" not in card
    assert proc.returncode == 1 and "length_bias" in proc.stdout
    assert subprocess.run([rldk_binary(), "reward", "health", clean.path, "--gate"], capture_output=True).returncode == 0
    proc = subprocess.run([rldk_binary(), "reward", "length-bias", bad.path, "--json"], capture_output=True, text=True)
    doc = json.loads(proc.stdout)
    checks = doc["columns"][0]["checks"]
    assert checks["length_bias"]["status"] == "finding"
    assert all(checks[c]["status"] == "not_measurable" for c in ("saturation", "drift", "gold"))
    # The report folder may not land inside the samples it reads.
    proc = subprocess.run([rldk_binary(), "reward", "health", bad.path, "--out", pathlib.Path(bad.path) / "r"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "inside the input folder" in proc.stderr


def test_hostile_text_and_column_names_stay_data(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for step in range(1, 31):
        for g in range(4):
            for k in range(4):
                n = int(rng.integers(3, 40))
                rows.append({"step": step, "prompt": "<script>alert(%d)</script>" % g,
                             "completion": "\x1b]0;pwn\x07 `x` | " + "word " * n,
                             "r`|<b>": float(n) / 40 + rng.normal(0, 0.05)})
    path = tmp_path / "hostile.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = subprocess.run([rldk_binary(), "reward", "health", path], capture_output=True)
    assert proc.returncode == 0
    assert b"\x1b" not in proc.stdout and b"\x07" not in proc.stdout
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(proc.stdout.decode())
    assert "<script" not in html and "<b>" not in html
    assert health(path)["columns"][0]["name"] == "r`|<b>"


DRIFT_SCHEMA = json.loads((ROOT / "docs" / "schemas" / "rldk.reward-drift.v1.schema.json").read_text())


def drift(*args):
    proc = subprocess.run([rldk_binary(), "reward", "drift", "--json"] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, DRIFT_SCHEMA)
    return doc


def test_drift_matches_the_older_tools_score_file_oracle(tmp_path):
    # rldk-reference §5.7: 20 prompts, b = a + 0.15 -> Pearson 1, Spearman 1, drift magnitude 0.15, MAE of z ~ 0.
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, 20)
    prompts = ["prompt %d: math or safety" % i for i in range(20)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"prompt": p, "score": s}) + "\n" for p, s in zip(prompts, a)))
    (tmp_path / "b.jsonl").write_text("".join(json.dumps({"prompt": p, "score": s + 0.15}) + "\n"
                                              for p, s in zip(prompts, a)))
    doc = drift(tmp_path / "a.jsonl", tmp_path / "b.jsonl", "--slice", "math=math")
    assert doc["paired"] == 20
    assert doc["pearson"]["r"] == pytest.approx(1.0) and doc["spearman"]["r"] == pytest.approx(1.0)
    assert doc["older_tool_fields"]["drift_magnitude"] == pytest.approx(0.15)
    assert doc["older_tool_fields"]["mae_z"] == pytest.approx(0.0, abs=1e-9)
    # Paired, unlike the older tool's independent-samples interval [-0.046, 0.346]: the shift is exact.
    assert doc["difference"]["ci_low"] == pytest.approx(0.15) and doc["difference"]["ci_high"] == pytest.approx(0.15)
    assert doc["verdict"] == "drifted"
    assert doc["slices"][0]["n"] == 20


def test_drift_finds_a_swapped_reward_model_and_agrees_with_itself(tmp_path):
    swap = write_rollouts(str(tmp_path / "swap"), "rm_swap", fmt="trl_parquet", seed=0)
    doc = drift(swap.path, swap.path, "--a-col", swap.reward_columns[0], "--b-col", swap.reward_columns[1])
    assert doc["verdict"] == "disagree"
    df = read_rollouts(swap.path, "trl_parquet")
    a, b = df["reward"], df["rm_v2"]
    ca = a - a.groupby(df["prompt"]).transform("mean")
    cb = b - b.groupby(df["prompt"]).transform("mean")
    assert doc["within_pearson"]["r"] == pytest.approx(stats.pearsonr(ca, cb)[0], abs=1e-9)
    assert doc["spearman"]["r"] == pytest.approx(stats.spearmanr(a, b)[0], abs=1e-9)
    same = drift(swap.path, swap.path)
    assert same["verdict"] == "agree" and same["same_prompt_pairs"]["ranking_agreement"] == 1.0
    assert rldk.reward.drift(swap.path, swap.path)["verdict"] == "agree"


def test_drift_kendall_tau_b_matches_scipy(tmp_path):
    # One prompt: the pooled tau-b over same-prompt pairs is SciPy's kendalltau (tau-b), ties included.
    rng = np.random.default_rng(4)
    a = np.round(rng.normal(0, 1, 60), 1)
    b = np.round(0.5 * a + rng.normal(0, 1, 60), 1)
    path = tmp_path / "one_prompt.jsonl"
    pd.DataFrame({"prompt": "p", "completion": [f"c{i}" for i in range(60)], "a": a, "b": b}).to_json(
        path, orient="records", lines=True)
    doc = drift(path, path, "--a-col", "a", "--b-col", "b")
    assert doc["same_prompt_pairs"]["within_kendall"] == pytest.approx(stats.kendalltau(a, b).statistic, rel=1e-12)
