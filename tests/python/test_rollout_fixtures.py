"""The rollout generators of rollout_fixtures.py (what `rldk reward health` will be judged on) and the harness of
bench/rollout_bench/run.py: the files have the layouts the trainers write, and each synthetic kind really carries
the pathology it is labeled with (measured here with scipy/pandas, independently of rldk)."""
import glob
import importlib.util
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import rollout_fixtures as rf
from conftest import ROOT

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
stats = pytest.importorskip("scipy.stats")

SMALL = dict(steps=9, prompts=4, group=4)


def bench_module():
    spec = importlib.util.spec_from_file_location("rollout_bench_run", ROOT / "bench" / "rollout_bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def within_prompt(df, a, b, key="prompt"):
    """Pearson and Spearman of columns a and b after centring both on their prompt's mean."""
    g = df.groupby(key)
    ca = df[a] - g[a].transform("mean")
    cb = df[b] - g[b].transform("mean")
    return stats.pearsonr(ca, cb), stats.spearmanr(ca, cb)


def thirds(df):
    last = df["step"].max()
    return df[df["step"] <= last // 3], df[(df["step"] > last // 3) & (df["step"] <= 2 * last // 3)], \
        df[df["step"] > 2 * last // 3]


def zero_variance_shares(df):
    """(observed share of GRPO groups with zero reward variance, its expectation sum_g p^G + (1-p)^G with p the
    prompt's pass rate over the whole set)."""
    pass_rate = df.groupby("prompt")["reward"].mean()
    groups = df.groupby("group")
    size = groups.size().iloc[0]
    observed = float((groups["reward"].std() == 0).mean())
    p = groups["prompt"].first().map(pass_rate)
    return observed, float((p ** size + (1 - p) ** size).mean())


# ----------------------------------------------------------------------------------------------------------------
# Layouts

def set_path(tmp_path, fmt):
    return str(tmp_path / {"trl_parquet": "completions", "verl_jsonl": "rollouts", "jsonl": "s.jsonl",
                           "csv": "s.csv"}[fmt])


@pytest.mark.parametrize("fmt", rf.FORMATS)
@pytest.mark.parametrize("kind", rf.KINDS)
def test_every_kind_and_layout_reads_back_as_written(tmp_path, kind, fmt):
    written = rf.write_rollouts(set_path(tmp_path, fmt), kind, fmt, seed=3, **SMALL)
    truth = rf.make_rollouts(kind, seed=3, **SMALL)
    n = SMALL["steps"] * SMALL["prompts"] * SMALL["group"]
    assert written.samples == len(truth) == n
    assert written.expected_checks == rf.EXPECTED_CHECKS.get(kind, ())
    df = rf.read_rollouts(written.path, fmt)
    assert len(df) == n
    assert df["step"].tolist() == truth["step"].tolist() == sorted(truth["step"].tolist())
    assert df["step"].min() == 1 and df["step"].max() == SMALL["steps"]
    assert df["prompt"].tolist() == truth["prompt"].tolist()
    assert df["completion"].tolist() == truth["completion"].tolist()
    np.testing.assert_array_equal(df["reward"].to_numpy(float), truth["reward"].to_numpy())  # exact round trip
    for col in ("rm_v2", "gold"):
        assert (col in df.columns) == (col in truth.columns)
        if col in truth.columns:
            got = df[col].to_numpy(float) if col in df.columns else None
            np.testing.assert_array_equal(got, truth[col].to_numpy())  # NaN where no judge scored
    assert written.reward_columns[1:] == (["rm_v2"] if kind == "rm_swap" else [])
    assert written.gold_column == ("gold" if kind in ("clean", "proxy_up_gold_down") else None)
    # GRPO order: each prompt's completions next to each other, `group` of them, per step.
    blocks = df.groupby((df["prompt"] != df["prompt"].shift()).cumsum()).size()
    assert (blocks % SMALL["group"] == 0).all()
    assert df.groupby("step")["prompt"].nunique().eq(SMALL["prompts"]).all()


def test_trl_layout_is_what_grpo_trainer_writes(tmp_path):
    written = rf.write_rollouts(tmp_path / "completions", "rm_swap", "trl_parquet", **SMALL)
    files = sorted(os.listdir(written.path))
    assert files == ["completions_%05d.parquet" % s for s in range(1, SMALL["steps"] + 1)]
    table = pq.read_table(os.path.join(written.path, files[0]))
    # TRL's table: step, prompt, completion, one column per reward function, extra columns, advantage.
    assert table.column_names == ["step", "prompt", "completion", "quality_reward", "rm_v2", "advantage"]
    assert table.schema.field("step").type == pa.int64()
    assert table.schema.field("prompt").type == pa.string()
    assert table.schema.field("quality_reward").type == pa.float64()
    df = table.to_pandas()
    assert (df["step"] == 1).all() and len(df) == SMALL["prompts"] * SMALL["group"]
    # TRL's default advantage: (r - group mean) / (group std + 1e-4), groups of num_generations consecutive rows.
    group = np.arange(len(df)) // SMALL["group"]
    r = df["quality_reward"]
    expected = (r - r.groupby(group).transform("mean")) / (r.groupby(group).transform("std") + 1e-4)
    np.testing.assert_allclose(df["advantage"], expected, rtol=1e-12)
    gold = pq.read_table(os.path.join(rf.write_rollouts(tmp_path / "gold", "proxy_up_gold_down", "trl_parquet",
                                                        **SMALL).path, files[0]))
    assert gold.column_names == ["step", "prompt", "completion", "quality_reward", "gold", "advantage"]
    assert 0 < gold.column("gold").null_count < gold.num_rows  # a judge scored a subsample


def test_verl_layout_is_what_the_rollout_dump_writes(tmp_path):
    written = rf.write_rollouts(tmp_path / "rollouts", "proxy_up_gold_down", "verl_jsonl", **SMALL)
    assert sorted(os.listdir(written.path), key=lambda f: int(f.split(".")[0])) == \
        ["%d.jsonl" % s for s in range(1, SMALL["steps"] + 1)]
    with open(os.path.join(written.path, "2.jsonl"), encoding="utf-8") as f:
        text = f.read()
    assert text.endswith("\n") and not text.endswith("\n\n")
    rows = [json.loads(line) for line in text.splitlines()]
    assert len(rows) == SMALL["prompts"] * SMALL["group"]
    # verl's key order: input, output, gts, score, step, then the extra reward fields that have a value.
    assert all(list(r)[:5] == ["input", "output", "gts", "score", "step"] for r in rows)
    assert {tuple(list(r)[5:]) for r in rows} <= {(), ("gold",)}
    assert all(r["step"] == 2 and isinstance(r["score"], float) for r in rows)


def test_generic_layouts_use_both_spellings(tmp_path):
    j = rf.write_rollouts(tmp_path / "s.jsonl", "clean", "jsonl", **SMALL)
    with open(j.path) as f:
        first = json.loads(f.readline())
    assert list(first)[:5] == ["step", "prompt", "completion", "reward", "group"]
    c = rf.write_rollouts(tmp_path / "s.csv", "clean", "csv", **SMALL)
    with open(c.path) as f:
        assert f.readline().strip() == "step,prompt,response,score,gold"
    assert c.reward_columns == ["score"] and j.reward_columns == ["reward"]


def test_same_seed_same_bytes_other_seed_other_data(tmp_path):
    a = rf.write_rollouts(tmp_path / "a.jsonl", "length_bias", "jsonl", seed=1, **SMALL)
    b = rf.write_rollouts(tmp_path / "b.jsonl", "length_bias", "jsonl", seed=1, **SMALL)
    c = rf.write_rollouts(tmp_path / "c.jsonl", "length_bias", "jsonl", seed=2, **SMALL)
    read = lambda w: open(w.path, "rb").read()  # noqa: E731
    assert read(a) == read(b) != read(c)


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown kind"):
        rf.make_rollouts("nonsense")
    with pytest.raises(ValueError, match="unknown format"):
        rf.write_rollouts(tmp_path / "x", "clean", "xml")
    with pytest.raises(ValueError, match="steps >= 3"):
        rf.make_rollouts("clean", steps=2)


def test_texts_read_like_answers():
    df = rf.make_rollouts("clean", seed=0)
    texts = df["completion"]
    assert texts.str.match(r"^[A-Z]").all() and texts.str.endswith(".").all()
    assert (df["words"] == texts.str.split().str.len()).all()
    assert df["words"].min() >= 3 and df["words"].max() > 3 * df["words"].min()  # lengths vary
    assert texts.nunique() > 0.95 * len(texts)  # distinct answers, not one string repeated
    assert df["prompt"].nunique() == 16 and df["prompt"].str.endswith(("?", ".")).all()
    per_prompt_median = df.groupby("prompt")["words"].median()
    assert per_prompt_median.max() > 1.8 * per_prompt_median.min()  # prompts differ in how long answers are


# ----------------------------------------------------------------------------------------------------------------
# Each kind carries its pathology, and only it

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clean_has_no_length_effect_no_pinning_and_a_small_trend(seed):
    df = rf.make_rollouts("clean", seed=seed)
    (r, _), (rho, _) = within_prompt(df, "reward", "words")
    assert abs(r) < 0.06 and abs(rho) < 0.06
    assert abs(stats.pearsonr(df["reward"], df["words"])[0]) < 0.08  # prompt offsets are not tied to length
    early, _, late = thirds(df)
    assert 0 < late["reward"].mean() - early["reward"].mean() < 0.08  # a healthy run improves a little
    assert abs(late["words"].mean() - early["words"].mean()) < 0.05 * early["words"].mean()
    assert (df["reward"] > 0.999).mean() == 0 and (df["reward"] < 0.001).mean() == 0
    assert df.groupby("group")["reward"].std().gt(0).all()
    # The gold judge agrees with the proxy and improves with it.
    scored = df.dropna(subset=["gold"])
    assert 0.15 < len(scored) / len(df) < 0.35
    assert stats.spearmanr(scored["reward"], scored["gold"])[0] > 0.7
    assert thirds(scored)[2]["gold"].mean() > thirds(scored)[0]["gold"].mean()
    # KEYWORD appears now and then and is not paid for.
    assert 0.01 < df["keyword"].mean() < 0.06
    assert abs(stats.pearsonr(df["keyword"], df["reward"])[0]) < 0.06


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clean_binary_has_as_many_all_equal_groups_as_pass_rates_predict(seed):
    df = rf.make_rollouts("clean_binary", seed=seed)
    assert set(df["reward"].unique()) == {0.0, 1.0}
    observed, expected = zero_variance_shares(df)
    groups = df["group"].nunique()
    # Binomial tolerance: four standard deviations of the observed share around its expectation.
    assert abs(observed - expected) < 4 * np.sqrt(expected * (1 - expected) / groups) + 0.005
    (r, _), _ = within_prompt(df, "reward", "words")
    assert abs(r) < 0.06


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_length_bias_pays_for_length_within_prompt(seed):
    df = rf.make_rollouts("length_bias", seed=seed)
    (r, p_r), (rho, p_rho) = within_prompt(df, "reward", "words")
    assert r > 0.45 and rho > 0.45 and p_r < 1e-10 and p_rho < 1e-10
    early, _, late = thirds(df)
    assert late["words"].mean() > 1.3 * early["words"].mean()  # the policy got longer ...
    assert late["reward"].mean() > early["reward"].mean() + 0.05  # ... and that is where the gain came from
    # Non-length reward gain (Singhal et al.): the gain within 10 length buckets, weighted by the late samples'
    # share of each, is a small part of the total gain.
    bins = np.quantile(df["words"], np.linspace(0, 1, 11))
    bucket = lambda d: np.clip(np.digitize(d["words"], bins[1:-1]), 0, 9)  # noqa: E731
    gain_in_buckets = (late.groupby(bucket(late))["reward"].mean() - early.groupby(bucket(early))["reward"].mean())
    weight = late.groupby(bucket(late)).size() / len(late)
    assert abs((gain_in_buckets * weight).sum()) < 0.3 * (late["reward"].mean() - early["reward"].mean())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_keyword_shortcut_pays_for_the_keyword_not_for_length(seed):
    df = rf.make_rollouts("keyword_shortcut", seed=seed)
    has = df["completion"].str.lower().str.contains(rf.KEYWORD)
    assert (has == df["keyword"]).all()
    assert df.loc[has, "completion"].str.startswith(rf.KEYWORD.capitalize() + ", ").all()
    df = df.assign(has=has.astype(float))
    (r, p), _ = within_prompt(df, "reward", "has")
    assert r > 0.25 and p < 1e-10
    early, _, late = thirds(df)
    assert early["has"].mean() < 0.3 < 0.45 < late["has"].mean()  # the policy found the shortcut
    (r_len, _), _ = within_prompt(df, "reward", "words")
    assert abs(r_len) < 0.08


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_saturation_pins_late_rewards_at_the_top(seed):
    df = rf.make_rollouts("saturation", seed=seed)
    top = df["reward"].max()
    assert top == 1.0
    early, _, late = thirds(df)
    assert (early["reward"] == top).mean() < 0.02
    assert (late["reward"] == top).mean() > 0.4
    assert late["reward"].std() < 0.7 * early["reward"].std()  # the signal left


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_zero_variance_groups_far_exceed_their_expectation_at_mid_pass_rates(seed):
    df = rf.make_rollouts("zero_variance", seed=seed)
    assert set(df["reward"].unique()) == {0.0, 1.0}
    pass_rate = df.groupby("prompt")["reward"].mean()
    assert pass_rate.between(0.2, 0.8).all()
    observed, expected = zero_variance_shares(df)
    assert expected < 0.05 and observed > 0.4
    # Collapsed groups are collapsed in text too: one answer said G times.
    texts = df.groupby("group")["completion"].nunique()
    assert (texts == 1).mean() > 0.4
    early, _, late = thirds(df)
    assert zero_variance_shares(late)[0] > zero_variance_shares(early)[0] + 0.2  # collapse grows over the run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_proxy_keeps_rising_while_gold_peaks_and_falls(seed):
    df = rf.make_rollouts("proxy_up_gold_down", seed=seed)
    per_step = df.groupby("step").agg(proxy=("reward", "mean"), gold=("gold", "mean"))
    assert stats.spearmanr(per_step.index, per_step["proxy"])[0] > 0.95
    scored = df.dropna(subset=["gold"])
    assert 0.15 < len(scored) / len(df) < 0.35
    early, middle, late = (part["gold"].mean() for part in thirds(scored))
    assert middle > early + 0.03 and late < middle - 0.08  # up, then down
    peak = per_step["gold"].rolling(5, center=True).mean().idxmax()
    assert 0.2 * len(per_step) < peak < 0.7 * len(per_step)
    early_p, _, late_p = (part["reward"].mean() for part in thirds(df))
    assert late_p > early_p + 0.15


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rm_swap_disagrees_on_half_the_prompts(seed):
    df = rf.make_rollouts("rm_swap", seed=seed)
    agree = df.groupby("prompt")["agree"].first()
    assert agree.sum() == len(agree) // 2
    rho = {}
    for prompt, part in df.groupby("prompt"):
        rho[prompt] = stats.spearmanr(part["reward"], part["rm_v2"])[0]
    rho = pd.Series(rho)
    assert (rho[agree[agree].index] > 0.6).all()
    assert (rho[agree[~agree].index] < -0.6).all()
    # Centred over all prompts, the two models look unrelated: the disagreement is invisible in one number.
    (r, _), _ = within_prompt(df, "reward", "rm_v2")
    assert abs(r) < 0.15
    early, _, late = thirds(df)
    lost = late[~late["agree"]]["rm_v2"].mean() - early[~early["agree"]]["rm_v2"].mean()
    assert lost < -0.03  # where they disagree, the policy's progress on rm_v1 costs it on rm_v2


# ----------------------------------------------------------------------------------------------------------------
# The speed file and the bench harness

@pytest.mark.parametrize("fmt", rf.FORMATS)
@pytest.mark.parametrize("kind, scale", [("clean_pairs", 1.0), ("miscalibrated_pairs", 3.0)])
def test_pairs_prefer_by_bradley_terry_and_scale_the_margin(tmp_path, kind, scale, fmt):
    import glob

    import pandas as pd
    from scipy import optimize, special

    name = {"trl_parquet": "pairs_dir", "verl_jsonl": "pairs_dir", "jsonl": "p.jsonl", "csv": "p.csv"}[fmt]
    written = rf.write_pairs(str(tmp_path / name), kind, fmt, seed=1)
    files = glob.glob(os.path.join(written.path, "pairs.*")) if os.path.isdir(written.path) else [written.path]
    read = {".parquet": pd.read_parquet, ".csv": pd.read_csv,
            ".jsonl": lambda f: pd.read_json(f, lines=True, precise_float=True)}[os.path.splitext(files[0])[1]]
    df = read(files[0])
    assert len(df) == written.samples == 600 and written.expected_checks == rf.EXPECTED_CHECKS.get(kind, ())
    z = (df.chosen_score - df.rejected_score).to_numpy()
    # The temperature that makes sigmoid(z / T) calibrated is the margin's scale (the error adds a little).
    t = optimize.minimize_scalar(lambda t: np.mean(np.logaddexp(0, -z / t)), bounds=(0.05, 20), method="bounded").x
    assert t == pytest.approx(scale, rel=0.3)
    assert 0.7 < (z > 0).mean() < 0.9


def test_speed_parquet_holds_distinct_length_biased_texts(tmp_path):
    path = str(tmp_path / "speed.parquet")
    text_bytes = rf.write_speed_parquet(path, samples=20_000, row_group_size=8_192)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == 20_000 and meta.num_row_groups == 3
    df = pd.read_parquet(path)
    assert df.columns.tolist() == ["step", "prompt", "completion", "reward"]
    assert text_bytes == int(df["prompt"].str.len().sum() + df["completion"].str.len().sum())
    assert 80 < text_bytes / len(df) < 130  # about 100 MB per million samples
    assert df["completion"].nunique() > 0.9 * len(df)
    assert df["step"].is_monotonic_increasing
    (r, _), _ = within_prompt(df.assign(chars=df["completion"].str.len()), "reward", "chars")
    assert r > 0.2


def test_pandas_baseline_computes_the_correlations_scipy_computes(tmp_path):
    path = str(tmp_path / "speed.parquet")
    rf.write_speed_parquet(path, samples=5_000, prompts=200, corpus_sentences=5_000)
    got, read_s, compute_s = bench_module().pandas_baseline(path)
    df = pd.read_parquet(path)
    df["chars"] = df["completion"].str.len()
    (r_in, _), (rho_in, _) = within_prompt(df, "reward", "chars")
    assert got["pearson"] == pytest.approx(stats.pearsonr(df["reward"], df["chars"])[0], abs=1e-12)
    assert got["spearman"] == pytest.approx(stats.spearmanr(df["reward"], df["chars"])[0], abs=1e-12)
    assert got["pearson_within_prompt"] == pytest.approx(r_in, abs=1e-12)
    assert got["spearman_within_prompt"] == pytest.approx(rho_in, abs=1e-12)
    assert read_s > 0 and compute_s > 0


def test_bench_scores_detections_and_false_alarms():
    bench = bench_module()

    def report(*findings):
        return {"verdict": "warn", "findings": [dict(zip(("check", "reward", "severity"), f)) for f in findings]}

    hit = bench.score("length_bias", report(("length_bias", "reward", "warning"), ("drift", "reward", "info")))
    assert hit["hit"] is True and hit["fired"] == ["length_bias"]
    miss = bench.score("saturation", report(("length_bias", "reward", "critical"), ("saturation", "reward", "info")))
    assert miss["hit"] is False and miss["fired"] == ["length_bias"]  # info is not an alarm
    quiet = bench.score("clean", report(("drift", "reward", "info")))
    assert quiet["false_alarm"] is False
    noisy = bench.score("clean_binary", report(("zero_variance_groups", "score", "warning")))
    assert noisy["false_alarm"] is True
    results = [dict(hit, fmt="jsonl", seed=0), dict(miss, fmt="csv", seed=0), dict(quiet, fmt="csv", seed=0),
               dict(noisy, fmt="csv", seed=0), {"kind": "clean", "error": "exit 2: boom", "fired": []}]
    table = bench.detection_table(results)
    assert "| length_bias | length_bias | 1/1 detected | 100% | length_bias 1/1 |" in table
    assert "| saturation | saturation | 0/1 detected | 0% | length_bias 1/1 |" in table
    assert "| clean (clean) | none | 0/1 false alarms | 0% | none; 1 run(s) failed |" in table
    assert "| clean_binary (clean) | none | 1/1 false alarms | 100% | zero_variance_groups 1/1 |" in table


def test_bench_plan_covers_every_kind_and_rotates_layouts():
    bench = bench_module()
    rotated = bench.plan(5, "rotate")
    assert len(rotated) == 5 * len(rf.KINDS + rf.PAIR_KINDS)
    assert {fmt for _, fmt, _ in rotated} == set(rf.FORMATS)
    assert len(bench.plan(2, "all")) == 2 * len(rf.FORMATS) * len(rf.KINDS + rf.PAIR_KINDS)


def test_bench_says_clearly_when_there_is_no_rldk(tmp_path):
    script = str(ROOT / "bench" / "rollout_bench" / "run.py")
    proc = subprocess.run([sys.executable, script, "--rldk", str(tmp_path / "no-such-rldk")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "no rldk binary" in proc.stderr
    # An rldk without `reward health` (CLI11 prints the top-level help for an unknown subcommand, exit 0).
    fake = tmp_path / "old-rldk"
    fake.write_text("#!/bin/sh\necho 'Usage: rldk [OPTIONS] SUBCOMMAND'\nexit 0\n")
    fake.chmod(0o755)
    proc = subprocess.run([sys.executable, script, "--rldk", str(fake)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no `reward health` command" in proc.stderr


def test_bench_generate_only_writes_every_set(tmp_path):
    script = str(ROOT / "bench" / "rollout_bench" / "run.py")
    proc = subprocess.run([sys.executable, script, "--generate-only", "--keep", str(tmp_path), "--seeds", "1",
                           "--steps", "6", "--prompts", "3", "--group", "4"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == len(rf.KINDS + rf.PAIR_KINDS)
    assert len(glob.glob(str(tmp_path / "*-s0" / "completions" / "completions_*.parquet"))) == 6 * len(rf.KINDS)


# ----------------------------------------------------------------------------------------------------------------
# A real TRL GRPOTrainer run

def trl_samples(out_dir):
    files = sorted(glob.glob(os.path.join(out_dir, "completions", "completions_*.parquet")))
    return files, pd.concat([pq.read_table(f).to_pandas() for f in files], ignore_index=True)


def test_real_grpo_run_with_a_length_reward_writes_completions_parquet(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    start = time.perf_counter()
    out = rf.run_trl_grpo(tmp_path / "grpo", reward="length", max_steps=30)
    seconds = time.perf_counter() - start
    print("run_trl_grpo(reward='length', max_steps=30): %.1f s" % seconds)
    files, df = trl_samples(out)
    assert [os.path.basename(f) for f in files] == ["completions_%05d.parquet" % s for s in range(1, 31)]
    schema = pq.read_schema(files[0])
    assert schema.names == ["step", "prompt", "completion", "length_reward", "advantage"]
    assert schema.field("step").type == pa.int64() and schema.field("length_reward").type == pa.float64()
    assert schema.field("advantage").type == pa.float64()
    assert len(df) == 30 * 8 and df.groupby("step").size().eq(8).all()
    assert set(df["prompt"]) <= set(__import__("tiny_models").PROMPTS)
    df["words"] = df["completion"].str.split().str.len()
    np.testing.assert_allclose(df["length_reward"], df["words"] / 16)  # the reward really is length
    assert df["words"].std() > 1 and df["words"].max() > df["words"].min()  # lengths vary, so there is a bias
    # GRPO groups: 4 consecutive rows of one prompt; the advantage is centred within each.
    group = np.arange(len(df)) // 4
    assert df.groupby(group)["prompt"].nunique().eq(1).all()
    np.testing.assert_allclose(df.groupby(group)["advantage"].sum(), 0, atol=1e-4)
    (r, _), _ = within_prompt(df.assign(g=group), "length_reward", "words", key="g")
    assert r > 0.99
    early, _, late = thirds(df)
    assert late["words"].mean() > early["words"].mean()  # the policy learned to say more


def test_real_grpo_run_with_a_flat_reward_pays_nothing_for_length(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    out = rf.run_trl_grpo(tmp_path / "grpo", reward="flat", max_steps=30)
    _, df = trl_samples(out)
    assert "flat_reward" in df.columns and df["flat_reward"].between(0, 1).all()
    df["words"] = df["completion"].str.split().str.len()
    group = np.arange(len(df)) // 4
    (r, _), (rho, _) = within_prompt(df.assign(g=group), "flat_reward", "words", key="g")
    assert abs(r) < 0.2 and abs(rho) < 0.2
    assert df.groupby(group)["flat_reward"].std().gt(0).mean() > 0.5  # the reward varies inside groups
