"""`rldk reward health` on preference pairs: calibration of sigma(score difference), checked against SciPy and
scikit-learn on the same pairs, and the verdicts on calibrated, overconfident, random and inverted reward models."""
import json
import pathlib
import subprocess

import jsonschema
import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special, stats
from sklearn import metrics

from test_cli import rldk_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "rldk.reward-health.v1.schema.json").read_text())
WORDS = "the model answer explains why each step follows from the last and checks the result twice".split()


def pairs(n, kind, seed=0):
    """Chosen/rejected pairs whose preference was drawn from a Bradley-Terry model with a known true margin; the
    reward model's scores carry that margin scaled (`overconfident`), ignore it (`random`) or flip it."""
    rng = np.random.default_rng(seed)
    true_margin = rng.normal(0, 1.5, n)            # how much better A is than B
    a_preferred = rng.random(n) < special.expit(true_margin)
    model_margin = {"calibrated": true_margin, "overconfident": 4 * true_margin,
                    "random": rng.normal(0, 1.5, n), "inverted": -true_margin}[kind]
    offset = rng.normal(0, 3, n)                   # a per-prompt offset: only differences matter
    score_a, score_b = offset + model_margin, offset
    text = lambda k: " ".join(rng.choice(WORDS, k))
    rows = []
    for i in range(n):
        a, b = text(8), text(9)
        first = a_preferred[i]
        rows.append({"prompt": f"question {i}: {text(5)}", "chosen": a if first else b, "rejected": b if first else a,
                     "chosen_score": score_a[i] if first else score_b[i],
                     "rejected_score": score_b[i] if first else score_a[i]})
    return pd.DataFrame(rows)


def health(*args, expect=(0, 1)):
    proc = subprocess.run([rldk_binary(), "reward", "health", "--json"] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in expect, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc


def write(df, path):
    if path.suffix == ".parquet":
        df.to_parquet(path)
    else:
        df.to_json(path, orient="records", lines=True)
    return path


def oracle(df, bins=10):
    z = (df.chosen_score - df.rejected_score).to_numpy()   # margin toward the preferred completion
    p = special.expit(z)
    y = np.ones_like(p)
    conf = special.expit(np.abs(z))
    right = np.where(z > 0, 1.0, np.where(z == 0, 0.5, 0.0))
    idx = np.minimum(((conf - 0.5) * 2 * bins).astype(int), bins - 1)
    ece = sum(abs(right[idx == b].sum() - conf[idx == b].sum()) for b in range(bins)) / len(z)
    nll = lambda t: np.mean(np.logaddexp(0, -z / t))
    temperature = optimize.minimize_scalar(nll, bounds=(1e-3, 1e3), method="bounded",
                                           options={"xatol": 1e-10}).x
    k, n = int((z > 0).sum()), int((z != 0).sum())
    test = stats.binomtest(k, n, 0.5)
    return {
        "accuracy": right.mean(),
        "accuracy_ci": test.proportion_ci(confidence_level=0.95, method="wilson") if (z == 0).sum() == 0 else None,
        "accuracy_p_value": test.pvalue,
        # scikit-learn's log-loss and Brier score of the probability that the chosen completion wins.
        "log_loss": metrics.log_loss(y, p, labels=[0, 1]),
        "brier": np.mean((p - y) ** 2),
        "ece": ece,
        "temperature": temperature,
    }


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_numbers_agree_with_scipy_and_scikit_learn(tmp_path, suffix):
    df = pairs(600, "overconfident", seed=3)
    doc = health(write(df, tmp_path / f"pairs{suffix}"))
    c, want = doc["calibration"], oracle(df)
    assert doc["pairs"] == 600 and c["pairs"] == 600
    assert c["accuracy"] == pytest.approx(want["accuracy"], abs=1e-12)
    assert (c["accuracy_ci_low"], c["accuracy_ci_high"]) == pytest.approx(tuple(want["accuracy_ci"]), abs=1e-9)
    assert c["accuracy_p_value"] == pytest.approx(want["accuracy_p_value"], rel=1e-6, abs=1e-300)
    assert c["log_loss"] == pytest.approx(want["log_loss"], rel=1e-9)
    assert c["brier"] == pytest.approx(want["brier"], rel=1e-9)
    assert c["ece"] == pytest.approx(want["ece"], abs=1e-12)
    assert c["ece_ci_low"] <= c["ece"] <= c["ece_ci_high"]
    assert c["temperature"] == pytest.approx(want["temperature"], rel=1e-5)
    assert sum(b["pairs"] for b in c["bins"]) == 600


@pytest.mark.parametrize("kind, severity", [("calibrated", None), ("overconfident", "critical"),
                                            ("random", "warning"), ("inverted", "critical")])
def test_verdicts(tmp_path, kind, severity):
    for seed in range(3):
        doc = health(write(pairs(800, kind, seed), tmp_path / f"{kind}{seed}.jsonl"))
        c = doc["calibration"]
        got = c["severity"] if c["status"] == "finding" else None
        assert got == severity, (kind, seed, c["message"])
    if kind == "overconfident":
        assert c["temperature"] == pytest.approx(4, rel=0.25)
        assert "overconfident" in c["message"]
        assert c["confidently_wrong"] and c["confidently_wrong"][0]["confidence"] > 0.99
        assert doc["verdict"] == "fail"
        assert {"check": "calibration", "reward": None, "severity": "critical",
                "message": c["message"]} in doc["findings"]


def test_a_b_pairs_with_text_labels_and_ties(tmp_path):
    df = pairs(300, "calibrated", seed=5)
    rng = np.random.default_rng(1)
    swap = rng.random(len(df)) < 0.5
    ab = pd.DataFrame({
        "prompt": df.prompt,
        "response_a": np.where(swap, df.rejected, df.chosen), "response_b": np.where(swap, df.chosen, df.rejected),
        "score_a": np.where(swap, df.rejected_score, df.chosen_score),
        "score_b": np.where(swap, df.chosen_score, df.rejected_score),
        "winner": np.where(swap, "model_b", "model_a"),
    })
    ab.loc[:9, "winner"] = "tie"
    doc = health(write(ab, tmp_path / "ab.parquet"))
    c = doc["calibration"]
    assert c["pairs"] == 290 and c["label_ties"] == 10
    assert c["accuracy"] == pytest.approx(oracle(df.iloc[10:])["accuracy"], abs=1e-12)
    # Without a label, A/B pairs say nothing about which was preferred: a clear error, not a guess.
    proc = subprocess.run([rldk_binary(), "reward", "health", str(write(ab.drop(columns="winner"),
                                                                         tmp_path / "nolabel.jsonl"))],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "label" in proc.stderr


def test_too_few_or_unscored_pairs_are_not_measurable(tmp_path):
    doc = health(write(pairs(20, "calibrated"), tmp_path / "few.jsonl"))
    assert doc["calibration"]["status"] == "not_measurable" and "needs 50" in doc["calibration"]["reason"]
    unscored = pairs(100, "calibrated").drop(columns=["chosen_score", "rejected_score"])
    doc = health(write(unscored, tmp_path / "unscored.jsonl"))
    assert doc["calibration"]["unscored"] == 100 and doc["calibration"]["status"] == "not_measurable"


def test_card_shows_the_reliability_diagram_and_quotes_escaped(tmp_path):
    df = pairs(400, "overconfident", seed=2)
    df.loc[:, "prompt"] = "<script>alert(1)</script> " + df.prompt
    src = write(df, tmp_path / "pairs.jsonl")
    out = tmp_path / "report"
    proc = subprocess.run([rldk_binary(), "reward", "health", str(src), "--out", str(out), "--gate"],
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    html = (out / "reward_health.html").read_text()
    assert "reliability" in html and "<svg" in html and "Most confidently wrong pairs" in html
    assert "<script>alert(1)" not in html and "&lt;script&gt;" in html
    md = (out / "reward_health.md").read_text()
    assert "## Preference pairs" in md and "fitted temperature" in md
