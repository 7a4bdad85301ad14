"""`rldk monitor` against hostile input and hostile endpoints (issue 12): run ids that try to escape folders or the
shell's quoting, a monitor told to read its own output, a webhook that accepts and never answers, signals during a
--once read, trainer commands that are not "simple", and bad numeric options. Runs the built `rldk` binary
(RLDK_BINARY overrides where it is looked for)."""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import write
from test_cli import rldk_binary as _installed_binary


def rldk():
    return os.environ.get("RLDK_BINARY") or _installed_binary()


HOSTILE_RUN_IDS = [
    "../../../../tmp/rldk-escape",
    "x'; touch PWNED; echo '",
    'x"; touch PWNED; echo "',
    "$(touch PWNED)",
    "`touch PWNED`",
    "..",
    "a/../../b",
    "esc\x1b]0;title\x07\x1b[2J",
    "new\nline; touch PWNED",
]


def run_log(path, run_id, steps=4, value=0.9):
    return write(path, "".join(json.dumps({"step": s, "name": "kl", "value": value, "run_id": run_id}) + "\n"
                               for s in range(1, steps + 1)))


def run(args, cwd, timeout=60, **kw):
    return subprocess.run([rldk()] + args, cwd=cwd, capture_output=True, text=True, timeout=timeout, **kw)


@pytest.mark.parametrize("run_id", HOSTILE_RUN_IDS)
def test_hostile_run_ids_stay_inside_and_stay_quoted(tmp_path, run_id):
    log = run_log(tmp_path / "logs" / "m.jsonl", run_id)
    # The same value through every quoting state a rule author may put a placeholder in.
    rules = write(tmp_path / "r.yaml", """rules:
  - id: hi
    metric: kl
    condition: value > 0.5
    cooldown_steps: 100
    actions:
      - sentinel: {path: "out/runs/{run_id}/STOP"}
      - sentinel: {path: "out/.{run_id}", append: "true"}
      - shell: {cmd: "printf %s {run_id} > out/bare.txt; printf %s '{run_id}' > out/single.txt; printf %s \\"{run_id}\\" > out/double.txt"}
""")
    proc = run(["monitor", "--once", str(log), "--rules", str(rules), "--out", "out", "--allow-shell",
                "--fail-on", "never"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "out" / "PWNED").exists()
    assert not os.path.exists("/tmp/rldk-escape")
    # Every file written lies inside the output folder.
    out = (tmp_path / "out").resolve()
    for root, dirs, files in os.walk(tmp_path):
        for name in files + dirs:
            p = os.path.realpath(os.path.join(root, name))
            assert p.startswith(str(tmp_path.resolve())), p
    records = [json.loads(l) for l in (out / "alerts.jsonl").read_text().splitlines()]
    sentinels = [r for r in records if r["action"] == "sentinel"]
    assert len(sentinels) == 2 and all(r["status"] == "ok" for r in sentinels), sentinels
    for r in sentinels:
        written = (tmp_path / r["details"]["path"]).resolve()
        assert written.parent == out or written.parent.parent == out / "runs", written  # one component each
    shell = [r for r in records if r["action"] == "shell"]
    assert shell and shell[0]["status"] == "ok", shell
    # The shell saw the value as one literal word, whichever quotes surrounded the placeholder.
    for name in ("bare", "single", "double"):
        assert (out / (name + ".txt")).read_text() == run_id, name


def test_shell_placeholder_in_command_substitution_is_refused(tmp_path):
    log = run_log(tmp_path / "m.jsonl", "$(touch PWNED)")
    rules = write(tmp_path / "r.yaml", """rules:
  - id: hi
    metric: kl
    condition: value > 0.5
    cooldown_steps: 100
    actions:
      - shell: {cmd: "echo $(echo {run_id})"}
""")
    proc = run(["monitor", "--once", str(log), "--rules", str(rules), "--out", "out", "--allow-shell", "--fail-on",
                "never"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (record,) = [json.loads(l) for l in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines()
                 if json.loads(l)["action"] == "shell"]
    assert record["status"] == "error" and "cannot be quoted reliably" in record["message"]
    assert not (tmp_path / "PWNED").exists()


def test_sentinel_outside_every_folder_is_refused(tmp_path):
    log = run_log(tmp_path / "logs" / "m.jsonl", "r")
    target = tmp_path / "elsewhere" / "STOP"
    rules = write(tmp_path / "r.yaml", """rules:
  - id: hi
    metric: kl
    condition: value > 0.5
    cooldown_steps: 100
    actions:
      - sentinel: {path: "%s"}
      - sentinel: {path: "out/link/STOP"}
""" % target)
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "out" / "link")  # a symlinked folder must not lead out either
    proc = run(["monitor", "--once", str(log), "--rules", str(rules), "--out", "out", "--fail-on", "never"],
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(l) for l in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines()]
    assert [r["status"] for r in records if r["action"] == "sentinel"] == ["error", "error"]
    assert not target.exists()


def test_monitor_refuses_to_write_what_it_reads(tmp_path):
    out = tmp_path / "out"
    alerts = run_log(out / "alerts.jsonl", "r")
    before = alerts.read_bytes()
    proc = run(["monitor", str(alerts), "--once", "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 2
    assert "--out" in proc.stderr and proc.stderr.strip().splitlines()[-1].count("\n") == 0
    assert alerts.read_bytes() == before
    # A folder being read may not hold the output either, nor may a followed file that does not exist yet be it.
    proc = run(["monitor", str(tmp_path), "--once", "--out", str(tmp_path / "o")], cwd=tmp_path)
    assert proc.returncode == 2 and "--out" in proc.stderr
    proc = run(["monitor", str(tmp_path / "new" / "report.json"), "--idle-exit", "1", "--out",
                str(tmp_path / "new")], cwd=tmp_path)
    assert proc.returncode == 2 and "--out" in proc.stderr


class _SilentServer:
    """Accepts connections and never answers."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.conns = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return "http://127.0.0.1:%d/hook" % self.sock.getsockname()[1]

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


@pytest.fixture
def silent_server():
    s = _SilentServer()
    yield s
    s.close()


def test_hung_webhook_costs_at_most_the_deadline_once(tmp_path, silent_server):
    # 20 alerts, each a webhook to an endpoint that never answers: bounded by --action-deadline, not 20 x 15 s.
    log = write(tmp_path / "m.jsonl", "".join(json.dumps({"step": s, "name": "kl", "value": 0.9}) + "\n"
                                              for s in range(1, 21)))
    rules = write(tmp_path / "r.yaml", "rules:\n  - {id: hi, metric: kl, condition: value > 0.5}\n")
    t0 = time.monotonic()
    proc = run(["monitor", "--once", str(log), "--rules", str(rules), "--webhook", silent_server.url, "--out", "out",
                "--fail-on", "never", "--action-deadline", "2"], cwd=tmp_path, timeout=60)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 6, elapsed
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    http = summary["undelivered"]["http"]
    assert http["queued"] == 20 and http["delivered"] == 0
    assert http["abandoned"] + http["dropped"] + http["failed"] == 20 and summary["undelivered"]["total"] == 20
    records = [json.loads(l) for l in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines()]
    assert sum(1 for r in records if r["action"] == "http" and r["status"] == "error") == 20


def test_live_monitor_with_hung_webhook_exits_promptly_on_sigint(tmp_path, silent_server):
    log = write(tmp_path / "m.jsonl", "".join(json.dumps({"step": s, "name": "kl", "value": 0.9}) + "\n"
                                              for s in range(1, 6)))
    rules = write(tmp_path / "r.yaml", "rules:\n  - {id: hi, metric: kl, condition: value > 0.5}\n")
    mon = subprocess.Popen([rldk(), "monitor", str(log), "--rules", str(rules), "--webhook", silent_server.url,
                            "--out", str(tmp_path / "out"), "--fail-on", "never", "--action-deadline", "1"],
                           stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while not silent_server.conns and time.monotonic() < deadline:
            time.sleep(0.05)
        assert silent_server.conns, "the webhook was never called"
        t0 = time.monotonic()
        mon.send_signal(signal.SIGINT)
        mon.wait(timeout=15)
        assert time.monotonic() - t0 < 4
    finally:
        if mon.poll() is None:
            mon.kill()
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert summary["interrupted"] == "SIGINT" and summary["undelivered"]["total"] >= 1


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_once_drain_still_writes_the_report(tmp_path, silent_server, sig, code):
    log = write(tmp_path / "m.jsonl", "".join(json.dumps({"step": s, "name": "kl", "value": 0.9}) + "\n"
                                              for s in range(1, 4)))
    rules = write(tmp_path / "r.yaml", "rules:\n  - {id: hi, metric: kl, condition: value > 0.5}\n")
    mon = subprocess.Popen([rldk(), "monitor", "--once", str(log), "--rules", str(rules), "--webhook",
                            silent_server.url, "--out", str(tmp_path / "out"), "--action-deadline", "30"],
                           stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while not silent_server.conns and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        mon.send_signal(sig)
        mon.wait(timeout=40)
    finally:
        if mon.poll() is None:
            mon.kill()
    # The signal came after the read, during the webhook drain: everything was evaluated, the webhook abandoned.
    assert mon.returncode == code
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert summary["interrupted"] == signal.Signals(sig).name
    assert summary["observations"] == 3 and summary["alerts"] == 3
    assert summary["undelivered"]["http"]["abandoned"] == 3


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_once_read_reports_what_was_evaluated(tmp_path, sig, code):
    fifo = tmp_path / "m.jsonl"
    os.mkfifo(fifo)  # a log that never ends: the read is still going when the signal comes
    mon = subprocess.Popen([rldk(), "monitor", "--once", str(fifo), "--preset", "grpo_safe", "--out",
                            str(tmp_path / "out"), "--input-format", "jsonl"], stderr=subprocess.PIPE, text=True)
    with open(fifo, "w") as f:
        for s in range(1, 200):
            f.write(json.dumps({"step": s, "name": "kl", "value": 0.01}) + "\n")
        f.flush()
        time.sleep(1.0)
        mon.send_signal(sig)
        # The read now waits in read(2) on the FIFO (which retries after the signal); the next line lets the reader
        # deliver a point, where the interruption is noticed and the read stops.
        time.sleep(0.2)
        f.write(json.dumps({"step": 200, "name": "kl", "value": 0.01}) + "\n")
        f.flush()
        try:
            mon.wait(timeout=10)
        finally:
            if mon.poll() is None:
                mon.kill()
    assert mon.returncode == code, mon.stderr.read()
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert summary["interrupted"] == signal.Signals(sig).name
    assert summary["observations"] > 0


@pytest.mark.parametrize("cmd,code,trainer", [
    ("exit 7", 3, 7),
    ("FOO=bar %s -c \"import os, sys; sys.exit(0 if os.environ['FOO'] == 'bar' else 5)\"" % sys.executable, 0, 0),
])
def test_cmd_runs_exactly_what_sh_runs(tmp_path, cmd, code, trainer):
    proc = run(["monitor", "--cmd", cmd, "--out", "out", "--preset", "grpo_safe"], cwd=tmp_path)
    assert proc.returncode == code, proc.stderr
    command = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]["command"]
    assert command["command"] == cmd and command["exit_code"] == trainer


@pytest.mark.parametrize("args,option", [
    (["--pid", "0"], "--pid"),
    (["--pid", "-5"], "--pid"),
    (["--pid", "999999999"], "--pid"),
    (["--stop-grace", "nan"], "--stop-grace"),
    (["--stop-grace", "-1"], "--stop-grace"),
    (["--idle-exit", "inf"], "--idle-exit"),
    (["--action-deadline", "-3"], "--action-deadline"),
])
def test_bad_numeric_options_are_refused(tmp_path, args, option):
    log = run_log(tmp_path / "m.jsonl", "r")
    proc = run(["monitor", "--once", str(log), "--out", "out"] + args, cwd=tmp_path)
    assert proc.returncode == 2 and option in proc.stderr, proc.stderr
    assert not (tmp_path / "out" / "report.json").exists()
