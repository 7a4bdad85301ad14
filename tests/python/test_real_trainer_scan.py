"""A real (tiny, CPU) PPO-style trainer pushed into a known failure, and `rldk scan` must name it.

examples/trainers/torch_policy.py trains a small torch policy for 200 steps. With --fault lr-blowup the learning
rate is multiplied by 300 at step 120: the policy turns deterministic within a few steps (entropy collapse) and
leaves the reference (KL jumps). The healthy run must come out of scan without a critical finding; the broken run
must carry an entropy-collapse finding that starts at or after the step the fault was injected.
"""
import json
import pathlib
import subprocess
import sys

import pytest

from real_logs import rldk_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRAINER = ROOT / "examples" / "trainers" / "torch_policy.py"
STEPS = 200
FAULT_STEP = 120
# The collapse completes within ~15 steps of the injection; a finding later than this names something else.
MAX_DELAY = 40


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Trains the healthy and the broken run side by side (one torch thread each)."""
    out = tmp_path_factory.mktemp("torch_policy")
    paths = {"healthy": out / "healthy.jsonl", "broken": out / "broken.jsonl"}
    common = [sys.executable, str(TRAINER), "--steps", str(STEPS), "--threads", "1"]
    procs = {
        "healthy": subprocess.Popen(common + ["--out", str(paths["healthy"])], stderr=subprocess.PIPE, text=True),
        "broken": subprocess.Popen(common + ["--fault", "lr-blowup", "--fault-step", str(FAULT_STEP),
                                             "--out", str(paths["broken"])], stderr=subprocess.PIPE, text=True),
    }
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, "%s trainer failed: %s" % (name, err[-2000:])
    return paths


def scan(path):
    proc = subprocess.run([rldk_binary(), "scan", "--json", "--fail-on", "never", str(path)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, "rldk scan failed (exit %d): %s" % (proc.returncode, proc.stderr[-2000:])
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "rldk.scan/v1"
    (run,) = doc["runs"]
    return run


def test_trainer_logs_canonical_metrics(runs):
    rows = [json.loads(line) for line in runs["healthy"].read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, STEPS + 1))
    for name in ("policy/kl", "policy/kl_coef", "policy/entropy", "reward/mean", "policy/grad_norm", "policy/lr",
                 "policy/clip_frac", "policy/importance_ratio", "advantage/std", "response/length_mean"):
        assert name in rows[0], name
    # The broken run really broke: entropy collapsed after the injection, and not before.
    broken = [json.loads(line) for line in runs["broken"].read_text().splitlines()]
    before = broken[FAULT_STEP - 2]["policy/entropy"]
    assert broken[FAULT_STEP + 20]["policy/entropy"] < 0.25 * before
    assert rows[-1]["policy/entropy"] > 0.5 * rows[0]["policy/entropy"]


def test_scan_finds_nothing_critical_in_the_healthy_run(runs):
    run = scan(runs["healthy"])
    critical = [f for f in run["findings"] if f["severity"] == "critical"]
    assert not critical, critical


def test_scan_names_the_entropy_collapse_after_the_injection(runs):
    run = scan(runs["broken"])
    collapse = [f for f in run["findings"] if f["fault"] == "entropy_collapse"]
    assert collapse, "no entropy_collapse finding; scan found: %s" % [
        (f["fault"], f["onset_step"]) for f in run["findings"]]
    onset = min(f["onset_step"] for f in collapse)
    assert FAULT_STEP <= onset <= FAULT_STEP + MAX_DELAY, onset
    early_critical = [f for f in run["findings"] if f["severity"] == "critical" and f["onset_step"] < FAULT_STEP]
    assert not early_critical, early_critical
