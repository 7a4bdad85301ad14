"""The fault benchmark's own machinery: generator, labels and matching. None of this depends on detector quality;
the evaluator is exercised on hand-made scan documents."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from fault_bench import algorithms, corpus  # noqa: E402
from fault_bench.evaluate import Finding, MatchOptions, evaluate  # noqa: E402
from fault_bench.faults import CATALOG, FAULT_TYPES  # noqa: E402
from fault_bench.labels import Label, RunLabels, read_labels  # noqa: E402

CONTRACT_FAULTS = """kl_spike kl_level_shift kl_controller_off_target kl_drift entropy_collapse entropy_surge
reward_hacking_length reward_hacking_gold reward_saturation grad_explosion grad_vanishing grad_spike grad_imbalance
advantage_bias advantage_collapse clip_fraction_high ratio_breach grpo_zero_variance truncation non_finite
loss_plateau lr_anomaly memory_leak throughput_drop logprob_mismatch""".split()

TINY = corpus.CorpusSize(runs_per_fault=1, clean_steps=300)


def test_catalog_covers_every_contract_fault_type():
    assert sorted(FAULT_TYPES) == sorted(CONTRACT_FAULTS)


def test_plan_generates_every_fault_type_on_every_algorithm_it_applies_to():
    planned = corpus.plan(corpus.QUICK, seed=7)
    seen = {(p.fault, p.algorithm) for p in planned if p.fault}
    for name, fault in CATALOG.items():
        for algorithm in fault.algorithms:
            assert (name, algorithm) in seen, (name, algorithm)
    assert sum(p.steps for p in planned if p.fault is None) >= corpus.QUICK.clean_steps
    assert sum(p.steps for p in corpus.plan(corpus.FULL, seed=7) if p.fault is None) >= 100_000


def test_same_seed_same_run_and_labels(tmp_path):
    planned = [p for p in corpus.plan(TINY, seed=3) if p.fault == "kl_drift"][0]
    a_run, a_labels = corpus.build(planned)
    b_run, b_labels = corpus.build(planned)
    a_run.write_jsonl(str(tmp_path / "a.jsonl"))
    b_run.write_jsonl(str(tmp_path / "b.jsonl"))
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert a_labels.to_json() == b_labels.to_json()
    other = corpus.plan(TINY, seed=4)
    c_run, _ = corpus.build([p for p in other if p.fault == "kl_drift"][0])
    assert not np.array_equal(a_run.metrics["policy/kl"][:100], c_run.metrics["policy/kl"][:100])


@pytest.mark.parametrize("fault_name", CONTRACT_FAULTS)
def test_labels_match_the_injection(fault_name):
    """Against a clean twin (same seed, no fault): nothing changes before the labeled onset, every labeled metric
    changes inside [onset, end], and the magnitude lies in the documented range."""
    fault = CATALOG[fault_name]
    for k, algorithm in enumerate(fault.algorithms):
        planned = corpus.PlannedRun("t", algorithm, 300, fault_name, (11, k))
        run, labels = corpus.build(planned)
        twin = algorithms.generate(algorithm, "t", 300, np.random.default_rng(list(planned.seed)))
        (label,) = labels.faults
        i0, i1 = label.onset_step - 1, label.end_step - 1
        assert 0 < i0 <= i1 < run.n
        for name, values in run.metrics.items():
            before, twin_before = values[:i0], twin.metrics[name][:i0]
            if fault_name == "reward_hacking_gold" and name == algorithms.GOLD_REWARD:
                # A gold-fault run is evaluated at least every GOLD_FAULT_MAX_EVAL_EVERY steps from the start; the
                # evals the clean twin has are the same values.
                logged = np.isfinite(twin_before)
                np.testing.assert_array_equal(before[logged], twin_before[logged], err_msg=name)
                assert np.isfinite(before).sum() >= logged.sum()
                continue
            np.testing.assert_array_equal(before, twin_before, err_msg=name)
        for name in label.metrics:
            assert name in run.metrics, name
            changed = ~np.isclose(run.metrics[name][i0:i1 + 1], twin.metrics[name][i0:i1 + 1], equal_nan=True)
            assert changed.any() or run.non_finite.get(name), (fault_name, algorithm, name)
        if fault_name == "loss_plateau" and algorithm == "dpo":
            assert label.magnitude > 0  # the frozen loss sits above where it would have ended
        elif len(fault.magnitude) == 2:
            lo, hi = fault.magnitude
            assert lo <= label.magnitude <= hi
        elif fault_name != "non_finite":
            assert label.magnitude in fault.magnitude
        assert fault_name not in label.also_accept
        assert set(label.also_accept) <= set(CONTRACT_FAULTS)


def test_written_runs_are_json_with_canonical_names(tmp_path):
    manifest = corpus.write_corpus(str(tmp_path), TINY, seed=5, faults=["non_finite", "reward_hacking_gold"])
    known = set(_canonical_names()) | {algorithms.GOLD_REWARD}
    for entry in manifest["runs"]:
        lines = (tmp_path / entry["path"]).read_text().splitlines()
        assert len(lines) == entry["steps"]
        records = [json.loads(line) for line in lines]
        assert [r["step"] for r in records] == list(range(1, entry["steps"] + 1))
        names = set().union(*records) - {"step"}
        assert names <= known, names - known
        labels = read_labels(str(tmp_path / (entry["run_id"] + ".labels.json")))
        if entry["fault"] == "non_finite":
            (label,) = labels.faults
            bad = [r for r in records if any(isinstance(v, float) and not np.isfinite(v) for v in r.values())]
            assert bad and bad[0]["step"] == label.onset_step
        if entry["fault"] is None:
            assert labels.clean


def _canonical_names():
    text = (ROOT / "data" / "metrics.yaml").read_text()
    return [line.split("name:")[1].strip() for line in text.splitlines() if line.startswith("  - name:")]


# ------------------------------------------------------------------------------------------------- evaluator
def _labels():
    shift = Label("kl_level_shift", ["policy/kl"], 100, 300, 3.0, "sigma", ["kl_drift"])
    spike = Label("grad_spike", ["policy/grad_norm"], 200, 201, 20.0, "x level", [])
    return {"a": RunLabels("a", "ppo", 500, [shift]), "b": RunLabels("b", "grpo", 400, [spike]),
            "clean1": RunLabels("clean1", "ppo", 6000, []), "clean2": RunLabels("clean2", "dpo", 4000, [])}


def _f(run, fault, onset, severity="warning", detector=None):
    return Finding(run, detector or fault, fault, severity, "m", onset)


def test_matching_window_delay_and_early():
    options = MatchOptions(tolerance=10, max_delay=50)
    r = evaluate(_labels(), [_f("a", "kl_level_shift", 107), _f("a", "kl_level_shift", 140),
                             _f("b", "grad_spike", 195)], options)
    shift, spike = r["faults"]["kl_level_shift"], r["faults"]["grad_spike"]
    assert (shift.detected, shift.delays, shift.early, shift.true_findings) == (1, [7], 0, 2)
    assert (spike.detected, spike.delays, spike.early) == (1, [0], 1)
    assert r["false_alarms_per_10k"] == 0 and shift.precision == 1.0


def test_findings_outside_the_window_are_misses_and_false_alarms():
    options = MatchOptions(tolerance=10, max_delay=50)
    r = evaluate(_labels(), [_f("a", "kl_level_shift", 89), _f("b", "grad_spike", 252)], options)
    shift, spike = r["faults"]["kl_level_shift"], r["faults"]["grad_spike"]
    assert shift.detected == 0 and shift.misses == [("a", 100, 3.0, "sigma")] and shift.false_findings == 1
    assert spike.detected == 0 and spike.false_findings == 1  # 201 + 50 < 252
    assert len(r["unlabeled_false_alarms"]) == 2
    assert evaluate(_labels(), [_f("b", "grad_spike", 251)], options)["faults"]["grad_spike"].detected == 1


def test_wrong_type_is_false_alarm_unless_tolerated_consequence():
    r = evaluate(_labels(), [_f("a", "kl_drift", 150), _f("a", "entropy_collapse", 150)], MatchOptions())
    assert r["faults"]["kl_drift"].tolerated == 1 and r["faults"]["kl_drift"].false_findings == 0
    assert r["faults"]["entropy_collapse"].false_findings == 1
    assert r["faults"]["kl_level_shift"].detected == 0  # a tolerated consequence does not count as detection
    assert [f.fault for f in r["unlabeled_false_alarms"]] == ["entropy_collapse"]


def test_false_alarms_per_10k_clean_steps_and_severity_floor():
    findings = [_f("clean1", "grad_spike", 10), _f("clean2", "memory_leak", 3000, "critical"),
                _f("clean2", "kl_spike", 50, "info")]
    r = evaluate(_labels(), findings, MatchOptions(min_severity="warning"))
    assert r["clean_steps"] == 10_000 and len(r["clean_false_alarms"]) == 2
    assert r["false_alarms_per_10k"] == pytest.approx(2.0)
    assert r["faults"]["grad_spike"].precision == 0.0
    r_info = evaluate(_labels(), findings, MatchOptions(min_severity="info"))
    assert r_info["false_alarms_per_10k"] == pytest.approx(3.0)
    r_critical = evaluate(_labels(), findings, MatchOptions(min_severity="critical"))
    assert r_critical["false_alarms_per_10k"] == pytest.approx(1.0)


def test_findings_for_unknown_runs_are_rejected():
    with pytest.raises(ValueError, match="without labels"):
        evaluate(_labels(), [_f("zzz", "kl_spike", 1)], MatchOptions())


def _oracle_scan(directory, manifest, delay, extra=()):
    """A hand-made rldk.scan/v1 document: one finding per label, `delay` steps after its onset, plus extras."""
    runs = []
    for entry in manifest["runs"]:
        labels = read_labels(os.path.join(directory, entry["run_id"] + ".labels.json"))
        findings = [{"detector": l.fault, "fault": l.fault, "area": "kl", "severity": "critical",
                     "metric": l.metrics[0], "onset_step": l.onset_step + delay, "end_step": l.end_step,
                     "peak_step": l.onset_step, "peak_value": 1.0, "evidence": {}, "explanation": "",
                     "fixes": []} for l in labels.faults]
        findings += [dict(findings[0] if findings else {}, **x) for x in extra if x["run_id"] == entry["run_id"]]
        runs.append({"run_id": entry["run_id"], "source": os.path.join(directory, entry["path"]),
                     "steps": {"first": 1, "last": entry["steps"], "count": entry["steps"]},
                     "findings": findings, "health": {"overall": 1.0, "areas": {}}, "skipped": []})
    return {"schema": "rldk.scan/v1", "runs": runs, "summary": {}}


def test_runner_scores_a_saved_scan_document(tmp_path):
    directory = tmp_path / "corpus"
    manifest = corpus.write_corpus(str(directory), TINY, seed=9, faults=["kl_level_shift", "grad_spike"])
    scan = tmp_path / "scan.json"
    scan.write_text(json.dumps(_oracle_scan(str(directory), manifest, delay=4)))
    cmd = [sys.executable, str(ROOT / "bench" / "fault_bench" / "run.py"), "--corpus-dir", str(directory),
           "--scan-json", str(scan), "--out", str(tmp_path / "out")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["faults"]["kl_level_shift"]["recall"] == 1.0
    assert result["faults"]["kl_level_shift"]["median_delay"] == 4
    assert result["headline"]["false_alarms_per_10k_clean_steps"] == 0
    assert "| kl_level_shift | 1 | 1 |" in (tmp_path / "out" / "result.md").read_text()
    three = result["headline"]["level_shift_3sigma"]
    assert three["detected"] == three["labels"]
    # Types without labels in this small corpus cannot meet the recall goal: the runner says so with exit code 1.
    assert proc.returncode == 1, proc.stderr
