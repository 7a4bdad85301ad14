"""rldk.contamination.ray on a local Ray cluster of 2 workers gives the byte-identical report of the local check."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT
from test_cli import rldk_binary

ray = pytest.importorskip("ray")
sys.path.insert(0, str(ROOT / "bench" / "contamination"))
import planted  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_report_is_byte_identical_to_local(tmp_path, cluster):
    from rldk.contamination import ray as cray

    plan = planted.generate(tmp_path, train_bytes=3_000_000, files=5, per_kind=2, clean_items=10)
    train, evals = tmp_path / "train", [tmp_path / "eval_contaminated.jsonl", tmp_path / "eval_clean.jsonl"]
    local = tmp_path / "local"
    subprocess.run([rldk_binary(), "contamination", "--train", str(train), "--eval", *map(str, evals), "--out",
                    str(local), "--quiet"], check=True, capture_output=True)
    report = cray.check(train=[train], eval=evals, shards=3)  # 3 shards of 2, 2 and 1 files on 2 workers
    assert report.json_text == (local / "contamination.json").read_text()
    assert report.markdown == (local / "contamination.md").read_text()
    assert report.dirty_jsonl == (local / "dirty.jsonl").read_text()
    assert report.contaminated
    found = {i["row"] for i in json.loads(report.json_text)["items"] if i["set"] == 0 and i["verdict"] != "clean"}
    assert found == {r for r, p in plan.items() if p["kind"] != "clean"}


def test_cli_ray_flag_runs_the_python_entry_point(tmp_path, cluster):
    planted.generate(tmp_path, train_bytes=1_000_000, files=3, per_kind=1, clean_items=4)
    args = ["--train", str(tmp_path / "train"), "--eval", str(tmp_path / "eval_contaminated.jsonl"), "--quiet"]
    subprocess.run([rldk_binary(), "contamination", *args, "--out", str(tmp_path / "local")], check=True,
                   capture_output=True)
    address = ray.get_runtime_context().gcs_address
    proc = subprocess.run([rldk_binary(), "contamination", *args, "--ray", address, "--out", str(tmp_path / "ray"),
                           "--gate"], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr  # planted items: the gate fails, as locally
    assert (tmp_path / "ray" / "contamination.json").read_bytes() == \
        (tmp_path / "local" / "contamination.json").read_bytes()
