"""The Python API under hostile input (issue 12, item 14): bytes that are not UTF-8 in metric names, run ids and
file names; steps outside int64, NaN, bools and strings; arguments of the wrong type. Every failure is one of the
classes of rldk.errors, naming the argument and the value; nothing raises UnicodeDecodeError or nanobind's TypeError.
"""
import json
import math
import os

import numpy as np
import pytest

import rldk
from rldk import _core

REPLACEMENT = "\ufffd"


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def jsonl(*records):
    return b"".join(record + b"\n" for record in records)


# ---------------------------------------------------------------------------------------------- invalid UTF-8


def test_metric_name_with_invalid_utf8_is_shown_replaced_reachable_and_counted(tmp_path):
    path = write_bytes(tmp_path / "run.jsonl", jsonl(b'{"step": 1, "ok": 1.0, "m\xff\xfe": 2.0}',
                                                      b'{"step": 2, "ok": 1.5, "m\xff\xfe": 2.5}'))
    run = rldk.read_run(path, canonical=False)
    shown = "m" + REPLACEMENT * 2  # Python's errors="replace": one U+FFFD per invalid byte
    assert run.metrics == [shown, "ok"]
    assert "2 metrics" in repr(run)
    # The name the run shows is the name it answers to: iteration, lookup and pandas agree.
    assert list(run[shown].values) == [2.0, 2.5] and run[shown].name == shown and shown in run
    assert run.raw_to_canonical[shown] == shown
    assert set(run.to_pandas().columns) >= {shown, "ok"}
    assert run.diagnostic_counts["invalid_utf8"] == 1
    [diag] = [d for d in run.diagnostics if d["kind"] == "invalid_utf8"]
    assert "\\xff\\xfe" in diag["message"] and shown in diag["message"] and diag["file"] == str(path)


def test_two_invalid_names_that_decode_alike_stay_apart(tmp_path):
    path = write_bytes(tmp_path / "run.jsonl", jsonl(b'{"step": 1, "m\xff\xfe": 1.0, "m\xfe\xff": 2.0}'))
    run = rldk.read_run(path, canonical=False)
    shown = "m" + REPLACEMENT * 2
    assert run.metrics == [shown, shown + " (2)"]
    assert sorted(float(run[name].values[0]) for name in run) == [1.0, 2.0]  # neither series lost nor merged
    assert run.diagnostic_counts["invalid_utf8"] == 2


def test_run_id_with_invalid_utf8(tmp_path):
    path = write_bytes(tmp_path / "run.jsonl", jsonl(b'{"run_id": "r\xff", "step": 1, "ok": 1.0}'))
    run = rldk.read_run(path)
    assert run.run_id == "r" + REPLACEMENT
    assert "r" + REPLACEMENT in repr(run)
    assert run.diagnostic_counts["invalid_utf8"] == 1
    with pytest.raises(rldk.MetricNotFoundError) as missing:
        run["nope"]
    assert "r" + REPLACEMENT in str(missing.value)


def test_one_hostile_file_does_not_fail_the_folder(tmp_path):
    write_bytes(tmp_path / "good.jsonl", jsonl(b'{"step": 1, "policy/kl": 0.1}', b'{"step": 2, "policy/kl": 0.2}'))
    write_bytes(tmp_path / "hostile.jsonl", jsonl(b'{"run_id": "h\xc3", "step": 1, "k\xff": 1.0}'))
    runs = {run.run_id: run for run in rldk.read_runs(tmp_path)}
    assert set(runs) == {"good", "h" + REPLACEMENT}
    assert list(runs["good"]["policy/kl"].values) == [0.1, 0.2]
    assert runs["good"].diagnostic_counts.get("invalid_utf8", 0) == 0
    hostile = runs["h" + REPLACEMENT]
    assert hostile.metrics == ["k" + REPLACEMENT] and hostile.diagnostic_counts["invalid_utf8"] == 2
    for run in runs.values():  # every string property decodes
        repr(run), run.source, run.format, run.meta, run.diagnostics, run.raw_to_canonical


def test_file_name_that_is_not_utf8_opens_and_is_reported_decoded(tmp_path):
    folder = os.fsencode(tmp_path)
    name = folder + b"/run\xff.jsonl"
    write_bytes(name, jsonl(b'{"step": 1, "ok": 1.0}'))
    # os.listdir gives the name with a surrogate escape; the binding turns it back into the original bytes.
    [listed] = os.listdir(tmp_path)
    run = rldk.read_run(os.path.join(tmp_path, listed))
    assert run.source == str(tmp_path) + "/run" + REPLACEMENT + ".jsonl"
    assert list(run["ok"].values) == [1.0]
    assert rldk.read_run(name).num_points == 1  # bytes paths too
    [from_folder] = rldk.read_runs(tmp_path)
    assert REPLACEMENT in from_folder.source
    repr(from_folder)


def test_names_with_escape_nul_and_html_round_trip_exactly(tmp_path):
    # The Python API hands back data, not terminal text: a name is returned exactly as logged.
    names = ["a\x1b[2Jb\x1b]0;title\x07", "x\x00y", "<script>alert(1)</script>", "../../etc/passwd", "q'\"`$(id)`"]
    path = tmp_path / "events.jsonl"
    with rldk.EventWriter(path, run_id="<b>id\x1b[31m</b>") as w:
        w.log(1, metrics={name: float(i) for i, name in enumerate(names)})
    run = rldk.read_run(path, canonical=False)
    assert run.run_id == "<b>id\x1b[31m</b>"
    assert sorted(run.metrics) == sorted(names)
    assert all(float(run[name].values[0]) == float(i) for i, name in enumerate(names))
    assert run.diagnostic_counts.get("invalid_utf8", 0) == 0

    monitor = rldk.Monitor(rules_yaml="rules:\n  - {id: big, metric: \"x\\0y\", condition: value > 0}\n",
                           run_id="<b>\x1b[2J")
    [alert] = monitor.observe(1, {"x\x00y": 1.0})
    assert alert["run_id"] == "<b>\x1b[2J" and alert["rule_id"] == "big"


def test_strings_with_lone_surrogates_are_accepted_not_refused_as_types(tmp_path):
    monitor = rldk.Monitor(preset="grpo_safe", run_id="r\ud800")
    assert monitor.observe(1, {"k\ud800": 1.0, "\udcff": 2.0}) == []
    path = tmp_path / "s.jsonl"
    with rldk.EventWriter(path) as w:
        w.log(1, "k\ud800", 1.0)
    run = rldk.read_run(path, canonical=False)
    assert len(run.metrics) == 1 and run.metrics[0].startswith("k")


def test_rule_ids_alerts_and_records_with_invalid_bytes_decode(tmp_path):
    # "\udcff" is how Python spells the byte 0xff of a non-UTF-8 source (surrogateescape): it reaches the engine as
    # that byte, and every string coming back (rule ids, alerts, reports, records) decodes with U+FFFD.
    rules = 'rules:\n  - {id: "r\udcffx", metric: "k\udcff", condition: value > 0}\n'
    monitor = rldk.Monitor(rules_yaml=rules, alerts_path=str(tmp_path / "alerts.jsonl"), run_id="run\udcfe")
    assert monitor.rule_ids == ["r" + REPLACEMENT + "x"]
    [alert] = monitor.observe(1, {"k\udcff": 1.0})
    assert (alert["rule_id"], alert["run_id"], alert["metric"]) == ("r\ufffdx", "run\ufffd", "k\ufffd")
    assert REPLACEMENT in alert["message"]
    assert list(monitor.report()) == ["r\ufffdx"]
    monitor.close()
    assert [r["rule_id"] for r in monitor.records()] == ["r\ufffdx"]
    assert [a["run_id"] for a in monitor.session_report()["alerts"]] == ["run\ufffd"]


# ---------------------------------------------------------------------------------------------- steps

HOSTILE_STEPS = [2 ** 63, -2 ** 63 - 1, 2 ** 64, float("nan"), float("inf"), 1.5, True, False, np.True_, "3", b"3",
                 None, [1], object()]


def _assert_step_refused(excinfo, value):
    error = excinfo.value
    assert isinstance(error, rldk.InvalidArgumentError) and isinstance(error, rldk.RldkError)
    assert isinstance(error, ValueError)
    text = str(error)
    assert text.startswith("step ") and repr(value)[:40] in text


@pytest.mark.parametrize("step", HOSTILE_STEPS, ids=repr)
def test_monitor_observe_refuses_hostile_steps(step):
    monitor = rldk.Monitor(preset="grpo_safe")
    with pytest.raises(rldk.InvalidArgumentError) as excinfo:
        monitor.observe(step, {"kl": 0.1})
    _assert_step_refused(excinfo, step)
    assert monitor.observations == 0


@pytest.mark.parametrize("step", HOSTILE_STEPS, ids=repr)
def test_event_writer_refuses_hostile_steps_and_writes_nothing(tmp_path, step):
    path = tmp_path / "e.jsonl"
    with rldk.EventWriter(path) as w:
        for call in (lambda: w.log(step, "kl", 0.1), lambda: w.log(step, metrics={"kl": 0.1}),
                     lambda: w.log_dict(step, {"kl": 0.1}), lambda: w.log(step, metrics={"kl": 0.1}, time=1.0),
                     lambda: w.log(step, metrics={})):
            with pytest.raises(rldk.InvalidArgumentError) as excinfo:
                call()
            _assert_step_refused(excinfo, step)
    assert path.read_bytes() == b""


@pytest.mark.parametrize("step", [2 ** 63, -2 ** 63 - 1, float("nan"), True, "3"], ids=repr)
def test_native_bindings_refuse_hostile_steps_too(tmp_path, step):
    # rldk._core is what the wrappers call; it checks steps itself rather than relying on them.
    native = _core.Monitor(["grpo_safe"], [], [], [], "", False)
    with pytest.raises(rldk.InvalidArgumentError):
        native.observe(step, [("kl", 0.1)], "r")
    writer = _core.EventWriter(str(tmp_path / "n.jsonl"), "", True)
    with pytest.raises(rldk.InvalidArgumentError):
        writer.log(step, "kl", 0.1)
    with pytest.raises(rldk.InvalidArgumentError):
        writer.log_metrics(step, [("kl", 0.1)])
    writer.close()


@pytest.mark.parametrize("step,expected", [(2 ** 63 - 1, 2 ** 63 - 1), (-2 ** 63, -2 ** 63), (np.int64(7), 7),
                                           (np.uint8(7), 7), (7.0, 7), (np.float64(7.0), 7), (-0.0, 0)], ids=repr)
def test_integer_steps_of_every_kind_are_accepted(step, expected):
    assert _core.as_step(step) == expected
    rules = "rules:\n  - {id: any, metric: policy/kl, condition: value > 0}\n"
    [alert] = rldk.Monitor(rules_yaml=rules).observe(step, {"kl": 0.1})
    assert alert["step"] == expected and type(alert["step"]) is int


def test_torch_integer_step_is_accepted():
    torch = pytest.importorskip("torch")
    assert _core.as_step(torch.tensor(12)) == 12
    with pytest.raises(rldk.InvalidArgumentError):
        _core.as_step(torch.tensor(1.5))


# ---------------------------------------------------------------------------------------------- other arguments


@pytest.mark.parametrize("call,argument", [
    (lambda tmp: rldk.read_run(tmp / "x.jsonl", format=None), "format"),
    (lambda tmp: rldk.read_run(tmp / "x.jsonl", run_id=5), "run_id"),
    (lambda tmp: rldk.read_run(12345), "path"),
    (lambda tmp: rldk.canonical_name(5), "raw_name"),
    (lambda tmp: rldk.metric_info(None), "name"),
    (lambda tmp: rldk.Monitor(preset="grpo_safe", run_id=7), "run_id"),
    (lambda tmp: rldk.Monitor(preset="grpo_safe").observe(1, {"kl": 0.1}, run_id=b"r"), "run_id"),
    (lambda tmp: rldk.Monitor(preset="grpo_safe").observe(1, {"kl": 0.1}, time="noon"), "time"),
    (lambda tmp: rldk.Monitor(preset="grpo_safe").observe(1, [("kl", 0.1)]), "metrics"),
    (lambda tmp: rldk.EventWriter(tmp / "e.jsonl").log(1, "kl", 0.1, time="noon"), "time"),
    (lambda tmp: rldk.EventWriter(tmp / "e.jsonl").log(1, "kl", 0.1, time=True), "time"),
    (lambda tmp: rldk.EventWriter(tmp / "e.jsonl").log(1, metrics=[("kl", 0.1)]), "metrics"),
    (lambda tmp: rldk.EventWriter(tmp / "e.jsonl", run_id=3), "run_id"),
    (lambda tmp: rldk.EventWriter(None), "path"),
])
def test_wrong_argument_types_raise_invalid_argument_naming_it(tmp_path, call, argument):
    with pytest.raises(rldk.InvalidArgumentError) as excinfo:
        call(tmp_path)
    assert str(excinfo.value).startswith(argument)


def test_errors_from_the_native_engine_are_rldk_errors(tmp_path):
    with pytest.raises(rldk.RldkError):
        rldk.Monitor(preset="no_such_preset")
    with pytest.raises(rldk.RldkError):
        rldk.Monitor(preset="grpo_safe", set_rule=["\x1b[2J\xff"])
    with pytest.raises(rldk.RldkError):
        rldk.Monitor(rules_yaml="rules: [\x00\udcff")
    with pytest.raises(rldk.RldkError):
        rldk.Monitor(preset="grpo_safe").session_report(fail_on="\udcff")
    with pytest.raises(rldk.InvalidArgumentError):
        rldk.read_run(tmp_path, format="\x1b]0;x\x07")
    run = rldk.read_run(write_bytes(tmp_path / "r.jsonl", jsonl(b'{"step": 1, "ok": 1.0}')))
    with pytest.raises(KeyError) as missing:  # a MetricNotFoundError is still the KeyError a mapping raises
        run["\x00nope\udcff"]
    assert isinstance(missing.value, rldk.MetricNotFoundError) and str(missing.value).startswith("no metric")
    writer = rldk.EventWriter(tmp_path / "w.jsonl")
    writer.close()
    with pytest.raises(rldk.InvalidArgumentError):
        writer.log(1, "kl", 0.1)


def test_huge_and_odd_values(tmp_path):
    rules = "rules:\n  - {id: inf, metric: policy/kl, condition: value > 1e308}\n"
    [alert] = rldk.Monitor(rules_yaml=rules).observe(1, {"kl": 10 ** 400, "other": "text", "none": None})
    assert alert["value"] == math.inf
    path = tmp_path / "v.jsonl"
    with rldk.EventWriter(path) as w:
        w.log(1, metrics={"big": 10 ** 400, "small": -10 ** 400, "np": np.float32(2.5)})
    run = rldk.read_run(path, canonical=False)
    assert run["big"].values[0] == math.inf and run["small"].values[0] == -math.inf and run["np"].values[0] == 2.5
    with rldk.EventWriter(path) as w, pytest.raises(rldk.InvalidArgumentError):
        w.log(1, "text", "not a number")


# ---------------------------------------------------------------------------------------------- end of run

STEADY_RISE = "rules:\n  - id: entropy_trend\n    metric: policy/entropy\n    detector: entropy_rise_steady\n"


def _steady_rise(monitor, steps=60):
    alerts = []
    for step in range(1, steps + 1):
        wobble = 0.01 * math.sin(step * 1.7)
        alerts += monitor.observe(step, {"entropy": 1.0 + 0.05 * step + wobble})
    return alerts


def test_monitor_close_runs_end_of_run_rules(tmp_path):
    # A steady trend is judged on the whole run: only the end of the data can raise it, as in `rldk monitor`.
    alerts_path = tmp_path / "alerts.jsonl"
    with rldk.Monitor(rules_yaml=STEADY_RISE, alerts_path=str(alerts_path)) as monitor:
        assert _steady_rise(monitor) == []
    [alert] = monitor.alerts
    assert alert["rule_id"] == "entropy_trend" and alert["step"] == 60 and alert["metric"] == "policy/entropy"
    records = [json.loads(line) for line in alerts_path.read_text().splitlines()]
    assert [r["rule_id"] for r in records] == ["entropy_trend"]
    report = monitor.session_report(fail_on="warn")
    assert report["summary"]["exit_code"] == 1 and report["summary"]["alerts"] == 1
    assert monitor.report()["entropy_trend"]["activations"] == 1


def test_monitor_finish_returns_the_alerts_once_until_new_data(tmp_path):
    monitor = rldk.Monitor(rules_yaml=STEADY_RISE)
    assert _steady_rise(monitor) == []
    [alert] = monitor.finish()
    assert alert["rule_id"] == "entropy_trend"
    assert monitor.finish() == [] and len(monitor.alerts) == 1  # nothing new observed: nothing judged again
    monitor.close()
    assert len(monitor.alerts) == 1
    # Logging may resume after a finish (a second trainer.train()); observing works and finish runs again.
    monitor.observe(61, {"entropy": 4.1})
    monitor.finish()
    assert monitor.observations == 61
