"""`rldk scan`, `rldk doctor` and `rldk forensics kl-drift` on the scan fixtures (examples/scan/, shaped like the
older tool's clean and doctored PPO runs): the KL level shift at step 800 is found, the clean run gives no finding,
and the JSON documents validate against their schemas."""
import json
import random
import subprocess
import sys
from pathlib import Path

import jsonschema
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
