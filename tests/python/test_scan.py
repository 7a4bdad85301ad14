"""`rldk scan`, `rldk doctor` and `rldk forensics kl-drift` on the scan fixtures (examples/scan/, shaped like the
older tool's clean and doctored PPO runs): the KL level shift at step 800 is found, the clean run gives no finding,
and the JSON documents validate against their schemas."""
import json
import random
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import rldk_binary

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schemas"
CLEAN = ROOT / "examples" / "scan" / "ppo_clean.jsonl"
SHIFTED = ROOT / "examples" / "scan" / "ppo_kl_shift.jsonl"


def scan(*args):
    proc = subprocess.run([rldk_binary(), "scan", *map(str, args), "--json"], capture_output=True, text=True)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout else None, proc.stderr


def validator(name):
    from referencing import Registry, Resource

    schema = json.loads((SCHEMAS / name).read_text())
    scan_schema = json.loads((SCHEMAS / "rldk.scan.v1.schema.json").read_text())
    # The doctor schema refers to the scan schema by file name, relative to its own $id.
    registry = Registry().with_resources([("rldk.scan.v1.schema.json", Resource.from_contents(scan_schema)),
                                          ("rldk.scan/v1", Resource.from_contents(scan_schema)),
                                          ("rldk.doctor/rldk.scan.v1.schema.json", Resource.from_contents(scan_schema)),
                                          ("rldk.kl-drift/rldk.scan.v1.schema.json", Resource.from_contents(scan_schema))])
    return jsonschema.Draft202012Validator(schema, registry=registry)


def test_clean_run_has_no_finding():
    code, doc, _ = scan(CLEAN)
    assert code == 0
    validator("rldk.scan.v1.schema.json").validate(doc)
    run = doc["runs"][0]
    assert run["findings"] == [], [f["explanation"] for f in run["findings"]]
    assert run["health"]["overall"] == 1.0
    assert run["steps"] == {"first": 0, "last": 999, "count": 1000}


def test_kl_level_shift_at_800_is_found():
    code, doc, _ = scan(SHIFTED, "--fail-on", "warning")
    assert code == 1
    validator("rldk.scan.v1.schema.json").validate(doc)
    findings = doc["runs"][0]["findings"]
    shifts = [f for f in findings if f["detector"] == "kl_level_shift"]
    assert len(shifts) == 1
    assert 795 <= shifts[0]["onset_step"] <= 805
    assert shifts[0]["end_step"] == 999
    assert shifts[0]["metric"] == "policy/kl"
    # kl_coef is the same value for the whole run: a fixed penalty, not a controller that failed.
    assert not any(f["fault"] == "kl_controller_off_target" for f in findings)
    assert doc["runs"][0]["health"]["areas"]["kl"] < 1.0


def test_only_and_skip_and_bad_names():
    code, doc, _ = scan(SHIFTED, "--only", "kl_level_shift")
    assert {f["detector"] for f in doc["runs"][0]["findings"]} == {"kl_level_shift"}
    code, doc, _ = scan(SHIFTED, "--skip", "kl")
    assert all(f["area"] != "kl" for f in doc["runs"][0]["findings"])
    code, doc, err = scan(SHIFTED, "--only", "kl_wobble")
    assert code == 2 and "kl_wobble" in err


def test_missing_file_is_exit_2():
    code, _, err = scan(ROOT / "no_such_run.jsonl")
    assert code == 2 and "no_such_run" in err


def test_out_writes_json_and_markdown(tmp_path):
    proc = subprocess.run([rldk_binary(), "log-scan", str(SHIFTED), "--out", str(tmp_path)], capture_output=True,
                          text=True)
    assert proc.returncode == 0  # the default --fail-on is critical; the shift is a warning
    assert json.loads((tmp_path / "scan.json").read_text())["schema"] == "rldk.scan/v1"
    assert "kl_level_shift" in (tmp_path / "scan.md").read_text()


def test_doctor_writes_valid_report_card(tmp_path):
    proc = subprocess.run([rldk_binary(), "doctor", str(SHIFTED), "--out", str(tmp_path), "--python", sys.executable],
                          capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads((tmp_path / "doctor.json").read_text())
    validator("rldk.doctor.v1.schema.json").validate(doc)
    html = (tmp_path / "doctor.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "kl_level_shift" in html
    assert "<script" not in html
    assert "kl_level_shift" in (tmp_path / "doctor.md").read_text()


def test_forensics_kl_drift():
    proc = subprocess.run([rldk_binary(), "forensics", "kl-drift", str(SHIFTED), "--json"], capture_output=True,
                          text=True)
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    validator("rldk.kl-drift.v1.schema.json").validate(doc)
    run = doc["runs"][0]
    assert run["drift_detected"] is True and run["ratio"] > 3
    proc = subprocess.run([rldk_binary(), "forensics", "kl-drift", str(CLEAN), "--json", "--fail-on-drift"],
                          capture_output=True, text=True)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["runs"][0]["drift_detected"] is False


def test_a_folder_of_runs_scans_the_same_on_any_number_of_threads(tmp_path):
    rng = random.Random(7)
    for r in range(12):
        with open(tmp_path / ("run%02d.jsonl" % r), "w") as f:
            for s in range(300):
                kl = (1.5 if r % 3 == 0 and s > 200 else 0.05) + rng.gauss(0, 0.003)
                f.write(json.dumps({"step": s, "kl": kl, "entropy": 1.5 - s * 1e-3 + rng.gauss(0, 0.01)}) + "\n")
            if r == 4:
                f.write('{"step": 300, "kl": \n')  # a bad line: reported, with its file and line, on any thread
    (tmp_path / "notes.txt").write_text("not a run log\n")
    outs = []
    for threads in ("1", "2", "0"):
        proc = subprocess.run([rldk_binary(), "scan", str(tmp_path), "--json", "--fail-on", "never", "--threads",
                               threads], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        outs.append((proc.stdout, proc.stderr))
    assert outs[0] == outs[1] == outs[2]
    runs = json.loads(outs[0][0])["runs"]
    assert [r["run_id"] for r in runs] == ["run%02d" % r for r in range(12)]
    assert "run04.jsonl:301" in outs[0][1]
    infos = [subprocess.run([rldk_binary(), "info", str(tmp_path), "--json", "--threads", threads],
                            capture_output=True, text=True).stdout for threads in ("1", "2")]
    assert infos[0] == infos[1] and len(json.loads(infos[0])["runs"]) == 12


def test_streaming_scan_gives_the_whole_run_report_on_the_fault_benchmark(tmp_path):
    """The scan feeds its detectors while it reads, planned on the first --plan-steps steps: planning after 8 steps,
    after 300, after the default 2,048 (runs of up to 5,000 steps here) and reading from stdin (the whole run, replayed)
    give the same findings on a labeled corpus with every fault type."""
    sys.path.insert(0, str(ROOT / "bench"))
    from fault_bench import corpus

    corpus.write_corpus(str(tmp_path), corpus.CorpusSize(runs_per_fault=1, clean_steps=5000), seed=5)
    runs = sorted(tmp_path.glob("*.jsonl"))
    assert len(runs) > 20 and max(sum(1 for _ in open(r)) for r in runs) > 2048

    def findings(*args, stdin=None):
        proc = subprocess.run([rldk_binary(), "scan", *map(str, args), "--json", "--fail-on", "never"],
                              capture_output=True, text=True, stdin=stdin)
        assert proc.returncode == 0, proc.stderr
        return [(r["steps"], r["findings"], r["skipped"], r["health"]) for r in json.loads(proc.stdout)["runs"]]

    default = findings(tmp_path)
    assert sum(len(f) for _, f, _, _ in default) > 20
    assert findings(tmp_path, "--plan-steps", "8") == default
    assert findings(tmp_path, "--plan-steps", "300") == default
    for i in (0, len(runs) // 2, len(runs) - 1):
        with open(runs[i]) as f:
            assert findings("-", stdin=f) == [default[i]]


def test_a_log_sorted_by_metric_scans_like_the_log_in_step_order(tmp_path):
    """A long-form log sorted by metric name (as a database export gives it) has every point after later steps of
    other metrics: the scan reads it whole and replays it in step order, whether that shows within the planning
    steps or after them."""
    rng = random.Random(3)
    rows = []
    for s in range(3000):
        rows.append({"name": "kl", "step": s, "value": (0.8 if 1000 <= s < 1010 else 0.03) + rng.gauss(0, 0.002)})
        rows.append({"name": "entropy", "step": s,
                     "value": max(0.02, 1.4 - (s - 2200) * 2e-3 if s > 2200 else 1.4) + rng.gauss(0, 0.005)})
        rows.append({"name": "reward", "step": s, "value": 0.2 + s * 1e-4 + rng.gauss(0, 0.01)})
    ordered, by_metric = tmp_path / "ordered.jsonl", tmp_path / "by_metric.jsonl"
    for path, body in ((ordered, rows), (by_metric, sorted(rows, key=lambda r: r["name"]))):
        path.write_text("".join(json.dumps(r) + "\n" for r in body))
    out = []
    for path, plan in ((ordered, "2048"), (by_metric, "2048"), (by_metric, "5000")):
        proc = subprocess.run([rldk_binary(), "scan", str(path), "--json", "--fail-on", "never", "--plan-steps", plan],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        run = json.loads(proc.stdout)["runs"][0]
        out.append((run["steps"], run["findings"], run["health"]))
    assert out[0] == out[1] == out[2]
    onsets = sorted(f["onset_step"] for f in out[0][1])
    assert any(1000 <= s <= 1010 for s in onsets) and any(s >= 2200 for s in onsets), onsets


def test_python_scan_is_the_cli_scan(tmp_path):
    """rldk.scan() runs the same engine as `rldk scan --json`: the same document, the reader's diagnostics per run,
    and the same checks of its arguments."""
    import rldk

    log = tmp_path / "shifted.jsonl"
    log.write_text(SHIFTED.read_text() + '{"step": 2000, "kl": \n')  # a bad last line
    report = rldk.scan(log)
    code, cli, _ = scan(log, "--fail-on", "never")
    assert dict(report) == cli
    assert report.schema == "rldk.scan/v1" and len(report.runs) == 1
    assert any(d["line"] == len(SHIFTED.read_text().splitlines()) + 1 for d in report.diagnostics[0])
    warnings = report.findings(at_least="warning")
    assert warnings and all(f["severity"] in ("warning", "critical") and f["run_id"] == "shifted" for f in warnings)
    assert dict(rldk.scan(log, only="kl_level_shift")) == scan(log, "--only", "kl_level_shift", "--fail-on",
                                                                "never")[1]
    assert dict(rldk.scan(CLEAN, SHIFTED, skip=["kl"], threads=1, plan_steps=8)) == scan(
        CLEAN, SHIFTED, "--skip", "kl", "--plan-steps", "8", "--fail-on", "never")[1]
    for bad in (dict(only="no_such_detector"), dict(threads=-1), dict(plan_steps=0), dict(skip=3)):
        with pytest.raises(rldk.InvalidArgumentError):
            rldk.scan(log, **bad)
    with pytest.raises(rldk.SourceNotFoundError):
        rldk.scan(tmp_path / "missing.jsonl")
    with pytest.raises(rldk.InvalidArgumentError):
        rldk.scan()
