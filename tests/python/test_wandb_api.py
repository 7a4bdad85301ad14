"""`rldk monitor --from-wandb ENTITY/PROJECT/RUN` when the run's .wandb file is not on this machine: the run is polled
through W&B's GraphQL API. W&B's servers cannot be reached from here, so the test runs a stand-in on 127.0.0.1 that
answers the query W&B's own client pages history with (`project { run { state historyKeys history(minStep, maxStep,
samples) } }`: rows as JSON strings, `historyKeys.lastStep`, HTTP basic authentication with user "api" and the key),
while a writer thread appends rows the way a training run does. What this checks is rldk's side of that contract:
paging, the step rule shared with the .wandb reader (the trainer's train/global_step over W&B's _step), NaN rows,
media left out, the live session ending when the run has, and clear errors."""
import base64
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import ROOT, rldk_binary

sys.path.insert(0, str(ROOT / "bench"))
from bench_binary import wandb_history_rows  # noqa: E402  (the benchmark's reader of .wandb history rows)

KEY = "k" * 40
RULES = ("rules:\n"
         "  - {id: kl_high, metric: kl, condition: value > 1.0}\n"
         "  - {id: reward_nonfinite, metric: reward, condition: not isfinite(value)}\n")


class StandIn:
    """A W&B server's GraphQL endpoint for one run, with the rows appended so far."""

    def __init__(self, history_keys_as_text=False):
        self.rows = []
        self.state = "running"
        self.requests = []
        self.history_keys_as_text = history_keys_as_text
        self.lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                expected = "Basic " + base64.b64encode(("api:" + KEY).encode()).decode()
                if self.path != "/graphql" or self.headers.get("Authorization") != expected:
                    self._send(401, {"errors": [{"message": "user is not logged in"}]})
                    return
                query = json.loads(body)
                self._send(200, stand_in.answer(query["query"], query["variables"]))

            def _send(self, status, document):
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, query, v):
        assert "history(minStep: $minStep, maxStep: $maxStep, samples: $pageSize)" in query
        if (v["entity"], v["project"], v["run"]) != ("team", "grpo", "run1"):
            return {"data": {"project": {"run": None}}}
        with self.lock:
            self.requests.append((v["minStep"], v["maxStep"], v["pageSize"]))
            rows = [r for r in self.rows if v["minStep"] <= r["_step"] < v["maxStep"]][: v["pageSize"]]
            keys = {"lastStep": self.rows[-1]["_step"] if self.rows else -1, "keys": {}}
            state = self.state
        return {"data": {"project": {"run": {
            "state": state,
            "historyKeys": json.dumps(keys) if self.history_keys_as_text else keys,
            # json.dumps writes NaN and Infinity as bare words, as W&B's extended JSON does.
            "history": [json.dumps(r) for r in rows]}}}}


def _row(i):
    kl = 0.0005 * i if i < 1200 else 3.0  # runs away at row 1200
    reward = math.nan if i == 12 else 0.001 * i
    return {"_step": i, "_runtime": 0.5 * i, "_timestamp": 1767225600.0 + i, "train/global_step": 10 * i,
            "kl": kl, "reward": reward, "entropy": 2.0 - 0.0001 * i,
            "samples": {"_type": "table-file", "ncols": 3, "nrows": 8}}


def _write(stand_in, rows, per_batch, delay):
    for start in range(0, rows, per_batch):
        with stand_in.lock:
            stand_in.rows.extend(_row(i) for i in range(start, min(rows, start + per_batch)))
        time.sleep(delay)
    with stand_in.lock:
        stand_in.state = "finished"


def _monitor(stand_in, out, rules, path="team/grpo/run1", extra=(), key=KEY):
    env = dict(os.environ, WANDB_BASE_URL=stand_in.url, WANDB_API_KEY=key, WANDB_DIR=str(out.parent / "no_local"))
    return subprocess.run([rldk_binary(), "monitor", "--from-wandb", path, "--rules", str(rules), "--out", str(out),
                           "--poll-interval", "0.2", "--fail-on", "warn", *extra],
                          capture_output=True, text=True, timeout=240, env=env)


@pytest.mark.parametrize("history_keys_as_text", [False, True])
def test_live_session_polls_a_run_on_the_w_and_b_api(tmp_path, history_keys_as_text):
    stand_in = StandIn(history_keys_as_text)
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    rows = 2300  # more than two pages of 1,000 steps
    writer = threading.Thread(target=_write, args=(stand_in, rows, 250, 0.15))
    writer.start()
    live = _monitor(stand_in, tmp_path / "live", rules)
    writer.join()
    # The session ended by itself (the run finished), every row read once: kl, reward and entropy of each; the
    # steps, the runtime and the table are not metrics.
    assert live.returncode == 1, live.stderr
    report = json.loads((tmp_path / "live" / "report.json").read_text())
    assert report["summary"]["observations"] == 3 * rows, live.stderr
    alerts = [json.loads(line) for line in (tmp_path / "live" / "alerts.jsonl").read_text().splitlines()]
    kl = [a for a in alerts if a["rule_id"] == "kl_high"]
    # The trainer's step (train/global_step = 10 x _step), as the .wandb reader gives it.
    assert kl and kl[0]["step"] == 12000 and kl[0]["run_id"] == "run1", kl[:1]
    assert [a["step"] for a in alerts if a["rule_id"] == "reward_nonfinite"] == [120]

    # The finished run read once gives the same verdict, its 2,300 rows read in pages of 1,000 steps.
    before = len(stand_in.requests)
    once = _monitor(stand_in, tmp_path / "once", rules, extra=["--once"])
    assert [r[:2] for r in stand_in.requests[before:]] == [(0, 1000), (1000, 2000), (2000, 3000)]
    assert once.returncode == 1, once.stderr
    again = json.loads((tmp_path / "once" / "report.json").read_text())
    assert again["summary"]["observations"] == 3 * rows
    assert sorted((a["rule_id"], a["step"]) for a in again["alerts"]) == \
        sorted((a["rule_id"], a["step"]) for a in report["alerts"])
    stand_in.server.shutdown()


def test_wrong_key_unknown_run_and_missing_key_are_input_errors(tmp_path):
    stand_in = StandIn()
    stand_in.rows.extend(_row(i) for i in range(5))
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    wrong = _monitor(stand_in, tmp_path / "o1", rules, extra=["--once"], key="x" * 40)
    assert wrong.returncode == 2 and "HTTP 401" in wrong.stderr, wrong.stderr
    unknown = _monitor(stand_in, tmp_path / "o2", rules, path="team/grpo/nope", extra=["--once"])
    assert unknown.returncode == 2 and "no run team/grpo/nope" in unknown.stderr, unknown.stderr
    malformed = _monitor(stand_in, tmp_path / "o3", rules, path="grpo/run1", extra=["--once"])
    assert malformed.returncode == 2 and "ENTITY/PROJECT/RUN" in malformed.stderr, malformed.stderr
    env = {k: v for k, v in os.environ.items() if k != "WANDB_API_KEY"}
    env.update(HOME=str(tmp_path), WANDB_BASE_URL=stand_in.url, WANDB_DIR=str(tmp_path))
    missing = subprocess.run([rldk_binary(), "monitor", "--from-wandb", "team/grpo/run1", "--rules", str(rules),
                              "--out", str(tmp_path / "o4"), "--once"], capture_output=True, text=True, env=env,
                             timeout=60)
    assert missing.returncode == 2 and "WANDB_API_KEY" in missing.stderr, missing.stderr
    # The key `wandb login` keeps in ~/.netrc is found for the server's host.
    (tmp_path / ".netrc").write_text("machine 127.0.0.1\n  login user\n  password %s\n" % KEY)
    from_netrc = subprocess.run([rldk_binary(), "monitor", "--from-wandb", "team/grpo/run1", "--rules", str(rules),
                                 "--out", str(tmp_path / "o5"), "--once", "--fail-on", "never"],
                                capture_output=True, text=True, env=env, timeout=60)
    assert from_netrc.returncode == 0, from_netrc.stderr
    assert json.loads((tmp_path / "o5" / "report.json").read_text())["summary"]["observations"] == 15
    stand_in.server.shutdown()


def test_the_api_gives_the_points_the_run_file_gives(tmp_path, monkeypatch):
    """A run logged by the real wandb (offline): rldk reading its .wandb file and rldk polling a server that serves
    the same history rows raise the same alerts at the same steps with the same values."""
    wandb = pytest.importorskip("wandb")
    import tiny_models  # noqa: F401  (WANDB_MODE=offline and the other offline switches)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    run = wandb.init(project="rldk-api", dir=str(tmp_path), settings=wandb.Settings(console="off",
                                                                                      x_disable_stats=True))
    for i in range(60):
        run.log({"train/global_step": 4 * i, "kl": 0.003 * i * i / 10, "reward": math.nan if i == 17 else 0.01 * i,
                 "train/entropy": 2.0 - 0.01 * i})
    run.finish()
    wandb.teardown()
    run_file = next((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))
    stand_in = StandIn()
    stand_in.rows.extend(wandb_history_rows(str(run_file)))  # as W&B's API serves them
    stand_in.state = "finished"
    assert len(stand_in.rows) == 60 and all("_step" in r and "_timestamp" in r for r in stand_in.rows)
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n"
                     "  - {id: kl_high, metric: kl, condition: value > 0.5}\n"
                     "  - {id: reward_nonfinite, metric: reward, condition: not isfinite(value)}\n"
                     "  - {id: entropy_low, metric: policy/entropy, condition: value < 1.6}\n")
    from_file = subprocess.run([rldk_binary(), "monitor", "--once", str(run_file), "--rules", str(rules), "--out",
                                str(tmp_path / "file"), "--fail-on", "never"], capture_output=True, text=True,
                               timeout=60)
    assert from_file.returncode == 0, from_file.stderr
    from_api = _monitor(stand_in, tmp_path / "api", rules, extra=["--once"])
    assert from_api.returncode == 1, from_api.stderr  # --fail-on warn
    file_report = json.loads((tmp_path / "file" / "report.json").read_text())
    api_report = json.loads((tmp_path / "api" / "report.json").read_text())
    assert api_report["summary"]["observations"] == file_report["summary"]["observations"] == 3 * 60

    def verdict(report):
        return sorted((a["rule_id"], a["metric"], a["step"], repr(a["value"])) for a in report["alerts"])

    assert verdict(api_report) == verdict(file_report) and len(verdict(file_report)) > 10
    # The trainer's step, not W&B's row index.
    assert [a[2] for a in verdict(file_report) if a[0] == "reward_nonfinite"] == [68], verdict(file_report)
    stand_in.server.shutdown()
