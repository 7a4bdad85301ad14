"""`rldk diff` end to end: the bundled learning-rate example, identical runs, and divergences injected at known steps
(spike, level shift, constant offset, slow drift) into one signal of otherwise statistically identical runs."""
import json
import math
import random
import shutil
import subprocess
import sys

import jsonschema
import pytest

from conftest import ROOT, write
from conftest import rldk_binary

SCHEMA = json.loads((ROOT / "docs" / "schemas" / "rldk.diff.v1.schema.json").read_text())


def diff(*args, expect_rc=0):
    proc = subprocess.run([rldk_binary(), "diff", *map(str, args)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == expect_rc, proc.stderr + proc.stdout
    return proc


def diff_json(a, b, *args):
    report = json.loads(diff(a, b, "--json", *args).stdout)
    jsonschema.validate(report, SCHEMA)
    return report


def signal(report, name):
    (entry,) = [s for s in report["signals"] if s["name"] == name]
    return entry


def test_example_generator_is_deterministic(tmp_path):
    shutil.copy(ROOT / "examples" / "diff" / "make_runs.py", tmp_path)
    subprocess.run([sys.executable, str(tmp_path / "make_runs.py")], check=True)
    for name in ("baseline.jsonl", "lr_change.jsonl"):
        assert (tmp_path / name).read_bytes() == (ROOT / "examples" / "diff" / name).read_bytes()


def test_learning_rate_change_makes_kl_diverge_first(tmp_path):
    base, changed = ROOT / "examples" / "diff" / "baseline.jsonl", ROOT / "examples" / "diff" / "lr_change.jsonl"
    report = diff_json(base, changed, "--out", tmp_path / "card")
    first = report["summary"]["first_divergence"]
    # B resumed from step 120 with a 4x learning rate. The exact (noise-free) entropy moves first; KL leaves its
    # noise band a few steps later and keeps drifting up.
    assert 120 <= first["onset_step"] <= first["detected_step"] <= 125, first
    kl = signal(report, "policy/kl")
    assert kl["divergence"]["diverged"] and kl["divergence"]["kind"] == "drift"
    assert 120 <= kl["divergence"]["onset_step"] <= 135
    assert kl["divergence"]["magnitude"] > 0
    assert kl["restart_overrides_b"] == 11  # steps 120..130 were logged twice; the resumed values count
    assert kl["first_difference_step"] == 121  # same seed: identical until the first update with the new lr
    assert kl["max_delta"]["b"] > kl["max_delta"]["a"]
    assert report["b"]["segments"] == 2
    card = tmp_path / "card"
    assert json.loads((card / "diff.json").read_text()) == report
    html = (card / "diff.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "onset" in html
    assert "policy/kl" in (card / "diff.md").read_text()
    # --gate turns the divergence into exit code 1.
    diff(base, changed, "--gate", expect_rc=1)


def noisy_run(path, n, seed, inject=None, signal_name="reward"):
    """Two-signal JSONL run; `inject(step) -> delta` is added to one signal."""
    rng = random.Random(seed)
    lines = []
    for step in range(1, n + 1):
        kl = 0.02 + 0.0002 * step + rng.gauss(0, 0.003)
        reward = 0.3 + 0.5 * (1 - math.exp(-step / 60)) + rng.gauss(0, 0.03)
        values = {"kl": kl, "reward": reward}
        if inject:
            values[signal_name] += inject(step)
        lines.append(json.dumps({"step": step, **values}))
    return write(path, "\n".join(lines) + "\n")


def test_identical_runs_do_not_diverge(tmp_path):
    a = noisy_run(tmp_path / "a.jsonl", 200, 1)
    report = diff_json(a, a)
    assert report["summary"]["verdict"] == "identical"
    assert report["summary"]["first_divergence"] is None
    assert all(not s["divergence"]["diverged"] for s in report["signals"])
    diff(a, a, "--gate", expect_rc=0)


@pytest.mark.parametrize("kind,inject,tolerance", [
    ("spike", lambda s: 0.5 if s == 120 else 0.0, 0),
    ("level_shift", lambda s: 0.15 if s >= 120 else 0.0, 2),
    ("drift", lambda s: 0.006 * (s - 119) if s >= 120 else 0.0, 8),
])
def test_injected_divergence_found_near_its_step(tmp_path, kind, inject, tolerance):
    a = noisy_run(tmp_path / "a.jsonl", 240, 1)
    b = noisy_run(tmp_path / "b.jsonl", 240, 2, inject=inject)
    report = diff_json(a, b)
    first = report["summary"]["first_divergence"]
    assert first is not None, report
    assert first["signal"] == "reward/mean"
    assert first["kind"] == kind
    assert abs(first["onset_step"] - 120) <= tolerance, first
    assert not signal(report, "policy/kl")["divergence"]["diverged"]


def test_constant_offset_is_found_from_the_start(tmp_path):
    a = noisy_run(tmp_path / "a.jsonl", 150, 1)
    b = noisy_run(tmp_path / "b.jsonl", 150, 2, inject=lambda s: 0.012, signal_name="kl")  # ~3 sigma of B - A
    first = diff_json(a, b)["summary"]["first_divergence"]
    assert first["signal"] == "policy/kl"
    assert first["kind"] == "offset"
    assert first["onset_step"] <= 3


def test_different_logging_intervals_and_restart(tmp_path):
    a = noisy_run(tmp_path / "a.jsonl", 100, 1)
    # B logs every 5th step, and restarted: steps 40-50 appear twice, the second time with other values.
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    every5 = [r for r in rows if r["step"] % 5 == 0]
    restart = [dict(r, reward=r["reward"] + 1.0) for r in every5 if r["step"] <= 50]
    redo = [r for r in every5 if 40 <= r["step"] <= 50]
    b = write(tmp_path / "b.jsonl", "\n".join(json.dumps(r) for r in restart + redo + [r for r in every5 if r["step"] > 50]) + "\n")
    report = diff_json(a, b, "--signals", "reward")
    reward = signal(report, "reward/mean")
    assert reward["common_steps"] == 20
    assert reward["steps_only_a"] == 80
    assert reward["restart_overrides_b"] == 3  # 40, 45, 50
    # Steps 5-35 of B's first segment were +1.0 and never re-logged, so they do diverge; 40-50 were fixed.
    assert reward["divergence"]["diverged"]
    assert reward["divergence"]["onset_step"] == 5


def test_bad_input_is_a_clear_error(tmp_path):
    a = noisy_run(tmp_path / "a.jsonl", 20, 1)
    proc = diff(a, tmp_path / "missing.jsonl", expect_rc=2)
    assert "missing.jsonl" in proc.stderr
    proc = diff(a, a, "--signals", "nonexistent_metric", expect_rc=2)
    assert "nonexistent_metric (absent from both runs)" in proc.stderr


@pytest.mark.skipif(shutil.which("chromium") is None, reason="no headless Chromium")
def test_drift_card_renders_in_a_browser(tmp_path):
    base, changed = ROOT / "examples" / "diff" / "baseline.jsonl", ROOT / "examples" / "diff" / "lr_change.jsonl"
    diff(base, changed, "--out", tmp_path)
    png = tmp_path / "shot.png"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1100,1600", "--screenshot=" + str(png), (tmp_path / "diff.html").as_uri()],
                   capture_output=True, timeout=60)
    assert png.exists() and png.stat().st_size > 20000
