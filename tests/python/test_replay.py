"""`rldk replay`: re-run a recorded run with its seed and compare."""
import json
import shlex
import subprocess
import sys

import jsonschema

from conftest import ROOT, write
from conftest import rldk_binary

SCHEMA = json.loads((ROOT / "docs" / "schemas" / "rldk.replay.v1.schema.json").read_text())
PY = shlex.quote(sys.executable)
DET_DEMO = shlex.quote(str(ROOT / "examples" / "trainers" / "det_demo.py"))


def replay(tmp_path, run, command, *args, expect_rc):
    proc = subprocess.run([rldk_binary(), "replay", str(run), "--command", command, "--json", "--gate",
                           "--work-dir", str(tmp_path / "work"), *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == expect_rc, proc.stderr + proc.stdout
    if not proc.stdout:
        return proc
    report = json.loads(proc.stdout)
    jsonschema.validate(report, SCHEMA)
    return report


def recorded_run(tmp_path, seed, mode="deterministic"):
    """A run as det_demo.py writes it, plus the seed it was launched with (as a logged value)."""
    out = tmp_path / "original.jsonl"
    subprocess.run([sys.executable, str(ROOT / "examples" / "trainers" / "det_demo.py"), "--mode", mode,
                    "--steps", "20", "--seed", str(seed), "--out", str(out)], check=True)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for line in lines:
        line["seed"] = seed
    return write(out, "\n".join(json.dumps(line) for line in lines) + "\n")


def test_replay_with_the_logged_seed_reproduces(tmp_path):
    run = recorded_run(tmp_path, 7)
    report = replay(tmp_path, run, f"{PY} {DET_DEMO} --steps 20 --seed {{seed}}", expect_rc=0)
    assert report["seed"] == 7 and report["seed_source"] == "logged value"
    assert report["verdict"] == "pass"
    assert report["command"].endswith("--seed 7")
    assert all(m["steps_compared"] == 20 and m["mismatched_steps"] == 0 for m in report["metrics"])


def test_replay_with_another_seed_does_not_reproduce(tmp_path):
    run = recorded_run(tmp_path, 7)
    report = replay(tmp_path, run, f"{PY} {DET_DEMO} --steps 20 --seed {{seed}}", "--seed", 8, expect_rc=1)
    assert report["verdict"] == "fail" and report["seed_source"] == "flag"
    assert all(m["first_mismatch_step"] == 1 for m in report["metrics"])


def test_shorter_replay_compares_common_steps(tmp_path):
    run = recorded_run(tmp_path, 3)
    # The original went on for 5 more steps than the replay will.
    extra = [json.dumps({"step": s, "loss": 0.1, "reward_mean": 0.9, "seed": 3}) for s in range(21, 26)]
    write(run, run.read_text() + "\n".join(extra) + "\n")
    report = replay(tmp_path, run, f"{PY} {DET_DEMO} --steps 20 --seed {{seed}}", "--out", tmp_path / "out",
                    expect_rc=0)
    assert report["steps_only_original"] == 10  # 5 steps x (loss, reward_mean)
    assert all(m["steps_compared"] == 20 for m in report["metrics"])
    assert (tmp_path / "out" / "replay.md").exists()


def test_errors(tmp_path):
    run = recorded_run(tmp_path, 3)
    proc = replay(tmp_path, run, f"{PY} {DET_DEMO} --steps 10", expect_rc=2)  # no {seed} placeholder
    assert "{seed}" in proc.stderr
    report = replay(tmp_path, run, "exit 4 # {seed}", expect_rc=2)
    assert report["verdict"] == "error" and "exit code 4" in report["errors"][0]
    no_seed = write(tmp_path / "noseed.jsonl", '{"step": 1, "loss": 1.0}\n')
    proc = replay(tmp_path / "x", no_seed, "true {seed}", expect_rc=2)
    assert "pass --seed" in proc.stderr
