"""rldk evals against the real libraries: rliable (aggregates, probability of improvement, stratified bootstrap
intervals), SciPy (Welch, Mann-Whitney, paired t, BCa), the seeds-needed table of methods.md §1.2, a calibration of the
gate on simulated A/A and A/B comparisons, and the CLI/Python surfaces of the eval card."""
import importlib
import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import rldk

import scipy.stats as scipy_stats  # an oracle, required (requirements-dev.txt): missing, the tests fail

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "rldk.evals.v1.schema.json").read_text())


def _rliable():
    """rliable 1.2.0 with its bootstrap (arch 7.x). arch 7.2 calls pandas' private deprecate_kwarg with the
    signature pandas < 3 had; pandas 3 added a leading warning class. The shim restores the old call form so that
    rliable's own StratifiedBootstrap runs unchanged; it touches nothing rldk uses."""
    metrics = importlib.import_module("rliable.metrics")  # required oracles: never skipped
    import pandas.util._decorators as decorators
    original = decorators.deprecate_kwarg
    if not getattr(original, "_rldk_shim", False):
        def shim(*args, **kwargs):
            if args and isinstance(args[0], str):
                return original(FutureWarning, *args, **kwargs)
            return original(*args, **kwargs)
        shim._rldk_shim = True
        decorators.deprecate_kwarg = shim
    library = importlib.import_module("rliable.library")
    return metrics, library


def _matrices():
    rng = np.random.default_rng(20261124)
    shapes = [(3, 5), (5, 10), (7, 3), (10, 13), (1, 9), (4, 1)]
    out = [rng.random(s) * 2 for s in shapes]
    out.append(rng.integers(0, 4, size=(6, 8)).astype(float))  # ties everywhere
    return out


def test_aggregates_equal_rliable():
    metrics, _ = _rliable()
    for x in _matrices():
        for name, fn in [("mean", metrics.aggregate_mean), ("median", metrics.aggregate_median),
                         ("iqm", metrics.aggregate_iqm), ("optimality_gap", metrics.aggregate_optimality_gap)]:
            ours = rldk.evals.aggregate(x, name, reps=0).estimate
            assert ours == pytest.approx(float(fn(x)), rel=1e-12, abs=1e-15), (name, x.shape)


def test_probability_of_improvement_equals_rliable():
    metrics, _ = _rliable()
    rng = np.random.default_rng(7)
    for runs_x, runs_y, tasks in [(5, 5, 10), (3, 7, 4), (10, 2, 6)]:
        for discrete in (False, True):
            x = rng.integers(0, 3, (runs_x, tasks)).astype(float) if discrete else rng.random((runs_x, tasks))
            y = rng.integers(0, 3, (runs_y, tasks)).astype(float) if discrete else rng.random((runs_y, tasks))
            ours = rldk.evals.probability_of_improvement(x, y, reps=10).estimate
            assert ours == pytest.approx(float(metrics.probability_of_improvement(x, y)), rel=1e-12)
    same = rng.random((4, 3))
    assert rldk.evals.probability_of_improvement(same, same, reps=10).estimate == 0.5


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_stratified_bootstrap_intervals_match_rliable(method):
    """Different generators, so different resamples: endpoints agree within Monte-Carlo error."""
    metrics, library = _rliable()
    rng = np.random.default_rng(11)
    for x in [rng.random((5, 20)), rng.normal(1, 0.3, (8, 6))]:
        for name, fn in [("iqm", metrics.aggregate_iqm), ("mean", metrics.aggregate_mean),
                         ("optimality_gap", metrics.aggregate_optimality_gap)]:
            np.random.seed(0)  # rliable resamples with the global NumPy generator
            point, ci = library.get_interval_estimates({"x": x}, lambda s: np.array([fn(s)]), reps=10000,
                                                       method=method)
            low, high = ci["x"][:, 0]
            ours = rldk.evals.aggregate(x, name, reps=50000, method=method, seed=1)
            assert ours.estimate == pytest.approx(point["x"][0], rel=1e-12)
            width = high - low
            assert abs(ours.low - low) < 0.03 * width, (name, method, ours, low, high)
            assert abs(ours.high - high) < 0.03 * width, (name, method, ours, low, high)


def test_probability_of_improvement_interval_matches_rliable():
    metrics, library = _rliable()
    rng = np.random.default_rng(5)
    x, y = rng.normal(0.6, 0.2, (5, 3)), rng.normal(0.5, 0.2, (5, 3))
    np.random.seed(0)
    # rliable runs SciPy's mannwhitneyu per task and replicate (about 4 ms each): 2,000 replicates, its README's count.
    point, ci = library.get_interval_estimates(
        {"xy": (x, y)}, lambda a, b: np.array([metrics.probability_of_improvement(a, b)]), reps=2000)
    low, high = ci["xy"][:, 0]
    ours = rldk.evals.probability_of_improvement(x, y, reps=50000, seed=3)
    assert ours.estimate == pytest.approx(point["xy"][0], rel=1e-12)
    assert abs(ours.low - low) < 0.05 * (high - low), (ours, low, high)
    assert abs(ours.high - high) < 0.05 * (high - low), (ours, low, high)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_bootstrap_mean_matches_scipy(method):
    rng = np.random.default_rng(2)
    for values in [rng.exponential(1.0, 40), rng.normal(0, 1, 200), (rng.random(150) < 0.3).astype(float)]:
        ref = scipy_stats.bootstrap((values,), np.mean, n_resamples=20000, method=method,
                                    random_state=np.random.default_rng(0)).confidence_interval
        ours = rldk.evals.bootstrap_mean(values, reps=20000, method=method.lower(), seed=4)
        width = ref.high - ref.low
        assert ours.estimate == pytest.approx(values.mean(), rel=1e-12)
        assert abs(ours.low - ref.low) < 0.03 * width, (method, ours, ref)
        assert abs(ours.high - ref.high) < 0.03 * width, (method, ours, ref)


def test_bootstrap_is_deterministic_under_seed():
    x = np.random.default_rng(1).random((5, 7))
    a = rldk.evals.aggregate(x, "iqm", reps=3000, seed=42)
    b = rldk.evals.aggregate(x, "iqm", reps=3000, seed=42)
    c = rldk.evals.aggregate(x, "iqm", reps=3000, seed=43)
    assert a == b and a != c


def test_welch_hedges_mann_whitney_paired_equal_scipy():
    rng = np.random.default_rng(9)
    for n_a, n_b in [(3, 4), (5, 5), (8, 6), (9, 12), (30, 25)]:
        for discrete in (False, True):
            a = rng.integers(0, 5, n_a).astype(float) if discrete else rng.normal(0, 1, n_a)
            b = rng.integers(0, 5, n_b).astype(float) if discrete else rng.normal(0.5, 1.5, n_b)
            ours = rldk.evals.welch(a, b)
            ref = scipy_stats.ttest_ind(b, a, equal_var=False)
            ci = ref.confidence_interval(0.95)
            assert ours["t"] == pytest.approx(ref.statistic, rel=1e-10)
            assert ours["df"] == pytest.approx(ref.df, rel=1e-10)
            assert ours["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
            assert ours["ci_low"] == pytest.approx(ci.low, rel=1e-9)
            assert ours["ci_high"] == pytest.approx(ci.high, rel=1e-9)
            mw = scipy_stats.mannwhitneyu(b, a, alternative="two-sided")
            assert ours["mann_whitney_u"] == mw.statistic
            assert ours["mann_whitney_p"] == pytest.approx(mw.pvalue, rel=1e-9)
            # Hedges' g: Cohen's d with the pooled SD, times J.
            pooled = ((n_a - 1) * a.var(ddof=1) + (n_b - 1) * b.var(ddof=1)) / (n_a + n_b - 2)
            g = (b.mean() - a.mean()) / math.sqrt(pooled) * (1 - 3 / (4 * (n_a + n_b) - 9))
            assert ours["hedges_g"] == pytest.approx(g, rel=1e-12)
        pa, pb = rng.normal(0, 1, n_a), rng.normal(0.3, 1, n_a)
        ours = rldk.evals.paired(pa, pb)
        ref = scipy_stats.ttest_rel(pb, pa)
        ci = ref.confidence_interval(0.95)
        assert ours["t"] == pytest.approx(ref.statistic, rel=1e-10)
        assert ours["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
        assert ours["ci_low"] == pytest.approx(ci.low, rel=1e-9)
        assert ours["ci_high"] == pytest.approx(ci.high, rel=1e-9)


def test_holm():
    p = [0.01, 0.04, 0.03, 0.005, 0.5]
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    expected, running = [0.0] * m, 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[i]))
        expected[i] = running
    assert rldk.evals.holm(p) == pytest.approx(expected)


def test_seeds_needed_table_of_methods():
    """methods.md §1.2: seeds per arm for power 0.8, equal SDs, alpha 0.05."""
    table = {0.5: (51, 64), 0.8: (21, 26), 1.0: (14, 17), 1.5: (7, 9), 2.0: (5, 6), 3.0: (3, 4)}
    for d, (one, two) in table.items():
        assert rldk.evals.seeds_needed(d, 1.0, two_sided=False) == one
        assert rldk.evals.seeds_needed(d, 1.0, two_sided=True) == two


def _write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def _per_item(tmp_path, name, p, n=300, seed=0, tasks=("gsm8k", "math")):
    rng = np.random.default_rng(seed)
    rows = []
    for task in tasks:
        difficulty = np.random.default_rng(123).random(n)  # the same items for every checkpoint
        for i in range(n):
            rows.append({"item_id": f"{task}-{i}", "task": task,
                         "correct": bool(rng.random() < min(1.0, max(0.0, p + difficulty[i] - 0.5)))})
    path = tmp_path / f"{name}.jsonl"
    _write_jsonl(path, rows)
    return path


def _rldk(*args):
    return subprocess.run(["rldk", *map(str, args)], capture_output=True, text=True)


def test_cli_paired_card_and_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    a = _per_item(tmp_path, "ckpt_a", 0.45, seed=1)
    b = _per_item(tmp_path, "ckpt_b", 0.60, seed=2)
    out = tmp_path / "card"
    r = _rldk("evals", "compare", a, b, "--seed", 3, "--reps", 2000, "--json", "--out", out)
    assert r.returncode == 0, r.stderr
    card = json.loads(r.stdout)
    jsonschema.validate(card, SCHEMA)
    assert card["a"] == "ckpt_a" and card["b"] == "ckpt_b"
    assert [t["design"] for t in card["tasks"]] == ["paired", "paired"]
    assert all(t["verdict"] == "better" and t["ci_low"] > 0 for t in card["tasks"])
    assert card["verdict"] == "better"
    for name in ("evals.json", "evals.md", "evals.html"):
        assert (out / name).stat().st_size > 0
    html = (out / "evals.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html and "<svg" in html
    # Same seed, same card.
    again = _rldk("evals", "compare", a, b, "--seed", 3, "--reps", 2000, "--json")
    assert again.stdout == r.stdout
    # Python returns the same document.
    py = rldk.evals.compare(a, b, seed=3, reps=2000)
    assert py.verdict == card["verdict"] and py.tasks == card["tasks"]


def test_cli_gate_exit_codes(tmp_path):
    a = _per_item(tmp_path, "a", 0.60, seed=1)
    worse = _per_item(tmp_path, "worse", 0.45, seed=2)
    same = _per_item(tmp_path, "same", 0.60, seed=1)
    r = _rldk("evals", "compare", a, worse, "--gate", "--margin", 0.02, "--reps", 500)
    assert r.returncode == 1, r.stderr
    assert "gsm8k: B is worse than A by" in r.stderr
    r = _rldk("evals", "compare", a, same, "--gate", "--margin", 0.02, "--reps", 500)
    assert r.returncode == 0, r.stderr
    r = _rldk("evals", "compare", a, tmp_path / "missing.jsonl", "--gate")
    assert r.returncode == 2
    r = _rldk("evals", "compare", a, "--gate")
    assert r.returncode == 2 and "two arms" in r.stderr


def test_results_table_seeds_design_and_directions(tmp_path):
    rng = np.random.default_rng(4)
    rows = []
    for alg, mu in [("ppo", 0.5), ("grpo", 0.9)]:
        for s in range(6):
            for t in range(4):
                rows.append({"algorithm": alg, "seed": s, "task": f"t{t}", "score": float(rng.normal(mu, 0.1))})
            rows.append({"algorithm": alg, "seed": s, "task": "loss", "score": float(rng.normal(2 - mu, 0.1))})
    path = tmp_path / "table.jsonl"
    _write_jsonl(path, rows)
    card = rldk.evals.compare(path, a="ppo", b="grpo", lower_is_better=["loss"], reps=2000)
    by_task = {t["task"]: t for t in card.tasks}
    assert all(t["design"] == "seeds" for t in card.tasks)
    assert by_task["loss"]["direction"] == "lower"
    assert by_task["loss"]["improvement"] > 0 and by_task["loss"]["verdict"] == "better"
    # Aggregates never mix directions.
    assert [(g["direction"], len(g["tasks"])) for g in card.aggregates] == [("higher", 4), ("lower", 1)]
    # The aggregate's numbers are rliable's on the same matrix.
    metrics, _ = _rliable()
    grpo = np.array([[r["score"] for r in rows if r["algorithm"] == "grpo" and r["seed"] == s and r["task"] != "loss"]
                     for s in range(6)])
    arm = next(x for x in card.aggregates[0]["arms"] if x["arm"] == "grpo")
    assert arm["iqm"]["estimate"] == pytest.approx(metrics.aggregate_iqm(grpo), rel=1e-12)
    ppo = np.array([[r["score"] for r in rows if r["algorithm"] == "ppo" and r["seed"] == s and r["task"] != "loss"]
                    for s in range(6)])
    poi = card.aggregates[0]["probability_of_improvement"]["estimate"]
    assert poi == pytest.approx(metrics.probability_of_improvement(grpo, ppo), rel=1e-12)


def test_eval_metrics_from_run_logs(tmp_path):
    for arm, base in [("base", 0.5), ("tuned", 0.8)]:
        for seed in range(3):
            d = tmp_path / arm / f"seed{seed}"
            d.mkdir(parents=True)
            rows = [{"step": s, "eval/accuracy": base + 0.01 * s + 0.01 * seed, "train/loss": 1.0 / (s + 1),
                     "eval/loss": 2 - base - 0.001 * s + 0.003 * seed * (arm == "tuned")}
                    for s in range(0, 50, 10)]
            _write_jsonl(d / "metrics.jsonl", rows)
    card = rldk.evals.compare(tmp_path / "base", tmp_path / "tuned", runs=True, at="last", reps=500)
    assert card.a == "base" and card.b == "tuned"
    by_task = {t["task"]: t for t in card.tasks}
    task = by_task["eval/accuracy"]
    assert task["design"] == "seeds" and task["direction"] == "higher"
    assert task["seeds_a"] == 3 and task["mean_a"] == pytest.approx(0.5 + 0.4 + 0.01)
    # A loss read from run logs is lower-is-better without being told; the lower loss of B is an improvement.
    loss = by_task["eval/loss"]
    assert loss["direction"] == "lower" and loss["improvement"] > 0
    assert "eval/loss" in card.options["lower_is_better"]
    assert [g["direction"] for g in card.aggregates] == ["higher", "lower"]
    # At a chosen step: the last evaluation at or before it.
    at20 = {t["task"]: t for t in rldk.evals.compare(tmp_path / "base", tmp_path / "tuned", runs=True, at=25,
                                                       reps=200).tasks}
    assert at20["eval/accuracy"]["mean_a"] == pytest.approx(0.5 + 0.2 + 0.01)


def test_gate_calibration_and_power(tmp_path):
    """1,000 simulated A/A comparisons (one task each, read in one table): the gate's one-sided test rejects at its
    nominal 5 %; on A/B with a known effect the two-sided test's rejection rate matches the power calculation."""
    rng = np.random.default_rng(2026)
    trials, seeds = 1000, 10
    rows = []
    for arm, shift in [("a", 0.0), ("aa", 0.0), ("b", 1.2)]:
        for t in range(trials):
            for s in range(seeds):
                rows.append({"arm": arm, "seed": s, "task": f"t{t}", "score": float(rng.normal(shift, 1.0))})
    path = tmp_path / "sim.jsonl"
    _write_jsonl(path, rows)
    aa = rldk.evals.compare(path, a="a", b="aa", reps=100, margin=0.0)
    fpr = np.mean([t["gate_p"] < 0.05 for t in aa.tasks])
    assert 0.03 <= fpr <= 0.07, fpr
    two_sided = np.mean([t["p_value"] < 0.05 for t in aa.tasks])
    assert 0.03 <= two_sided <= 0.07, two_sided
    assert not aa.gate["failed"] or len(aa.gate["reasons"]) <= 2  # Holm across 1,000 tasks
    ab = rldk.evals.compare(path, a="a", b="b", reps=100, effect=1.2)
    observed = np.mean([t["p_value"] < 0.05 and t["improvement"] > 0 for t in ab.tasks])
    predicted = rldk.evals.welch_power(1.2, 1.0, 1.0, seeds)
    # The exact power of the two-sided t test (noncentral t), for reference.
    df = 2 * seeds - 2
    crit = scipy_stats.t.ppf(0.975, df)
    exact = scipy_stats.nct.sf(crit, df, 1.2 / math.sqrt(2 / seeds))
    assert abs(predicted - exact) < 0.02, (predicted, exact)
    assert abs(observed - predicted) < 0.05, (observed, predicted, exact)


def test_results_table_as_csv_and_aggregate_cli(tmp_path):
    rng = np.random.default_rng(8)
    lines = ["algorithm,seed,task,score"]
    for alg, mu in [("dqn", 0.3), ("c51", 0.5)]:
        for s in range(5):
            for t in range(7):
                lines.append("%s,%d,task%d,%r" % (alg, s, t, float(rng.normal(mu, 0.2))))
    path = tmp_path / "results.csv"
    path.write_text("\n".join(lines) + "\n")
    for command in ("aggregate", "summary"):
        r = _rldk("evals", command, path, "--reps", 1000, "--json")
        assert r.returncode == 0, r.stderr
        card = json.loads(r.stdout)
        assert card["verdict"] == "aggregate" and card["a"] is None and card["tasks"] == []
        (group,) = card["aggregates"]
        assert [a["arm"] for a in group["arms"]] == ["dqn", "c51"]
        assert group["probability_of_improvement"] is None
    metrics, _ = _rliable()
    rows = [line.split(",") for line in lines[1:]]
    dqn = np.array([[float(r[3]) for r in rows if r[0] == "dqn" and r[1] == str(s)] for s in range(5)])
    assert group["arms"][0]["iqm"]["estimate"] == pytest.approx(metrics.aggregate_iqm(dqn), rel=1e-12)
    assert group["arms"][0]["optimality_gap"]["estimate"] == pytest.approx(
        metrics.aggregate_optimality_gap(dqn), rel=1e-12)


def test_hostile_task_and_arm_names(tmp_path):
    """Task and arm names come from the data: terminal, Markdown, HTML and JSON stay safe."""
    from test_hostile_cli import HOSTILE_NAMES, HOSTILE_RUN_ID, assert_terminal_safe, check_folder
    lines = []
    for arm in ("base", HOSTILE_RUN_ID):
        for seed in range(3):
            for i, name in enumerate(HOSTILE_NAMES):
                lines.append('{"model": "%s", "seed": %d, "task": "%s", "score": %g}'
                             % (arm, seed, name, 0.1 * i + 0.01 * seed + (0.5 if arm == "base" else 0.0)))
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "card"
    proc = subprocess.run(["rldk", "evals", "compare", str(path), "--out", str(out), "--gate", "--reps", "200",
                           "--lower-is-better", HOSTILE_NAMES[7]], capture_output=True)
    assert proc.returncode in (0, 1), proc.stderr
    assert_terminal_safe(proc, "evals compare")
    check_folder(out, "evals compare")
    card = json.loads((out / "evals.json").read_text())
    assert len(card["tasks"]) == len(HOSTILE_NAMES)


def test_length_controlled_win_rate_is_the_least_squares_intercept():
    rng = np.random.default_rng(12)
    n = 400
    diff = rng.normal(30, 40, n)  # B writes longer answers
    pref = (rng.random(n) < np.clip(0.45 + 0.004 * diff, 0, 1)).astype(float)  # and the judge pays for length
    pref[rng.random(n) < 0.1] = 0.5  # ties
    r = rldk.evals.length_controlled_win_rate(pref, diff, reps=2000, seed=1)
    slope, intercept = np.polyfit(diff, pref, 1)
    assert r["n"] == n
    assert r["win_rate"].estimate == pytest.approx(pref.mean(), rel=1e-12)
    assert r["length_controlled_win_rate"].estimate == pytest.approx(intercept, rel=1e-9)
    assert r["slope"].estimate == pytest.approx(slope, rel=1e-9)
    assert r["length_controlled_win_rate"].estimate < r["win_rate"].estimate
    # The intercept's interval against SciPy's bootstrap of the same fit (within Monte-Carlo error).
    ref = scipy_stats.bootstrap((diff, pref), lambda x, y: np.polyfit(x, y, 1)[1], paired=True, vectorized=False,
                                n_resamples=2000, method="percentile",
                                random_state=np.random.default_rng(0)).confidence_interval
    ours = r["length_controlled_win_rate"]
    width = ref.high - ref.low
    assert abs(ours.low - ref.low) < 0.06 * width and abs(ours.high - ref.high) < 0.06 * width, (ours, ref)


def test_suite_probes_measure_columns_and_skip_with_reasons(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "schemas" / "rldk.evals-suite.v1.schema.json").read_text())
    rng = np.random.default_rng(3)
    rows = [{"step": i, "output": "text", "reward_mean": float(rng.random()), "kl": float(0.1 + 0.05 * rng.random()),
             "toxicity_score": float(0.1 * rng.random())} for i in range(120)]
    path = tmp_path / "samples.jsonl"
    _write_jsonl(path, rows)
    r = _rldk("evals", "evaluate", path, "--suite", "training_metrics", "--json", "--reps", 1000)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    jsonschema.validate(report, schema)
    by_probe = {p["probe"]: p for p in report["probes"]}
    assert by_probe["kl_divergence"]["status"] == "measured" and by_probe["kl_divergence"]["direction"] == "lower"
    assert by_probe["kl_divergence"]["mean"] == pytest.approx(np.mean([x["kl"] for x in rows]), rel=1e-12)
    assert by_probe["reward"]["column"] == "reward_mean"
    assert by_probe["throughput"]["status"] == "skipped" and "tokens_per_second" in by_probe["throughput"]["reason"]
    assert by_probe["reward_alignment"]["status"] == "skipped"
    assert "overall" not in json.dumps(report)
    listing = _rldk("evals", "suites")
    assert listing.returncode == 0 and "training_metrics" in listing.stdout
    assert _rldk("evals", "evaluate", path, "--suite", "nope").returncode == 2


def test_dataframes_in_a_dict_name_their_arms():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    frames = {}
    for arm, p in [("base", 0.4), ("tuned", 0.7)]:
        frames[arm] = pd.DataFrame({"item_id": [f"q{i}" for i in range(120)], "task": "qa",
                                    "correct": rng.random(120) < p})
    card = rldk.evals.compare(frames, reps=500)
    assert card.a == "base" and card.b == "tuned"
    (task,) = card.tasks
    assert task["design"] == "paired" and task["items"] == 120
    with pytest.raises(rldk.InvalidArgumentError):
        rldk.evals.compare({"a/b": frames["base"], "c": frames["tuned"]})


def test_lexicon_probe_says_it_is_a_word_list(tmp_path):
    rows = [{"output": "I'm sorry, but I can't help with that." if i % 4 == 0 else "The answer is 42.",
             "toxicity_score": 0.01} for i in range(100)]
    path = tmp_path / "outputs.jsonl"
    _write_jsonl(path, rows)
    r = _rldk("evals", "evaluate", path, "--suite", "safety", "--json", "--reps", 500)
    assert r.returncode == 0, r.stderr
    refusal = next(p for p in json.loads(r.stdout)["probes"] if p["probe"] == "refusal_rate")
    assert refusal["kind"] == "lexicon" and "not a classifier" in refusal["description"]
    assert refusal["column"] == "output" and refusal["mean"] == pytest.approx(0.25)


def test_suites_from_python():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"kl": [0.1, 0.2, 0.3, 0.2], "reward": [0.5, 0.6, 0.7, 0.8]})
    report = rldk.evals.evaluate(frame, "training_metrics", reps=200)
    by_probe = {p["probe"]: p for p in report.probes}
    assert by_probe["kl_divergence"]["mean"] == pytest.approx(0.2)
    assert by_probe["reward"]["mean"] == pytest.approx(0.65)
    assert "training_metrics" in rldk.evals.suites()
    with pytest.raises(rldk.InvalidArgumentError):
        rldk.evals.evaluate(frame, "no_such_suite")


def test_winrate_command_from_outputs(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "schemas" / "rldk.evals-winrate.v1.schema.json").read_text())
    rng = np.random.default_rng(21)
    rows, prefs, diffs = [], [], []
    for i in range(200):
        words_a, words_b = int(rng.integers(5, 40)), int(rng.integers(5, 80))
        winner = ["a", "b", "tie"][int(rng.integers(0, 3))] if i % 5 else "b"
        rows.append({"output_a": " ".join(["w"] * words_a), "output_b": " ".join(["w"] * words_b), "winner": winner})
        prefs.append({"a": 0.0, "b": 1.0, "tie": 0.5}[winner])
        diffs.append(words_b - words_a)
    path = tmp_path / "judge.jsonl"
    _write_jsonl(path, rows)
    r = _rldk("evals", "winrate", path, "--json", "--reps", 500)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    jsonschema.validate(report, schema)
    assert report["length_unit"] == "words"
    (task,) = report["tasks"]
    slope, intercept = np.polyfit(diffs, prefs, 1)
    assert task["n"] == 200
    assert task["win_rate"]["estimate"] == pytest.approx(np.mean(prefs), rel=1e-12)
    assert task["length_controlled_win_rate"]["estimate"] == pytest.approx(intercept, rel=1e-9)
    assert task["slope"]["estimate"] == pytest.approx(slope, rel=1e-9)
    bad = tmp_path / "bad.jsonl"
    _write_jsonl(bad, [{"winner": "a"}])
    assert _rldk("evals", "winrate", bad).returncode == 2
