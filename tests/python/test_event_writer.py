"""rldk.EventWriter: what it writes is read back exactly, from one or many threads."""
import datetime as dt
import json
import math
import threading

import numpy as np
import pytest

import rldk


def test_round_trip_values(tmp_path):
    path = tmp_path / "out" / "metrics.jsonl"
    with rldk.EventWriter(path, run_id="exp1") as w:
        w.log(step=1, name="policy/kl", value=0.125)
        w.log(step=2, name="policy/kl", value=float("nan"))
        w.log(step=3, name="policy/kl", value=float("inf"), tags={"phase": "train"}, meta={"seed": 3})
        w.log(step=3, metrics={"reward/mean": np.float32(0.5), "policy/entropy": 1.75})
        w.log_dict(4, {"reward/mean": 0.625})
        w.log(step=5, name="policy/kl", value=0.1, time=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))
    assert w.closed
    run = rldk.read_run(path)
    assert run.run_id == "exp1"
    kl = run["policy/kl"].values
    assert kl[0] == 0.125 and math.isnan(kl[1]) and kl[2] == math.inf and kl[3] == 0.1
    assert run["reward/mean"].values.tolist() == [0.5, 0.625]
    assert run["policy/entropy"].steps.tolist() == [3]
    assert run["policy/kl"].wall_times[3] == 1767225600.0
    lines = path.read_text().splitlines()
    third = json.loads(lines[2].replace("Infinity", "1e999"))
    assert third["tags"] == {"phase": "train"} and third["meta"] == {"seed": "3"}
    assert list(json.loads(lines[0]).keys()) == sorted(json.loads(lines[0]).keys())


def test_append_and_truncate(tmp_path):
    path = tmp_path / "m.jsonl"
    with rldk.EventWriter(path) as w:
        w.log(1, "a", 1.0)
    with rldk.EventWriter(path) as w:
        w.log(2, "a", 2.0)
    assert len(path.read_text().splitlines()) == 2
    with rldk.EventWriter(path, append=False) as w:
        w.log(3, "a", 3.0)
    assert len(path.read_text().splitlines()) == 1


def test_many_threads_write_whole_lines(tmp_path):
    path = tmp_path / "threads.jsonl"
    w = rldk.EventWriter(path)
    def work(t):
        for i in range(500):
            w.log(step=i, name="thread%d" % t, value=i * 0.5)
            if i % 50 == 0:
                w.log(step=i, metrics={"m%d_a" % t: 1.0, "m%d_b" % t: 2.0})
    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    w.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 8 * 500 + 8 * 10 * 2
    for line in lines:
        json.loads(line)  # every line whole
    run = rldk.read_run(path)
    for t in range(8):
        assert run["thread%d" % t].values.tolist() == [i * 0.5 for i in range(500)]


def test_bad_arguments(tmp_path):
    w = rldk.EventWriter(tmp_path / "m.jsonl")
    with pytest.raises(ValueError):
        w.log(step=1, name="x", value="not a number")
    with pytest.raises(ValueError):
        w.log(step=1, name="", value=1.0)
    with pytest.raises(ValueError):
        w.log(step=1)
    w.close()
    with pytest.raises(rldk.InvalidArgumentError):
        w.log(step=1, name="x", value=1.0)
    with pytest.raises(OSError):
        rldk.EventWriter("/proc/definitely/not/writable.jsonl")
