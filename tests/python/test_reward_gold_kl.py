"""The gold check against the policy's KL (Gao et al. 2022): the RL form gold = r0 + alpha d - beta d ln d with
d = sqrt(KL) is fitted to per-step gold means, checked against NumPy's least squares, and its peak says when the
run passed the best checkpoint the proxy reward can give."""
import json
import pathlib
import subprocess

import jsonschema
import numpy as np
import pandas as pd
import pytest

import rldk
from test_cli import rldk_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "rldk.reward-health.v1.schema.json").read_text())
WORDS = "the answer checks each case and then states the result with a short reason".split()


def gold_curve(d, r0=0.2, alpha=1.0, beta=1.0):
    return r0 + alpha * d - beta * np.where(d > 0, d * np.log(np.maximum(d, 1e-300)), 0.0)


def write_run(tmp_path, kl_per_step, steps=40, prompts=12, group=4, seed=0):
    """Samples whose gold follows Gao's curve in sqrt(KL) while the proxy keeps rising, and the trainer's KL log."""
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(1, steps + 1):
        d = np.sqrt(kl_per_step * step)
        for p in range(prompts):
            for _ in range(group):
                rows.append({"step": step, "prompt": f"prompt {p}", "completion": " ".join(rng.choice(WORDS, 12)),
                             "reward": 0.02 * step + rng.normal(0, 0.05),
                             "gold": gold_curve(d) + rng.normal(0, 0.02)})
    samples = tmp_path / "samples.jsonl"
    pd.DataFrame(rows).to_json(samples, orient="records", lines=True)
    log = tmp_path / "trainer_log.jsonl"
    with open(log, "w") as f:
        for step in range(1, steps + 1):
            f.write(json.dumps({"step": step, "kl": kl_per_step * step, "loss": 0.1}) + "\n")
    return samples, log, pd.DataFrame(rows)


def health(*args, expect=(0, 1)):
    proc = subprocess.run([rldk_binary(), "reward", "health", "--json"] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in expect, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc


def test_fit_matches_numpy_and_finds_the_peak(tmp_path):
    samples, log, df = write_run(tmp_path, kl_per_step=0.1)   # d up to 2, past the true peak d* = 1 (KL 1)
    doc = health(samples, "--kl-log", log)
    gold = doc["columns"][0]["checks"]["gold"]
    means = df.groupby("step").gold.mean()
    d = np.sqrt(0.1 * means.index.to_numpy())
    x = np.column_stack([np.ones_like(d), d, -d * np.log(d)])
    want, *_ = np.linalg.lstsq(x, means.to_numpy(), rcond=None)
    assert [gold["fit_r0"], gold["fit_alpha"], gold["fit_beta"]] == pytest.approx(want, rel=1e-7, abs=1e-9)
    assert gold["kl_metric"] == "policy/kl" and gold["fit_points"] == 40
    assert gold["peak_kl"] == pytest.approx(1.0, rel=0.15)
    assert gold["past_peak"] is True and gold["last_kl"] == pytest.approx(4.0)
    assert gold["steps"][9]["kl"] == pytest.approx(1.0)
    assert gold["status"] == "finding" and "peaks at KL" in gold["message"]
    # The Python API reads the same log the same way.
    api = rldk.reward.health(str(samples), kl_log=str(log))
    assert api.columns[0]["checks"]["gold"]["peak_kl"] == pytest.approx(gold["peak_kl"], rel=1e-12)


def test_before_the_peak_is_not_a_finding(tmp_path):
    samples, log, _ = write_run(tmp_path, kl_per_step=0.015)  # d up to 0.77 < d* = 1: gold still rising
    gold = health(samples, "--kl-log", log)["columns"][0]["checks"]["gold"]
    assert gold["status"] == "ok", gold["message"]
    assert gold["past_peak"] is False and gold["peak_kl"] > gold["last_kl"]


def test_a_log_without_kl_is_a_clear_error(tmp_path):
    samples, _, _ = write_run(tmp_path, kl_per_step=0.1, steps=6)
    log = tmp_path / "no_kl.jsonl"
    log.write_text("".join(json.dumps({"step": s, "loss": 1.0 / s}) + "\n" for s in range(1, 7)))
    proc = subprocess.run([rldk_binary(), "reward", "health", str(samples), "--kl-log", str(log)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "--kl-log" in proc.stderr and "policy/kl" in proc.stderr
