"""Hostile strings through every command's output (issue 12): run ids, metric names and string values holding `../`,
quotes, `$()`, backticks, ESC/OSC/C1 sequences, NUL, invalid UTF-8 and HTML. Whatever a log holds, rldk's terminal
output carries no control bytes, its Markdown renders (with markdown-it, HTML allowed) to no tag or link from the
data, its HTML holds no tag from the data, its JSON parses and keeps the strings, and no file appears outside the
folders it was given. Also the data-loss reproductions of the issue that live outside the monitor (its own are in
test_monitor_hostile.py): ingest over its input, ingest into the folder it reads, NUL-filled blocks, FIFOs and
devices, NUL in names, compressed outputs, option checks and files env-audit leaves out."""
import gzip
import json
import os
import pathlib
import re
import subprocess
import threading

import markdown_it
import pytest

from test_cli import rldk_binary


def rldk():
    return os.environ.get("RLDK_BINARY") or rldk_binary()


# Each is valid JSON text inside a string (escapes for control characters), except RAW_BAD_UTF8 which is raw bytes.
HOSTILE_NAMES = [
    "../../../tmp/escape",
    "q'uo\\\"te",
    "$(touch PWNED)",
    "`touch PWNED`",
    "osc\\u001b]0;pwned\\u0007title",
    "clear\\u001b[2J\\u001b[H",
    "nul\\u0000name",
    "<script>alert(1)</script>",
    "[link](javascript:alert(1))",
    "pipe|cell",
    "c1\\u009b31m",
]
RAW_BAD_UTF8 = b"bad\xff\xfeutf8"
HOSTILE_RUN_ID = "<img src=x onerror=alert(1)>`$(touch PWNED)`\\u001b]2;t\\u0007../../x"
CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def hostile_log(path, run_id=HOSTILE_RUN_ID, steps=60, kl_jump=30):
    """Long-form JSONL: every hostile name as a metric, a KL that jumps (so scan and diff have findings that name
    it), and a string value where a number belongs (its diagnostic quotes it)."""
    lines = []
    for s in range(1, steps + 1):
        for i, name in enumerate(HOSTILE_NAMES):
            lines.append(b'{"step": %d, "name": "%s", "value": %g, "run_id": "%s"}'
                         % (s, name.encode(), 0.1 * i + s * 1e-3, run_id.encode()))
        lines.append(b'{"step": %d, "name": "' % s + RAW_BAD_UTF8 + b'", "value": 1, "run_id": "%s"}' % run_id.encode())
        kl = 0.01 if s < kl_jump else 2.5
        lines.append(b'{"step": %d, "name": "kl", "value": %g, "run_id": "%s"}' % (s, kl, run_id.encode()))
    lines.append(b'{"step": 61, "name": "loss", "value": "\\u001b[2J<script>x</script>", "run_id": "%s"}'
                 % run_id.encode())
    path = pathlib.Path(path)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def run(args, cwd, **kw):
    return subprocess.run([rldk()] + [str(a) for a in args], capture_output=True, cwd=cwd, timeout=120, **kw)


def assert_terminal_safe(proc, what):
    for stream, data in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        bad = CONTROL_BYTES.search(data)
        assert bad is None, "%s %s: raw control byte %r at %d" % (what, stream, bad.group(), bad.start())
        data.decode("utf-8")  # raises on invalid UTF-8


def assert_markdown_safe(text, what):
    assert CONTROL_BYTES.search(text.encode()) is None, what
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert "<script" not in html and "<img" not in html, (what, html[:2000])
    assert 'href="javascript' not in html, what


def assert_html_safe(text, what):
    assert CONTROL_BYTES.search(text.encode()) is None, what
    assert "<script>alert" not in text and "<img src=x" not in text, what


def report_files(folder):
    return sorted(p for p in pathlib.Path(folder).iterdir() if p.is_file())


def check_folder(folder, what):
    for p in report_files(folder):
        text = p.read_bytes().decode("utf-8")
        if p.suffix == ".md":
            assert_markdown_safe(text, "%s %s" % (what, p.name))
        elif p.suffix == ".html":
            assert_html_safe(text, "%s %s" % (what, p.name))
        elif p.suffix in (".json", ".jsonl"):
            for line in (text.splitlines() if p.suffix == ".jsonl" else [text]):
                json.loads(line)
        elif p.suffix == ".txt":
            assert CONTROL_BYTES.search(text.encode()) is None, (what, p.name)


def test_hostile_strings_through_every_command(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    a = hostile_log(work / "a.jsonl")
    b = hostile_log(work / "b.jsonl", kl_jump=20)
    outs = tmp_path / "out"
    commands = {
        "info": ["info", a],
        "info --json": ["info", "--json", a],
        "ingest": ["ingest", a, "-o", outs / "ingest" / "a.jsonl"],
        "ingest csv": ["ingest", a, "-o", outs / "ingest" / "a.csv"],
        "scan": ["scan", a, "--out", outs / "scan"],
        "scan --json": ["scan", "--json", a],
        "doctor": ["doctor", a, "--no-env", "--out", outs / "doctor"],
        "diff": ["diff", a, b, "--signals", "kl", "--out", outs / "diff"],
        "diff all": ["diff", a, b, "--out", outs / "diff_all"],
        "forensics kl-drift": ["forensics", "kl-drift", a],
        "monitor": ["monitor", a, "--once", "--preset", "grpo_safe", "--out", outs / "monitor"],
        "check-determinism": ["check-determinism", "--replicas", "2", "--cmd",
                              'cp "%s" "$RLDK_METRICS_PATH"' % a, "--out", outs / "determinism"],
    }
    (outs / "ingest").mkdir(parents=True)
    for what, args in commands.items():
        proc = run(args, cwd=work)
        assert proc.returncode in (0, 1), (what, proc.returncode, proc.stderr.decode(errors="replace")[-2000:])
        assert_terminal_safe(proc, what)
        if "--json" in args:
            doc = json.loads(proc.stdout)
            assert doc, what
    # JSON keeps every string as logged (NUL and ESC escaped by the JSON writer, invalid bytes as U+FFFD).
    info = json.loads(run(["info", "--json", "--raw-names", a], cwd=work).stdout)
    names = set(info["runs"][0]["metrics"])
    assert "nul\x00name" in names and "osc\x1b]0;pwned\x07title" in names and "bad\ufffd\ufffdutf8" in names
    assert info["runs"][0]["run_id"] == json.loads('"%s"' % HOSTILE_RUN_ID)
    for folder in ("scan", "doctor", "diff", "diff_all", "monitor", "determinism", "ingest"):
        check_folder(outs / folder, folder)
    # Findings name the hostile run: the Markdown was really exercised, not empty.
    assert "kl" in (outs / "scan" / "scan.md").read_text()
    # Nothing ran, nothing escaped its folder.
    assert not list(tmp_path.rglob("PWNED")) and not pathlib.Path("PWNED").exists()
    assert not pathlib.Path("/tmp/escape").exists()


def test_ingest_refuses_to_overwrite_or_feed_on_its_input(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_text("".join('{"step": %d, "loss": %d}\n' % (s, s) for s in range(100)))
    before = log.read_bytes()
    os.symlink(log, tmp_path / "link.jsonl")
    for out in (log, tmp_path / "link.jsonl", tmp_path / "." / "a.jsonl"):
        proc = run(["ingest", log, "-o", out], cwd=tmp_path)
        assert proc.returncode == 2 and b"is the input" in proc.stderr, proc.stderr
        assert log.read_bytes() == before
    # Into the folder being read: refused at once, not a growing file read back forever.
    proc = run(["ingest", ".", "-o", "d.jsonl"], cwd=tmp_path)
    assert proc.returncode == 2 and b"inside the input folder" in proc.stderr
    assert not (tmp_path / "d.jsonl").exists() and log.read_bytes() == before
    # Report folders are guarded too.
    proc = run(["scan", tmp_path, "--out", tmp_path / "report"], cwd=tmp_path)
    assert proc.returncode == 2 and b"inside the input folder" in proc.stderr
    assert not (tmp_path / "report").exists()


def test_ingest_writes_what_the_extension_says_and_replaces_whole(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_text("".join('{"step": %d, "loss": %d}\n' % (s, s) for s in range(100)))
    proc = run(["ingest", log, "-o", tmp_path / "out.jsonl.gz"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = gzip.decompress((tmp_path / "out.jsonl.gz").read_bytes()).decode().splitlines()
    assert len(lines) == 100 and json.loads(lines[-1])["value"] == 99
    proc = run(["ingest", log, "-o", tmp_path / "out.csv.zst"], cwd=tmp_path)
    assert proc.returncode == 0 and (tmp_path / "out.csv.zst").read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    info = json.loads(run(["info", "--json", tmp_path / "out.csv.zst"], cwd=tmp_path).stdout)
    assert info["runs"][0]["points"] == 100
    # A failed conversion leaves the previous output as it was, and no temporary file behind.
    (tmp_path / "keep.jsonl").write_text("previous\n")
    proc = run(["ingest", tmp_path / "missing.jsonl", "-o", tmp_path / "keep.jsonl"], cwd=tmp_path)
    assert proc.returncode == 2
    leftovers = [p.name for p in tmp_path.iterdir() if "rldk-tmp" in p.name]
    assert not leftovers


def test_a_zero_filled_block_loses_no_line(tmp_path):
    body = b"".join(b'{"step": %d, "reward": %d}\n' % (s, s) for s in range(100))
    log = tmp_path / "crashed.jsonl"
    cut = body.index(b"\n", 1000) + 1  # a block the crash left unwritten, between two lines
    log.write_bytes(b"\0" * 4096 + body[:cut] + b"\0" * 512 + body[cut:])
    info = json.loads(run(["info", "--json", log], cwd=tmp_path).stdout)
    r = info["runs"][0]
    assert r["points"] == 100, r
    assert r["diagnostics"]["counts"].get("nul_bytes") == 2
    # Binary data is still refused as binary.
    (tmp_path / "blob.bin").write_bytes(b"\0\0\0\x01\x02\x03garbage\n")
    proc = run(["info", tmp_path / "blob.bin"], cwd=tmp_path)
    assert proc.returncode == 2 and b"binary data" in proc.stderr


def test_nul_in_a_name_does_not_cut_the_table(tmp_path):
    log = tmp_path / "n.jsonl"
    log.write_text('{"step": 1, "val\\u0000ue": 1, "zzz_last": 2}\n{"step": 2, "val\\u0000ue": 3, "zzz_last": 4}\n')
    proc = run(["info", log], cwd=tmp_path)
    assert proc.returncode == 0
    assert b"val\\x00ue" in proc.stdout and b"zzz_last" in proc.stdout


def test_fifo_without_writer_says_what_it_waits_for_and_devices_are_refused(tmp_path):
    fifo = tmp_path / "metrics.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([rldk(), "info", str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stderr.readline()  # before any writer exists
    assert b"FIFO" in line and b"waiting" in line, line
    with open(fifo, "w") as w:
        w.write('{"step": 1, "loss": 0.5}\n')
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and b"loss" in out
    done = threading.Event()
    proc = run(["info", "/dev/zero"], cwd=tmp_path)
    done.set()
    assert proc.returncode == 2 and b"device" in proc.stderr


@pytest.mark.parametrize("args,option", [
    (["check-determinism", "--cmd", "true", "--rtol", "nan"], b"--rtol"),
    (["check-determinism", "--cmd", "true", "--atol", "inf"], b"--atol"),
    (["diff", "a", "b", "--spike-z", "-1"], b"--spike-z"),
    (["monitor", "--pid", "0", "--once", "x"], b"--pid"),
    (["monitor", "--pid", "-5", "--once", "x"], b"--pid"),
])
def test_bad_numbers_are_refused_naming_the_option(tmp_path, args, option):
    proc = run(args, cwd=tmp_path)
    assert proc.returncode == 2 and option in proc.stderr, proc.stderr


def test_env_audit_says_which_files_it_did_not_scan(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text("import torch\ntorch.manual_seed(0)\n")
    (repo / "huge.py").write_text("# generated\n" + "x = 1\n" * 600000)  # over the 2 MiB per-file limit
    proc = run(["env-audit", repo, "--json", "--no-probe"], cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    code = json.loads(proc.stdout)["code"]
    assert code["files_skipped"] == 1 and code["skipped"][0].startswith("huge.py: ")
    md = run(["env-audit", repo, "--no-probe"], cwd=tmp_path).stdout.decode()
    assert "1 not scanned" in md and "huge.py" in md
