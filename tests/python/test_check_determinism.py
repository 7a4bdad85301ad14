"""`rldk check-determinism` against real processes: the deterministic and nondeterministic demo trainers, the real
PyTorch loop with and without a seeded DataLoader shuffle, and replicas that crash, hang or log nothing."""
import json
import shlex
import shutil
import subprocess
import sys

import jsonschema
import pytest

from conftest import ROOT
from conftest import rldk_binary

SCHEMA = json.loads((ROOT / "docs" / "schemas" / "rldk.determinism.v1.schema.json").read_text())
PY = shlex.quote(sys.executable)
DET_DEMO = shlex.quote(str(ROOT / "examples" / "trainers" / "det_demo.py"))
TORCH_LOOP = shlex.quote(str(ROOT / "examples" / "trainers" / "torch_shuffle.py"))


def check(tmp_path, command, *args, expect_rc):
    proc = subprocess.run([rldk_binary(), "check-determinism", "--cmd", command, "--json", "--gate",
                           "--no-env-audit", "--work-dir", str(tmp_path / "work"), *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == expect_rc, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    jsonschema.validate(report, SCHEMA)
    return report


def metric(report, name):
    (entry,) = [m for m in report["metrics"] if m["name"] == name]
    return entry


def test_deterministic_demo_passes(tmp_path):
    report = check(tmp_path, f"{PY} {DET_DEMO} --mode deterministic --steps 30", "--replicas", 3,
                   "--compare", "loss,reward_mean,kl", expect_rc=0)
    assert report["verdict"] == "pass"
    assert [m["name"] for m in report["metrics"]] == ["train/loss", "reward/mean", "policy/kl"]
    for m in report["metrics"]:
        assert m["steps_compared"] == 30 and m["divergent_steps"] == 0 and m["max_ulp"] == 0
        assert all(spread == 0 for _, spread in m["spread"])
    assert report["environment"]["PYTHONHASHSEED"] == "0"
    assert report["environment"]["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    assert all(r["ok"] for r in report["replicas"])


def test_nondeterministic_demo_fails_at_the_right_step(tmp_path):
    report = check(tmp_path, f"{PY} {DET_DEMO} --mode nondet --steps 30 --diverge-step 12", "--replicas", 3,
                   "--compare", "loss,reward_mean", "--out", tmp_path / "card", expect_rc=1)
    assert report["verdict"] == "fail"
    for m in report["metrics"]:
        assert m["first_divergent_step"] == 12
        assert m["divergent_steps"] == 19
        assert 1e-3 <= m["max_abs_deviation"] <= 4e-3 + 1e-12
    assert any(h["id"] == "diverges_later" for h in report["hints"])
    card = tmp_path / "card"
    assert json.loads((card / "determinism.json").read_text())["verdict"] == "fail"
    assert "<svg" in (card / "determinism.html").read_text()
    assert "| `train/loss` | 12 |" in (card / "determinism.md").read_text()


def test_tolerance_mode_accepts_what_bitwise_rejects(tmp_path):
    command = f"{PY} {DET_DEMO} --mode nondet --steps 20 --diverge-step 5"
    report = check(tmp_path, command, "--compare", "loss", "--atol", "0.01", expect_rc=0)
    assert report["settings"]["mode"] == "tolerance"
    assert metric(report, "train/loss")["max_abs_deviation"] > 0  # measured although within tolerance


def test_steps_filter(tmp_path):
    command = f"{PY} {DET_DEMO} --mode nondet --steps 20 --diverge-step 10"
    report = check(tmp_path, command, "--compare", "loss", "--steps", "1-9", expect_rc=0)
    assert metric(report, "train/loss")["steps_compared"] == 9


# The real PyTorch loop, two replicas each (two torch processes in parallel: well under 30 s on 2 idle cores).
def test_real_torch_loop_fails_unseeded(tmp_path):
    pytest.importorskip("torch")
    report = check(tmp_path, f"{PY} {TORCH_LOOP} --steps 12", "--compare", "loss,grad_norm", expect_rc=1)
    assert metric(report, "train/loss")["first_divergent_step"] == 1
    assert any(h["id"] == "diverges_from_first_step" for h in report["hints"])


def test_real_torch_loop_passes_seeded(tmp_path):
    pytest.importorskip("torch")
    report = check(tmp_path, f"{PY} {TORCH_LOOP} --steps 12 --fix", "--compare", "loss,grad_norm", expect_rc=0)
    assert report["verdict"] == "pass"


@pytest.mark.parametrize("command,needle", [
    ("if [ \"$RLDK_REPLICA_INDEX\" = 1 ]; then echo 'Traceback: CUDA error' >&2; exit 1; fi; "
     f"{PY} {DET_DEMO} --steps 5", "replica 1 exit code 1"),
    ("true", "logged no metrics"),
    ("sleep 20", "timed out"),
])
def test_broken_replicas_are_errors_never_passes(tmp_path, command, needle):
    report = check(tmp_path, command, "--timeout", 1, expect_rc=2)
    assert report["verdict"] == "error"
    assert any(needle in e for e in report["errors"]), report["errors"]


def test_metric_missing_from_the_logs_is_an_error(tmp_path):
    report = check(tmp_path, f"{PY} {DET_DEMO} --steps 5", "--compare", "no_such_metric", expect_rc=2)
    assert "reference logged no values of no_such_metric" in report["errors"]


def test_console_output_is_read_when_no_metrics_file(tmp_path):
    report = check(tmp_path, "for s in 1 2 3; do echo \"step=$s loss=0.5 reward=1\"; done", "--compare", "loss",
                   expect_rc=0)
    assert metric(report, "train/loss")["steps_compared"] == 3


@pytest.mark.skipif(shutil.which("chromium") is None, reason="no headless Chromium")
def test_determinism_card_renders_in_a_browser(tmp_path):
    check(tmp_path, f"{PY} {DET_DEMO} --mode nondet --steps 30", "--compare", "loss", "--out", tmp_path / "card",
          expect_rc=1)
    png = tmp_path / "shot.png"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1100,1600", "--screenshot=" + str(png),
                    (tmp_path / "card" / "determinism.html").as_uri()], capture_output=True, timeout=60)
    assert png.exists() and png.stat().st_size > 20000
