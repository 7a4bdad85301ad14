"""OpenRLHF and verl integrations through their console output: `rldk monitor --cmd` launches a trainer that prints
real-format OpenRLHF / verl lines (examples/trainers/sim_openrlhf.py, sim_verl.py), reads the metrics from its
output, and stops it when a guard trips. The parsed values are checked against the printed text itself."""
import ast
import json
import re
import subprocess
import sys

import pytest

import rldk
from conftest import ROOT
from test_cli import rldk_binary

TRAINERS = ROOT / "examples" / "trainers"
OPENRLHF_LINE = re.compile(r"Global step (\d+): (\{.*\})$")
VERL_LINE = re.compile(r"^\(TaskRunner pid=\d+\) (step:\d+ - .*)$")


def run_trainer(script, *args):
    proc = subprocess.run([sys.executable, str(TRAINERS / script), "--step-seconds", "0"] + list(args),
                          capture_output=True, text=True, check=True)
    return proc.stdout


def printed_openrlhf(text):
    """step -> the status dict, parsed from the printed lines with Python's own literal parser."""
    return {int(m.group(1)): ast.literal_eval(m.group(2))
            for m in map(OPENRLHF_LINE.search, text.splitlines()) if m}


def printed_verl(text):
    out = {}
    for m in map(VERL_LINE.match, text.splitlines()):
        if not m:
            continue
        items = m.group(1).split(" - ")
        step = int(items[0].split(":")[1])
        values = {}
        for item in items[1:]:
            key, value = item.split(":", 1)  # the simulated keys hold no ':'
            values[key] = float(re.sub(r"^np\.float64\((.*)\)$", r"\1", value))
        out[step] = values
    return out


@pytest.mark.parametrize("script,printed,detail", [
    ("sim_openrlhf.py", printed_openrlhf, "openrlhf"),
    ("sim_verl.py", printed_verl, "verl"),
])
def test_console_lines_are_read_exactly(tmp_path, script, printed, detail):
    text = run_trainer(script, "--steps", "30", "--runaway-step", "1000")
    log = tmp_path / "train.log"
    log.write_text(text)
    expected = printed(text)
    assert sorted(expected) == list(range(1, 31))
    run = rldk.read_run(log)
    assert run.format == "console" and detail in run.format_detail.lower(), run.format_detail
    checked = 0
    for raw in expected[1]:
        name = rldk.canonical_name(raw)
        if name in ("step",) or raw in ("training/global_step",):
            continue  # the step field, not a metric
        series = run[name]
        assert series.steps.tolist() == sorted(expected), raw
        assert series.values.tolist() == [expected[s][raw] for s in sorted(expected)], raw
        checked += 1
    assert checked >= 10
    assert "policy/kl" in run.metrics


@pytest.mark.parametrize("script,preset,kl_rules", [
    ("sim_openrlhf.py", "grpo_safe", {"grpo_safe_kl_spike"}),
    # A KL that accelerates trips the trend rule (rise over 20 steps) or the level rule (5 steps above 0.35).
    ("sim_verl.py", "ppo_safe", {"ppo_kl_drift_detection", "ppo_high_kl_guard"}),
])
def test_monitor_cmd_stops_a_runaway_trainer(tmp_path, script, preset, kl_rules):
    out = tmp_path / "guard"
    cmd = "%s %s --steps 400 --runaway-step 30 --step-seconds 0.01" % (sys.executable, TRAINERS / script)
    proc = subprocess.run([rldk_binary(), "monitor", "--preset", preset, "--out", str(out), "--stop-grace", "5",
                           "--cmd", cmd], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr  # an alert at the stop level fired
    report = json.loads((out / "report.json").read_text())
    stops = [r for r in report["alerts"] if r["action"] == "stop"]
    assert stops and stops[0]["rule_id"] in kl_rules and stops[0]["status"] == "ok"
    assert stops[0]["metric"] == "policy/kl" and stops[0]["step"] > 30  # after the runaway began, not before
    assert report["summary"]["stop_requested"] is True
    command = report["summary"]["command"]
    assert command["signals_sent"][0] == "SIGTERM" and command["exit_code"] == 0  # it exited cleanly on SIGTERM
    # The trainer really stopped: it never reached its last step, and it stopped soon after the alert.
    last_printed = max((printed_openrlhf if "openrlhf" in script else printed_verl)(proc.stdout))
    assert stops[0]["step"] <= last_printed < 400
    assert last_printed - stops[0]["step"] < 100
    assert "SIGTERM received" in proc.stdout or "Received SIGTERM" in proc.stdout


@pytest.mark.parametrize("script,preset", [("sim_openrlhf.py", "grpo_safe"), ("sim_verl.py", "ppo_safe")])
def test_monitor_cmd_leaves_a_healthy_trainer_alone(tmp_path, script, preset):
    out = tmp_path / "guard"
    cmd = "%s %s --steps 60 --runaway-step 10000 --step-seconds 0" % (sys.executable, TRAINERS / script)
    proc = subprocess.run([rldk_binary(), "monitor", "--preset", preset, "--out", str(out), "--cmd", cmd],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["alerts"] == 0, report["alerts"]
    assert report["summary"]["observations"] >= 60 * 10
    assert report["summary"]["command"]["exit_code"] == 0
