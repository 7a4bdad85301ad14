"""The native `rldk` command installed by pip is on PATH next to the package, and agrees with the Python reader."""
import json
import os
import subprocess

import rldk
from conftest import rldk_binary


def test_command_installed_and_versioned():
    out = subprocess.run([rldk_binary(), "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "rldk " + rldk.__version__


def test_info_json_agrees_with_read_run(examples):
    path = str(examples / "verl_console.log")
    report = json.loads(subprocess.run([rldk_binary(), "info", "--json", path], capture_output=True, text=True,
                                       check=True).stdout)
    assert report["schema"] == "rldk.info/v1"
    (entry,) = report["runs"]
    run = rldk.read_run(path)
    for name in run.metrics:
        series = run[name]
        m = entry["metrics"][name]
        assert m["count"] == len(series)
        assert m["non_finite"] == series.non_finite_count
        finite = [v for v in series.values.tolist() if v == v and abs(v) != float("inf")]
        if finite:
            assert m["min"] == min(finite) and m["max"] == max(finite)


def test_ingest_round_trip(tmp_path, examples):
    out = tmp_path / "canon.jsonl"
    subprocess.run([rldk_binary(), "ingest", str(examples / "openrlhf_console.log"), "-o", str(out)], check=True)
    original = rldk.read_run(examples / "openrlhf_console.log")
    again = rldk.read_run(out)
    assert again.metrics == original.metrics
    for name in original.metrics:
        assert again[name].values.tolist() == original[name].values.tolist()
        assert again[name].steps.tolist() == original[name].steps.tolist()


def test_ingest_keeps_restarts_apart(tmp_path):
    # A run resumed from an earlier step logs steps 1-2 twice: the events of the second pass carry their segment,
    # so the two values at one step are told apart, and reading the events back gives the same segments.
    log = tmp_path / "train.log"
    log.write_text("".join("{'loss': %s, 'step': %d}\n" % (v, s)
                           for s, v in [(1, 0.9), (2, 0.8), (3, 0.7), (1, 0.5), (2, 0.4)]))
    out = tmp_path / "canon.jsonl"
    subprocess.run([rldk_binary(), "ingest", str(log), "-o", str(out)], check=True)
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["step"], e["value"], e.get("segment", 0)) for e in events] == [
        (1, 0.9, 0), (2, 0.8, 0), (3, 0.7, 0), (1, 0.5, 1), (2, 0.4, 1)]
    info = json.loads(subprocess.run([rldk_binary(), "info", "--json", str(out)], capture_output=True, text=True,
                                     check=True).stdout)
    (entry,) = info["runs"]
    assert [(s["first_step"], s["last_step"]) for s in entry["segments"]] == [(1, 3), (1, 2)]
    assert list(entry["metrics"]) == ["train/loss"]


def test_info_json_validates_against_schema(golden_cases, examples):
    jsonschema = __import__("pytest").importorskip("jsonschema")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "docs", "schemas", "rldk.info.v1.schema.json")) as f:
        schema = json.load(f)
    sources = [str(examples), str(golden_cases / "info_long_jsonl" / "events.jsonl"),
               str(golden_cases / "info_gzip_truncated" / "big.jsonl.gz"), str(golden_cases / "info_directory"),
               "/no/such/path"]
    proc = subprocess.run([rldk_binary(), "info", "--json"] + sources, capture_output=True, text=True)
    assert proc.returncode == 2  # the missing path
    report = json.loads(proc.stdout)
    jsonschema.validate(report, schema)
    assert len(report["errors"]) == 1 and len(report["runs"]) >= 8


def test_card_names_a_saved_report_given_instead_of_a_run(tmp_path):
    for name in ("a", "b"):
        (tmp_path / (name + ".jsonl")).write_text(
            "".join('{"step": %d, "name": "loss", "value": %r}\n' % (s, 1.0 / (s + 1)) for s in range(30)))
    made = subprocess.run([rldk_binary(), "card", "drift", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"),
                           "--out", str(tmp_path / "card")], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    again = subprocess.run([rldk_binary(), "card", "drift", str(tmp_path / "card" / "diff.json"),
                            str(tmp_path / "b.jsonl"), "--out", str(tmp_path / "card2")], capture_output=True, text=True)
    assert again.returncode == 2
    assert "is a saved rldk.diff/v1 report, not a run" in again.stderr
    assert str(tmp_path / "card" / "diff.html") in again.stderr
    assert not (tmp_path / "card2").exists()
