"""`rldk monitor --from-mlflow RUN_ID` against a real MLflow tracking server (`mlflow server` on 127.0.0.1, SQLite
backend) while a client logs to it: every value arrives exactly once (NaN and infinities included), a guard fires
at the step where the client's KL runs away, and the live session ends by itself when the run is finished."""
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from test_cli import rldk_binary

mlflow = pytest.importorskip("mlflow")

RULES = ("rules:\n"
         "  - {id: kl_high, metric: kl, condition: value > 1.0}\n"
         "  - {id: reward_nonfinite, metric: reward, condition: not isfinite(value)}\n")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlflow_server")
    port = _free_port()
    uri = "http://127.0.0.1:%d" % port
    proc = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
                             "--backend-store-uri", "sqlite:///%s" % (root / "mlflow.db"),
                             "--default-artifact-root", str(root / "artifacts"), "--workers", "1"],
                            stdout=open(root / "server.log", "w"), stderr=subprocess.STDOUT, cwd=root,
                            start_new_session=True)  # its own group: the server's job runners go with it
    deadline = time.time() + 120
    while True:
        try:
            urllib.request.urlopen(uri + "/health", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                _stop(proc)
                pytest.fail("mlflow server did not start: %s" % (root / "server.log").read_text()[-2000:])
            time.sleep(0.5)
    yield uri
    _stop(proc)


def _stop(proc):
    """Stops the server and every process it started (gunicorn/uvicorn workers, job runners)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=20)
            os.killpg(proc.pid, 0)  # still there: something of the group outlived the server
        except (subprocess.TimeoutExpired, ProcessLookupError):
            pass


def _values(step):
    kl = 0.02 * step if step < 30 else 3.0 + step  # runs away at step 30
    reward = float("nan") if step == 12 else (float("inf") if step == 13 else 0.1 * step)
    return {"kl": kl, "reward": reward, "entropy": 2.0 - 0.01 * step}


def _log_run(uri, run_id_box, steps, delay):
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    experiment = client.create_experiment("rldk-live-%d-%f" % (os.getpid(), time.time()))
    run = client.create_run(experiment)
    run_id_box.append(run.info.run_id)
    start = int(time.time() * 1000)
    for step in range(steps):
        for key, value in _values(step).items():
            client.log_metric(run.info.run_id, key, value, step=step)
        if step == 25:
            # A value stamped before all others: it sorts first in the server's history, under the part already read.
            client.log_metric(run.info.run_id, "entropy", 9.0, timestamp=start - 60000, step=step)
        time.sleep(delay)
    client.set_terminated(run.info.run_id, "FINISHED")


def _monitor(uri, run_id, out, rules, extra=()):
    env = dict(os.environ, MLFLOW_TRACKING_URI=uri)
    return subprocess.run([rldk_binary(), "monitor", "--from-mlflow", run_id, "--rules", str(rules), "--out",
                           str(out), "--poll-interval", "0.3", "--fail-on", "warn", *extra],
                          capture_output=True, text=True, timeout=240, env=env)


def test_live_session_follows_a_run_on_a_tracking_server(server, tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    run_id_box = []
    steps = 40
    logger = threading.Thread(target=_log_run, args=(server, run_id_box, steps, 0.05))
    logger.start()
    while not run_id_box:
        time.sleep(0.05)
    live = _monitor(server, run_id_box[0], tmp_path / "live", rules)
    logger.join()
    # The session ended by itself (the run finished), with every value read once.
    assert live.returncode == 1, live.stderr
    report = json.loads((tmp_path / "live" / "report.json").read_text())
    assert report["summary"]["observations"] == 3 * steps + 1, live.stderr
    alerts = [json.loads(line) for line in (tmp_path / "live" / "alerts.jsonl").read_text().splitlines()]
    kl = [a for a in alerts if a["rule_id"] == "kl_high"]
    assert kl and kl[0]["step"] == 30 and kl[0]["run_id"] == run_id_box[0]
    nonfinite = sorted(a["step"] for a in alerts if a["rule_id"] == "reward_nonfinite")
    assert nonfinite[:2] == [12, 13]

    # The finished run read once gives the same verdict.
    once = _monitor(server, run_id_box[0], tmp_path / "once", rules, ["--once"])
    assert once.returncode == 1, once.stderr
    again = json.loads((tmp_path / "once" / "report.json").read_text())
    assert again["summary"]["observations"] == 3 * steps + 1
    assert sorted((a["rule_id"], a["step"]) for a in again["alerts"]) == \
        sorted((a["rule_id"], a["step"]) for a in report["alerts"])


def test_values_logged_out_of_order_and_paged_history_arrive_once(server, tmp_path):
    # A value logged last with an older timestamp than all others still arrives, exactly once.
    client = mlflow.tracking.MlflowClient(tracking_uri=server)
    experiment = client.create_experiment("rldk-order-%d-%f" % (os.getpid(), time.time()))
    run = client.create_run(experiment)
    now = int(time.time() * 1000)
    for step in range(50):
        client.log_metric(run.info.run_id, "kl", 0.01 * step, timestamp=now + step, step=step)
    client.log_metric(run.info.run_id, "kl", 5.0, timestamp=now - 1000, step=50)  # older timestamp, logged last
    client.set_terminated(run.info.run_id, "FINISHED")
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    proc = _monitor(server, run.info.run_id, tmp_path / "o", rules)
    assert proc.returncode == 1, proc.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["summary"]["observations"] == 51
    assert [a["step"] for a in report["alerts"] if a["rule_id"] == "kl_high"] == [50]


def test_unknown_run_and_unreachable_server_are_input_errors(server, tmp_path):
    proc = _monitor(server, "0123456789abcdef", tmp_path / "o", tmp_path / "none.yaml")
    assert proc.returncode == 2
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    proc = _monitor(server, "0123456789abcdef", tmp_path / "o", rules)
    assert proc.returncode == 2 and "RESOURCE_DOES_NOT_EXIST" in proc.stderr
    proc = _monitor("http://127.0.0.1:%d" % _free_port(), "abc", tmp_path / "o", rules)
    assert proc.returncode == 2 and "cannot reach the MLflow tracking server" in proc.stderr
