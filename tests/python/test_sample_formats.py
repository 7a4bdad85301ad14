"""The same samples in every sample format rldk reads give the same `rldk reward health` report: pandas writes them as
CSV (plain, with its index column, gzip), TSV, JSONL and Parquet, and a real wandb offline run logs them as
completions tables the way TRL does (wandb.log({"completions": wandb.Table(dataframe=df)}) once per step). Only
the report's "format" may differ. The completions are multi-line text with quotes, commas, tabs and non-ASCII, which
is what CSV quoting has to carry."""
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from test_cli import rldk_binary

WORDS = ["alpha", "beta", "gamma", "delta", "\"quoted\"", "comma,", "tab\there", "naïve", "日本", "emoji 🙂"]


def samples(steps=6, prompts=4, group=4, seed=0):
    """GRPO-shaped samples whose reward pays for length (so the report has findings to agree on), with a second
    reward function, a gold score on a subsample (NaN elsewhere) and TRL's advantage."""
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(1, steps + 1):
        for p in range(prompts):
            prompt = "Question %d:\nExplain \"topic %d\", briefly." % (p, p)
            for _ in range(group):
                n = int(rng.integers(2, 12 + 2 * step))
                lines = [" ".join(rng.choice(WORDS, size=3)) for _ in range(max(1, n // 3))]
                completion = "\n".join(lines) + ("\r\nlast line" if rng.random() < 0.2 else "")
                reward = round(0.05 * n + float(rng.normal(0, 0.1)), 6)
                rows.append({"step": step, "prompt": prompt, "completion": completion, "reward_len": reward,
                             "reward_fmt": round(float(rng.random()), 6),
                             "gold": round(float(rng.normal()), 6) if rng.random() < 0.5 else np.nan})
    df = pd.DataFrame(rows)
    g = df.groupby(["step", "prompt"])["reward_len"]
    df["advantage"] = ((df["reward_len"] - g.transform("mean")) / (g.transform("std") + 1e-4)).round(6)
    return df


def health(path, expect=(0, 1)):
    proc = subprocess.run([rldk_binary(), "reward", "health", "--json", str(path)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode in expect, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def without_format(doc):
    return {k: v for k, v in doc.items() if k != "format"}


def log_wandb_tables(folder, df):
    """A real wandb offline run in `folder` logging one completions table per step, as TRL's GRPOTrainer does."""
    code = """
import os, sys
import pandas as pd
import wandb
df = pd.read_pickle(sys.argv[2])
run = wandb.init(project="rldk-test", dir=sys.argv[1], mode="offline")
for step, part in df.groupby("step", sort=True):
    wandb.log({"train/loss": 0.1 * step})
    wandb.log({"completions": wandb.Table(dataframe=part.reset_index(drop=True))})
run.finish()
"""
    pickle = os.path.join(folder, "samples.pkl")
    df.to_pickle(pickle)
    env = dict(os.environ, WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DISABLE_GIT="true")
    # A child process: wandb's service and its atexit hooks stay out of the test process.
    subprocess.run([sys.executable, "-c", code, folder, pickle], check=True, env=env,
                   timeout=300)
    os.remove(pickle)
    tables = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".table.json")]
    assert len(tables) == df["step"].nunique(), tables
    return folder


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    base = tmp_path_factory.mktemp("formats")
    df = samples()
    paths = {
        "csv": base / "s.csv",
        "csv_index": base / "s_index.csv",
        "csv_gz": base / "s.csv.gz",
        "tsv": base / "s.tsv",
        "jsonl": base / "s.jsonl",
        "parquet": base / "s.parquet",
        "wandb": base / "wandb_run",
    }
    df.to_csv(paths["csv"], index=False)
    df.to_csv(paths["csv_index"])  # pandas' default: its index as an unnamed first column
    df.to_csv(paths["csv_gz"], index=False, compression="gzip")
    df.to_csv(paths["tsv"], sep="\t", index=False)
    df.to_json(paths["jsonl"], orient="records", lines=True, force_ascii=False, double_precision=15)
    df.to_parquet(paths["parquet"], index=False)
    paths["wandb"].mkdir()
    log_wandb_tables(str(paths["wandb"]), df)
    return df, paths


def test_every_format_gives_the_same_report(written):
    df, paths = written
    reference, _ = health(paths["parquet"])
    assert reference["rows"] == len(df)
    assert reference["has_gold"] and reference["has_step"]
    assert [c["name"] for c in reference["columns"]] == ["reward_len", "reward_fmt"]
    assert any(f["check"] == "length_bias" for f in reference["findings"]), reference["findings"]
    formats = {}
    for name, path in paths.items():
        doc, stderr = health(path)
        formats[name] = doc["format"]
        assert without_format(doc) == without_format(reference), name
        assert "warning" not in stderr, (name, stderr)
    assert formats == {"csv": "csv", "csv_index": "csv", "csv_gz": "csv", "tsv": "tsv", "jsonl": "jsonl",
                       "parquet": "parquet (TRL completions)", "wandb": "wandb table"}


def test_wandb_tables_keep_multiline_completions(written):
    df, paths = written
    tables = sorted(os.path.join(d, f) for d, _, fs in os.walk(paths["wandb"]) for f in fs
                    if f.endswith(".table.json"))
    # wandb 0.31 names a table <key>_<W&B step>_<hash>.table.json: its own history step (one per wandb.log call),
    # not the trainer's, which is why the step column wins.
    names = sorted(os.path.basename(t) for t in tables)
    assert all(n.startswith("completions_") for n in names), names
    with open(tables[0], encoding="utf-8") as f:
        table = json.load(f)
    assert table["columns"] == list(df.columns)
    assert any("\n" in row[2] for row in table["data"])


def test_parquet_completions_win_over_wandb_tables(written, tmp_path):
    df, paths = written
    folder = tmp_path / "trainer_output"
    (folder / "completions").mkdir(parents=True)
    for step, part in df.groupby("step"):
        part.to_parquet(folder / "completions" / ("completions_%05d.parquet" % step), index=False)
    os.symlink(os.path.join(paths["wandb"], "wandb"), folder / "wandb")
    doc, stderr = health(folder)
    assert doc["format"] == "parquet (TRL completions)"
    assert "read the Parquet" in stderr and "W&B table" in stderr, stderr
    reference, _ = health(paths["parquet"])
    assert without_format(doc) == without_format(reference)


def test_damaged_csv_is_read_around_the_damage(written, tmp_path):
    df, paths = written
    text = paths["csv"].read_bytes()
    # A writer killed inside a quoted completion, and a row with a field too few before it.
    cut = tmp_path / "cut.csv"
    cut.write_bytes(text + b'6,"a prompt",only two\n6,"a prompt","cut off\nin the mid')
    doc, stderr = health(cut)
    assert doc["rows"] == len(df)
    assert "ends inside a quoted field" in stderr and "row skipped" in stderr, stderr
    lines = text.count(b"\n")
    assert "cut.csv:%d:" % (lines + 1) in stderr and "cut.csv:%d:" % (lines + 2) in stderr, stderr
