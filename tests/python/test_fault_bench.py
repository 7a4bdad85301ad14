"""The fault benchmark's own machinery: generator, labels and matching. None of this depends on detector quality;
the evaluator is exercised on hand-made scan documents."""
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from fault_bench import algorithms, corpus  # noqa: E402
from fault_bench.evaluate import Finding, MatchOptions, evaluate, evaluate_by_regime  # noqa: E402
from fault_bench.faults import CATALOG, EARLY_FRACTION, FAULT_TYPES, onsets  # noqa: E402
from fault_bench.labels import Label, RunLabels, read_labels  # noqa: E402

CONTRACT_FAULTS = """kl_spike kl_level_shift kl_controller_off_target kl_drift entropy_collapse entropy_surge
reward_hacking_length reward_hacking_gold reward_saturation grad_explosion grad_vanishing grad_spike grad_imbalance
advantage_bias advantage_collapse clip_fraction_high ratio_breach grpo_zero_variance truncation non_finite
loss_plateau lr_anomaly memory_leak throughput_drop logprob_mismatch kl_above_range length_collapse length_growth
reward_collapse entropy_rise loss_divergence reward_never_paid eos_mismatch""".split()

TINY = corpus.CorpusSize(runs_per_fault=1, clean_steps=300)


def test_catalog_covers_every_contract_fault_type():
    assert sorted(FAULT_TYPES) == sorted(CONTRACT_FAULTS)
    # The contract is the scan catalog's own list (src/core/detect/catalog.cpp, fault_types()).
    source = (ROOT / "src" / "core" / "detect" / "catalog.cpp").read_text()
    block = source[source.index("fault_types() {"):]
    block = block[:block.index("};")]
    assert sorted(re.findall(r'"([a-z_]+)"', block)) == sorted(CONTRACT_FAULTS)


def test_plan_generates_every_fault_type_on_every_algorithm_it_applies_to():
    planned = corpus.plan(corpus.QUICK, seed=7)
    seen = {(p.fault, p.algorithm) for p in planned if p.fault}
    for name, fault in CATALOG.items():
        for algorithm in fault.algorithms:
            assert (name, algorithm) in seen, (name, algorithm)
    assert sum(p.steps for p in planned if p.regime == "long-clean") >= corpus.QUICK.clean_steps
    assert sum(p.points for p in planned if p.regime == "short-clean") >= corpus.QUICK.short_clean_points
    full = corpus.plan(corpus.FULL, seed=7)
    assert sum(p.steps for p in full if p.regime == "long-clean") >= 100_000
    assert sum(p.points for p in full if p.regime == "short-clean") >= 50_000
    assert len({p.run_id for p in full}) == len(full)


def test_plan_has_every_regime_of_every_fault_type():
    planned = corpus.plan(corpus.QUICK, seed=7)
    seen = {(p.fault, p.regime.split("-")[1]) for p in planned if p.fault}
    for name, fault in CATALOG.items():
        for onset in onsets(fault):
            assert (name, onset) in seen, (name, onset)
    assert (("reward_hacking_gold", "mid") in seen and
            not any(p.fault == "reward_hacking_gold" and p.regime == "short-mid" for p in planned))
    for p in planned:
        if p.regime.startswith("short"):
            assert p.log_every in corpus.LOG_EVERY and min(corpus.SHORT_POINTS) <= p.points <= max(corpus.SHORT_POINTS)
        else:
            assert p.log_every == 1
    regimes = {p.regime for p in planned}
    assert set(corpus.REGIMES) | {"long-clean", "short-clean"} == regimes


def test_long_mid_runs_and_long_clean_runs_keep_their_draws_when_regimes_are_added():
    """The long mid-onset runs of older fault types are planned as before the short/early/drift regimes came."""
    small = corpus.CorpusSize(runs_per_fault=2, clean_steps=3000)
    big = corpus.CorpusSize(runs_per_fault=2, clean_steps=3000, short_runs_per_fault=2, early_runs_per_fault=2,
                            drift_runs_per_fault=2, short_clean_points=500)
    old = [p for p in corpus.plan(small, seed=5) if CATALOG.get(p.fault) is None or CATALOG[p.fault].since <= 3]
    new = [p for p in corpus.plan(big, seed=5) if p.regime in ("long-mid", "long-clean")]
    assert old == new[:len(old)]


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


_REGIME_CASES = [(name, regime, every) for name in CONTRACT_FAULTS for regime, every in
                 [("long-mid", 1), ("short-mid", 10), ("long-early", 1), ("short-early", 20), ("long-drift", 1),
                  ("short-drift", 5)]
                 if regime.split("-")[1] in onsets(CATALOG[name])
                 and (regime != "short-mid" or CATALOG[name].short)]


@pytest.mark.parametrize("fault_name,regime,every", _REGIME_CASES)
def test_labels_match_the_injection(fault_name, regime, every):
    """Against a clean twin (same seed, no fault): nothing changes before the labeled onset, every labeled metric
    changes inside [onset, end], and the magnitude lies in the documented range."""
    fault = CATALOG[fault_name]
    onset = regime.split("-")[1]
    for k, algorithm in enumerate(fault.algorithms):
        steps = 300 if every == 1 else 40 * every
        planned = corpus.PlannedRun("t", algorithm, steps, fault_name, (11, k), regime, every)
        run, labels = corpus.build(planned)
        twin = corpus.clean_twin(planned)
        assert list(run.steps) == list(range(every, steps + 1, every))
        (label,) = labels.faults
        assert label.onset_step % every == 0 and label.end_step % every == 0
        i0, i1 = label.onset_step // every - 1, label.end_step // every - 1
        assert 0 <= i0 <= i1 < run.n
        if onset == "mid":
            assert i0 > 0
        elif onset == "early":
            assert fault.early_lead <= i0 <= max(fault.early_lead, int(EARLY_FRACTION * run.n))
        else:
            assert i0 == 0 and i1 == run.n - 1
        for name, values in run.metrics.items():
            if name not in twin.metrics:  # a metric the fault adds (a shaping reward) differs at every step: the
                # fault must begin at the first
                assert i0 == 0, name
                continue
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
        documented = fault.drift_magnitude if onset == "drift" else fault.magnitude
        assert label.unit == (fault.drift_unit if onset == "drift" else fault.unit)
        if fault_name == "loss_plateau" and algorithm == "dpo":
            assert label.magnitude > 0  # the frozen loss sits above where it would have ended
        elif len(documented) == 2:
            lo, hi = documented
            assert lo - 1e-9 <= label.magnitude <= hi + 1e-9, (label.magnitude, documented)
        elif fault_name != "non_finite":
            assert label.magnitude in documented
        assert fault_name not in label.also_accept
        assert set(label.also_accept) <= set(CONTRACT_FAULTS)


def test_written_runs_are_json_with_canonical_names(tmp_path):
    size = corpus.CorpusSize(runs_per_fault=1, clean_steps=300, short_runs_per_fault=1, early_runs_per_fault=1,
                             short_clean_points=20)
    manifest = corpus.write_corpus(str(tmp_path), size, seed=5, faults=["non_finite", "reward_hacking_gold",
                                                                        "kl_above_range"])
    known = set(_canonical_names()) | {algorithms.GOLD_REWARD}
    assert {e["regime"] for e in manifest["runs"]} >= {"long-mid", "short-mid", "short-early", "long-clean",
                                                       "short-clean"}
    for entry in manifest["runs"]:
        lines = (tmp_path / entry["path"]).read_text().splitlines()
        every = entry["log_every"]
        assert len(lines) == entry["points"] == entry["steps"] // every
        records = [json.loads(line) for line in lines]
        assert [r["step"] for r in records] == list(range(every, entry["steps"] + 1, every))
        names = set().union(*records) - {"step"}
        assert names <= known, names - known
        labels = read_labels(str(tmp_path / (entry["run_id"] + ".labels.json")))
        assert (labels.log_every, labels.regime) == (every, entry["regime"])
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


def test_short_runs_match_within_one_logging_interval_and_count_logged_steps():
    """A run logged every 20 steps can only date a change to a logged step: the tolerance is at least one interval.
    False alarms are counted per logged step (a short clean run of 1,000 steps logged every 10 is 100 of them)."""
    label = Label("kl_above_range", ["policy/kl"], 200, 600, 2.0, "nats per token", [])
    labels = {"s": RunLabels("s", "grpo", 600, [label], log_every=20, regime="short-early"),
              "c": RunLabels("c", "ppo", 1000, [], log_every=10, regime="short-clean"),
              "l": RunLabels("l", "ppo", 500, [], regime="long-clean")}
    hit = evaluate(labels, [_f("s", "kl_above_range", 180)], MatchOptions(tolerance=10))
    stats = hit["faults"]["kl_above_range"]
    assert (stats.detected, stats.early, stats.delays) == (1, 1, [0])
    assert evaluate(labels, [_f("s", "kl_above_range", 179)])["faults"]["kl_above_range"].detected == 0
    late = evaluate(labels, [_f("s", "kl_above_range", 260)])["faults"]["kl_above_range"]
    assert late.delays == [60] and late.delays_points == [3.0]
    r = evaluate(labels, [_f("c", "kl_spike", 500)])
    assert (r["clean_steps"], r["clean_runs"], r["clean_runs_with_alarms"]) == (600, 2, 1)
    assert r["false_alarms_per_10k"] == pytest.approx(10_000 / 600)
    groups = evaluate_by_regime(labels, [_f("c", "kl_spike", 500), _f("s", "kl_above_range", 200)])
    assert set(groups) == {"short-early", "short", "early", "long"}
    assert groups["short"]["clean_steps"] == 100 and len(groups["short"]["clean_false_alarms"]) == 1
    assert groups["long"]["clean_steps"] == 500 and not groups["long"]["clean_false_alarms"]
    assert groups["early"]["faults"]["kl_above_range"].detected == 1 and groups["early"]["clean_runs"] == 0


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
    assert result["regimes"]["long-mid"]["recall"] == 1.0 and result["regimes"]["long"]["clean_runs"] >= 1
    assert "## By regime" in (tmp_path / "out" / "result.md").read_text()
    # Types without labels in this small corpus cannot meet the recall goal: the runner says so with exit code 1.
    assert proc.returncode == 1, proc.stderr
