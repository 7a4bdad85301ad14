"""One engine, one verdict: every stop that `rldk monitor --once` makes with the preset matching the run's
algorithm (grpo_safe, ppo_safe, dpo_basic) is also a `rldk scan` finding of warning or worse, on the same metric,
at the same or an earlier step. Checked on the synthetic fault benchmark's quick corpus (every fault type, short
and long runs, early and drifting onsets, clean runs); tests/python/test_real_logs.py checks it on real logs."""
import pathlib
import sys

import pytest

import real_logs

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from fault_bench import corpus  # noqa: E402


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    directory = tmp_path_factory.mktemp("contract_corpus")
    manifest = corpus.write_corpus(str(directory), corpus.QUICK, seed=20261124)
    return directory, manifest["runs"]


def test_every_monitor_stop_is_a_scan_finding_on_the_synthetic_corpus(synthetic):
    directory, runs = synthetic
    breaks = []
    stopped = 0
    for entry in runs:
        path = directory / entry["path"]
        findings = real_logs.scan(path)["findings"]
        stops = real_logs.monitor_stops(path, real_logs.MATCHING_PRESET[entry["algorithm"]])
        stopped += bool(stops)
        for b in real_logs.contract_breaks(path, entry["algorithm"], findings, stops):
            breaks.append("%s: %s" % (entry["run_id"], b))
    assert len(runs) >= 100
    assert stopped >= 10, "too few runs stopped by the monitor for the contract to say anything"
    assert not breaks, "\n".join(breaks[:40])
