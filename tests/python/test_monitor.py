"""The monitor: in-process rldk.Monitor, and the `rldk monitor` command against real processes, files and a real
HTTP endpoint (a local server)."""
import http.server
import json
import os
import subprocess
import sys
import threading
import time

import pytest

import rldk
from conftest import ROOT, write
from test_cli import rldk_binary

SIM = str(ROOT / "examples" / "trainers" / "sim_grpo.py")


def test_in_process_monitor_fires_and_reports(tmp_path):
    alerts_path = tmp_path / "alerts.jsonl"
    with rldk.Monitor(preset="grpo_safe", alerts_path=alerts_path) as m:
        fired = []
        for step in range(1, 30):
            # The reward moves (a constant one is grpo_safe_reward_saturation's finding, at the end of the data).
            reward = 0.5 + 0.05 * (step % 3)
            fired += m.observe(step, {"kl": 0.05 if step < 20 else 0.5, "train/reward": reward, "note": "text"})
    assert [a["step"] for a in fired] == [22]  # 3 consecutive values above 0.30, after a 12-step grace
    a = fired[0]
    assert a["rule_id"] == "grpo_safe_kl_spike" and a["metric"] == "policy/kl" and a["stop"] is True
    assert a["window"] == [0.5, 0.5, 0.5] and a["actions"] == ["warn", "stop"]
    report = m.report()
    assert report["grpo_safe_kl_spike"]["activations"] == 1
    assert report["grpo_safe_kl_spike"]["first_activation"]["step"] == 22
    records = [json.loads(line) for line in alerts_path.read_text().splitlines()]
    assert [r["action"] for r in records] == ["warn", "stop"] and all(r["status"] == "ok" for r in records)


def test_in_process_monitor_rules_yaml_and_errors():
    m = rldk.Monitor(rules_yaml="rules:\n  - {id: loss_nan, metric: train/loss, condition: isnan(value)}\n")
    assert m.observe(1, {"loss": 0.5}) == []
    assert m.observe(2, {"loss": float("nan")})[0]["rule_id"] == "loss_nan"
    with pytest.raises(ValueError):
        rldk.Monitor(preset="no_such_preset")
    with pytest.raises(ValueError) as bad:
        rldk.Monitor(rules_yaml="rules:\n  - {id: x, metric: kl, condition: 'value >'}\n")
    assert "<rules>:2" in str(bad.value)


def test_monitor_launches_and_stops_a_trainer(tmp_path):
    out = tmp_path / "mon"
    proc = subprocess.run([rldk_binary(), "monitor", "--preset", "grpo_safe", "--out", str(out), "--cmd",
                           "%s %s --steps 400 --runaway-step 100" % (sys.executable, SIM)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr  # stopped by a stop rule: exit 1 with --fail-on stop (the default)
    assert "SIGTERM received" in proc.stdout  # the trainer's own output is passed through
    report = json.loads((out / "report.json").read_text())
    assert report["schema"] == "rldk.monitor-report/v1"
    assert report["summary"]["stop_requested"] is True
    assert report["summary"]["command"]["signals_sent"] == ["SIGTERM"]
    assert report["rules"]["grpo_safe_kl_spike"]["activations"] == 1
    stop = [r for r in report["alerts"] if r["action"] == "stop"]
    assert stop and stop[0]["status"] == "ok"
    # The trainer stopped long before its 400 steps.
    run = rldk.read_run(out / "metrics.jsonl")
    assert run.last_step < 300
    assert run.last_step >= stop[0]["step"]


def test_monitor_cmd_eases_by_settings_the_trainer_prints(tmp_path):
    """A verl trainer prints its overrides (an entropy bonus) on the console and writes its metrics to
    RLDK_METRICS_PATH, a run under another id: the setting holds for that run, so the scan preset's entropy-rise
    rules stay quiet live, as the scan of the same numbers reports them as notes. Without the bonus they warn."""
    def trainer(coeff):
        script = tmp_path / ("trainer_%s.py" % coeff)
        script.write_text(
            "import json, os\n"
            "print('python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.entropy_coeff=%s', flush=True)\n"
            "ent = [0.9, 0.92, 0.88, 0.9, 0.91, 0.89, 0.9, 0.92, 0.9, 0.91, 1.0, 1.5, 2.2, 2.4, 2.5, 2.6, 2.5, 2.6, 2.5, 2.6]\n"
            "with open(os.environ['RLDK_METRICS_PATH'], 'a') as f:\n"
            "    for i, e in enumerate(ent, 1):\n"
            "        f.write(json.dumps({'step': i, 'actor/entropy': e, 'critic/score/mean': 0.5}) + '\\n')\n" % coeff)
        out = tmp_path / ("mon_%s" % coeff)
        proc = subprocess.run([rldk_binary(), "monitor", "--preset", "scan", "--out", str(out), "--sys-interval", "0",
                               "--fail-on", "never", "--cmd", "%s %s" % (sys.executable, script)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        report = json.loads((out / "report.json").read_text())
        return {a["rule_id"] for a in report["alerts"]}
    assert "scan_entropy_above_start" in trainer("0.0")
    assert "scan_entropy_above_start" not in trainer("0.05")


def test_monitor_once_clean_run_exits_zero(tmp_path):
    p = write(tmp_path / "m.jsonl", "".join(json.dumps({"step": s, "name": "kl", "value": 0.05}) + "\n"
                                              for s in range(100)))
    proc = subprocess.run([rldk_binary(), "monitor", "--once", str(p), "--preset", "ppo_strict", "--out",
                           str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["summary"]["observations"] == 100 and report["summary"]["alerts"] == 0


def test_monitor_reads_stdin_until_eof(tmp_path):
    lines = "".join("{'loss': %s, 'kl': 0.01, 'epoch': 0.1}\n" % ("nan" if i == 5 else "0.5") for i in range(8))
    proc = subprocess.run([rldk_binary(), "monitor", "-", "--preset", "grpo_safe", "--out", str(tmp_path / "o"),
                           "--fail-on", "warn"], input=lines, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert "train/loss is nan at step 6" in proc.stderr


def test_monitor_alerts_quickly_while_following_a_file(tmp_path):
    """Follows a growing file; the time from writing the triggering line to the alert record is measured."""
    metrics = tmp_path / "live.jsonl"
    out = tmp_path / "o"
    mon = subprocess.Popen([rldk_binary(), "monitor", str(metrics), "--preset", "grpo_safe", "--out", str(out),
                            "-q"], stderr=subprocess.PIPE, text=True)
    try:
        alerts = out / "alerts.jsonl"
        with open(metrics, "w") as f:
            for step in range(1, 20):
                f.write(json.dumps({"step": step, "name": "loss", "value": 0.5}) + "\n")
                f.flush()
                time.sleep(0.01)
            time.sleep(0.3)
            t0 = time.monotonic()
            f.write(json.dumps({"step": 20, "name": "loss", "value": float("nan")}) + "\n")
            f.flush()
            while time.monotonic() - t0 < 5:
                if alerts.exists() and alerts.read_text().strip():
                    break
                time.sleep(0.002)
            latency = time.monotonic() - t0
        record = json.loads(alerts.read_text().splitlines()[0])
        assert record["rule_id"] == "grpo_safe_nonfinite_guard" and record["step"] == 20
        print("alert latency: %.1f ms" % (latency * 1000))
        assert latency < 1.0  # the goal is 100 ms (bench/monitor_latency.py measures it); CI machines are loaded
    finally:
        mon.terminate()
        mon.wait(timeout=10)
    assert mon.returncode == 1  # interrupted by SIGTERM: a clean exit, report written; 1 since a stop rule fired
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["alerts"] == 1 and [r["action"] for r in report["alerts"]] == ["warn", "stop"]


def test_monitor_stops_an_external_pid(tmp_path):
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        p = write(tmp_path / "m.jsonl", json.dumps({"step": 1, "name": "kl", "value": float("nan")}) + "\n")
        proc = subprocess.run([rldk_binary(), "monitor", "--once", str(p), "--preset", "grpo_safe", "--pid",
                               str(victim.pid), "--stop-grace", "2", "--out", str(tmp_path / "o")],
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 1, proc.stderr
        assert victim.wait(timeout=10) != 0  # terminated by SIGTERM
    finally:
        if victim.poll() is None:
            victim.kill()


class _Hook(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Hook.received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_monitor_webhook_posts_slack_compatible_payload(tmp_path):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = "http://127.0.0.1:%d/hook" % server.server_address[1]
        p = write(tmp_path / "m.jsonl", "".join(json.dumps({"step": s, "name": "kl", "value": 0.5}) + "\n"
                                                  for s in range(1, 20)))
        proc = subprocess.run([rldk_binary(), "monitor", "--once", str(p), "--preset", "ppo_strict", "--webhook", url,
                               "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1, proc.stderr
        assert _Hook.received, proc.stderr
        payload = _Hook.received[0]
        assert payload["text"].startswith("rldk: ") and payload["rule_id"] == "ppo_strict_kl_stop"
        records = [json.loads(l) for l in (tmp_path / "o" / "alerts.jsonl").read_text().splitlines()]
        assert any(r["action"] == "http" and r["status"] == "ok" for r in records)
    finally:
        server.shutdown()


def test_monitor_failed_webhook_is_logged_not_fatal(tmp_path):
    p = write(tmp_path / "m.jsonl", json.dumps({"step": 1, "name": "kl", "value": float("nan")}) + "\n")
    rules = write(tmp_path / "r.yaml", "rules:\n  - id: nan_hook\n    where: not isfinite(value)\n"
                                       "    condition: not isfinite(value)\n"
                                       "    actions: [{http: {url: 'http://127.0.0.1:9/nothing', timeout: 1, retries: 1}}]\n")
    proc = subprocess.run([rldk_binary(), "monitor", "--once", str(p), "--rules", str(rules), "--out",
                           str(tmp_path / "o"), "--fail-on", "warn"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    records = [json.loads(l) for l in (tmp_path / "o" / "alerts.jsonl").read_text().splitlines()]
    assert records[0]["action"] == "http" and records[0]["status"] == "error"
    assert len(records[0]["details"]["attempts"]) == 2


def test_reports_validate_against_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "schemas" / "rldk.monitor-report.v1.schema.json").read_text())
    out = tmp_path / "demo"
    subprocess.run([rldk_binary(), "monitor", "--preset", "grpo_safe", "--preset", "kl_drift", "--out", str(out),
                    "--cmd", "%s %s --runaway-step 60 --steps 300" % (sys.executable, SIM)],
                   capture_output=True, text=True, timeout=120)
    jsonschema.validate(json.loads((out / "report.json").read_text()), schema)
    once = tmp_path / "once"
    subprocess.run([rldk_binary(), "monitor", "--once", str(ROOT / "examples" / "verl_console.log"), "--preset",
                    "grpo_strict", "--out", str(once)], capture_output=True, text=True, timeout=60)
    report = json.loads((once / "report.json").read_text())
    jsonschema.validate(report, schema)
    assert report["summary"]["alerts"] >= 1


DUAL_LOGGER = """
import os, time
import rldk
with rldk.EventWriter(os.environ["RLDK_METRICS_PATH"], run_id="dual", append=False) as w:
    for step in range(1, 41):
        kl = 0.01 if step < 20 else 2.0
        w.log(step, metrics={"kl": kl, "reward": 0.5})
        print({"kl": kl, "reward": 0.5, "step": step}, flush=True)  # the same numbers, printed as TRL prints them
        time.sleep(0.02)
"""


def test_console_copies_of_the_metrics_file_are_not_counted_twice(tmp_path):
    # A trainer that logs to RLDK_METRICS_PATH and prints the same dicts (TRL with the callback does): each number
    # is observed once and each alert fires once, not a second time for the console's run "trainer".
    script = tmp_path / "train.py"
    script.write_text(DUAL_LOGGER)
    out = tmp_path / "out"
    proc = subprocess.run([rldk_binary(), "monitor", "--preset", "grpo_safe", "--fail-on", "never", "--out", str(out),
                           "--cmd", "%s %s" % (sys.executable, script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    alerts = [json.loads(l) for l in (out / "alerts.jsonl").read_text().splitlines() if l.strip()]
    assert alerts, proc.stderr
    assert {a["run_id"] for a in alerts} == {"dual"}
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["observations"] <= 2 * 40 + 5  # kl and reward per step; console copies dropped


def test_a_trainer_that_only_prints_is_still_read_from_its_console(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import time\nfor step in range(1, 41):\n"
                      "    print({'kl': 0.01 if step < 20 else 2.0, 'reward': 0.5}, flush=True)\n    time.sleep(0.01)\n")
    out = tmp_path / "out"
    proc = subprocess.run([rldk_binary(), "monitor", "--preset", "grpo_safe", "--fail-on", "never", "--out", str(out),
                           "--cmd", "%s %s" % (sys.executable, script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    alerts = [json.loads(l) for l in (out / "alerts.jsonl").read_text().splitlines() if l.strip()]
    assert alerts and {a["run_id"] for a in alerts} == {"trainer"}
