"""`rldk monitor --rollouts DIR`: each step's completions file becomes rollout metrics that guard rules fire on, live
while the trainer writes them (a half-written Parquet file is waited for, not misread) and with --once on a finished
folder. The metric values are the ones `rldk reward health` computes on that step alone."""
import glob
import json
import os
import shutil
import subprocess
import time

import pytest

from rollout_fixtures import write_rollouts
from test_cli import rldk_binary


def monitor(*args, timeout=120):
    return subprocess.run([rldk_binary(), "monitor"] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout)


def alerts(out):
    path = out / "alerts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_once_on_a_length_paying_run_fires_and_a_clean_one_does_not(tmp_path):
    paid = write_rollouts(str(tmp_path / "paid" / "completions"), "length_bias", fmt="trl_parquet", seed=1)
    clean = write_rollouts(str(tmp_path / "clean" / "completions"), "clean", fmt="trl_parquet", seed=1)
    out = tmp_path / "out_paid"
    proc = monitor("--once", "--rollouts", tmp_path / "paid", "--preset", "rollouts", "--out", out, "--fail-on", "warn")
    assert proc.returncode == 1, proc.stderr
    fired = {a["rule_id"] for a in alerts(out)}
    assert "rollouts_length_paid" in fired
    out = tmp_path / "out_clean"
    proc = monitor("--once", "--rollouts", clean.path, "--preset", "rollouts", "--out", out, "--fail-on", "warn")
    assert proc.returncode == 0, proc.stderr + json.dumps(alerts(out))
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["observations"] == 4 * 30  # four metrics per step, 30 steps
    assert report["summary"]["sources"] == [clean.path]


def test_metrics_are_the_reward_health_numbers_of_that_step(tmp_path):
    run = write_rollouts(str(tmp_path / "completions"), "length_bias", fmt="trl_parquet", seed=2, steps=6)
    rules = tmp_path / "record.yaml"
    # A rule that fires on every value, so the alert log records each metric the monitor saw.
    rules.write_text("rules:\n" + "".join(
        "  - id: see_%s\n    metric: rollout/%s\n    condition: value > -1e300\n    actions:\n"
        "      - warn: {msg: \"{value:.17g}\"}\n" % (m, m)
        for m in ("sampled_reward_mean", "length_reward_corr", "zero_variance_share")))
    out = tmp_path / "out"
    proc = monitor("--once", "--rollouts", run.path, "--rules", rules, "--out", out)
    assert proc.returncode in (0, 1), proc.stderr
    seen = {(a["rule_id"], a["step"]): float(a["message"]) for a in alerts(out)}
    for f in sorted(glob.glob(os.path.join(run.path, "completions_*.parquet"))):
        doc = json.loads(subprocess.run([rldk_binary(), "reward", "health", "--json", f], capture_output=True,
                                        text=True, check=False).stdout)
        col, step = doc["columns"][0], doc["last_step"]
        assert seen[("see_sampled_reward_mean", step)] == pytest.approx(col["mean"], rel=1e-12)
        assert seen[("see_length_reward_corr", step)] == pytest.approx(
            col["checks"]["length_bias"]["within_spearman"]["r"], rel=1e-12)
        assert seen[("see_zero_variance_share", step)] == pytest.approx(
            col["checks"]["zero_variance_groups"]["observed_share"], rel=1e-12)


def test_live_follow_waits_for_half_written_files(tmp_path):
    source = write_rollouts(str(tmp_path / "source"), "length_bias", fmt="trl_parquet", seed=3, steps=8)
    live = tmp_path / "trainer_output"
    live.mkdir()  # the completions/ folder appears later, as when TRL logs its first step
    out = tmp_path / "out"
    proc = subprocess.Popen([rldk_binary(), "monitor", "--rollouts", str(live), "--preset", "rollouts", "--out",
                             str(out), "--idle-exit", "6", "--fail-on", "warn"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        (live / "completions").mkdir()
        for f in sorted(glob.glob(os.path.join(source.path, "completions_*.parquet"))):
            data = open(f, "rb").read()
            target = live / "completions" / os.path.basename(f)
            with open(target, "wb") as w:  # written in two pieces, with a pause: a Parquet file without its footer
                w.write(data[: len(data) // 2])
                w.flush()
                time.sleep(0.3)
                w.write(data[len(data) // 2:])
        deadline = time.time() + 60
        while time.time() < deadline and not alerts(out):
            time.sleep(0.2)
    finally:
        stdout, stderr = proc.communicate(timeout=90)
    assert "rollouts_length_paid" in {a["rule_id"] for a in alerts(out)}, stderr
    assert proc.returncode == 1
    assert "input problem" not in stderr, stderr  # the half-written files were waited for, not misread
