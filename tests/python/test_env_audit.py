"""rldk env-audit inspects the real target: a real interpreter probed in a subprocess, real repository code.
It must pass a clean, seeded, deterministic repository and fail the case-study trainer and other broken setups."""
import json
import pathlib
import shutil
import subprocess
import sys

import pytest
import torch

from conftest import rldk_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "schemas" / "rldk.env-audit.v1.schema.json"

CLEAN = '''"""A careful trainer: everything seeded, deterministic algorithms on, a seeded shuffle."""
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset


def main(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    data = TensorDataset(torch.randn(64, 4))
    loader = DataLoader(data, batch_size=8, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    noise = np.random.normal(size=3)
    pick = random.choice([1, 2, 3])
    # torch.backends.cudnn.benchmark = True   (a comment: must not count)
    doc = "cudnn.benchmark = True inside a string must not count either"
    return loader, noise, pick, doc
'''

BENCHMARK = '''import torch
torch.backends.cudnn.benchmark = True
model = torch.nn.Linear(2, 2)
'''

UNSEEDED_LOADER = '''import torch
from torch.utils.data import DataLoader
torch.manual_seed(0)
loader = DataLoader(
    list(range(10)),
    batch_size=2,
    shuffle=True,
    num_workers=4,
)
'''


def audit(target, *extra, env_file=None, python=sys.executable):
    args = [rldk_binary(), "env-audit", str(target), "--json", "--no-packages"]
    if python:
        args += ["--python", python]
    else:
        args += ["--no-probe"]
    if env_file:
        args += ["--env-file", str(env_file)]
    proc = subprocess.run(args + list(extra), capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def checks(report):
    return {c["id"]: c for c in report["checks"]}


@pytest.fixture
def reproducible_env(tmp_path):
    path = tmp_path / "job.env"
    path.write_text("# recorded job environment\nexport PYTHONHASHSEED=0\nCUBLAS_WORKSPACE_CONFIG=:4096:8\n")
    return path


def test_clean_repository_passes_with_a_real_probe(tmp_path, reproducible_env):
    repo = tmp_path / "clean"
    repo.mkdir()
    (repo / "train.py").write_text(CLEAN)
    code, report = audit(repo, env_file=reproducible_env)
    by_id = checks(report)
    assert code == 0 and report["status"] == "pass", json.dumps(report["checks"], indent=1)
    assert report["python"]["probed"]
    assert report["python"]["versions"]["torch"] == torch.__version__
    assert report["python"]["torch"]["deterministic_algorithms"] == "False"  # the default at import
    assert by_id["python.torch"]["status"] == "pass"
    for check in ("code.seeding", "code.entropy_seeds", "code.deterministic_algorithms", "code.cudnn",
                  "code.dataloader", "env.pythonhashseed"):
        assert by_id[check]["status"] == "pass", by_id[check]
    assert report["environment"]["PYTHONHASHSEED"] == "0"
    kinds = {e["kind"] for e in report["code"]["evidence"]}
    assert "cudnn_benchmark_true" not in kinds  # the comment and the string did not count
    assert {"python_seed", "numpy_seed", "torch_manual_seed", "deterministic_on", "cudnn_benchmark_false",
            "dataloader_shuffle_generator"} <= kinds


def test_case_study_trainer_fails_on_its_entropy_seeded_shuffle(examples, reproducible_env):
    trainer = examples / "trainers" / "torch_shuffle.py"
    code, report = audit(trainer, env_file=reproducible_env, python=None)
    check = checks(report)["code.entropy_seeds"]
    assert code == 1 and check["status"] == "fail"
    line = next(i for i, text in enumerate(trainer.read_text().splitlines(), 1) if "generator.seed()" in text)
    assert any(e.startswith("torch_shuffle.py:%d: generator.seed()" % line) for e in check["evidence"]), check
    assert checks(report)["code.seeding"]["status"] == "pass"  # model init is seeded: only the order is not


def test_benchmark_and_unseeded_torch_fail(tmp_path, reproducible_env):
    (tmp_path / "train.py").write_text(BENCHMARK)
    code, report = audit(tmp_path, env_file=reproducible_env, python=None)
    by_id = checks(report)
    assert code == 1
    assert by_id["code.cudnn"]["status"] == "fail" and by_id["code.cudnn"]["evidence"] == [
        "train.py:2: torch.backends.cudnn.benchmark = True"]
    assert by_id["code.seeding"]["status"] == "fail" and "torch" in by_id["code.seeding"]["summary"]
    assert by_id["code.deterministic_algorithms"]["status"] == "warn"


def test_multiline_dataloader_without_generator(tmp_path, reproducible_env):
    (tmp_path / "data.py").write_text(UNSEEDED_LOADER)
    code, report = audit(tmp_path, "--strict", env_file=reproducible_env, python=None)
    check = checks(report)["code.dataloader"]
    assert check["status"] == "warn"  # torch is seeded, so the order follows the global stream
    assert check["evidence"][0].startswith("data.py:4: loader = DataLoader(")
    assert code == 1  # --strict: a warning fails
    code, _ = audit(tmp_path, env_file=reproducible_env, python=None)
    assert code == 0


def test_missing_interpreter_and_python_without_torch(tmp_path):
    (tmp_path / "train.py").write_text("print('no randomness here')\n")
    code, report = audit(tmp_path, python=str(tmp_path / "no" / "python"))
    assert code == 1
    by_id = checks(report)
    assert by_id["python.interpreter"]["status"] == "fail"
    assert "does not exist" in by_id["python.interpreter"]["evidence"][0]
    assert by_id["python.torch"]["status"] == "skip"
    bare = shutil.which("python3", path="/usr/bin")
    if bare is None or subprocess.run([bare, "-c", "import torch"], capture_output=True).returncode == 0:
        pytest.skip("no interpreter without torch on this machine")
    code, report = audit(tmp_path, python=bare)
    assert report["python"]["probed"] and checks(report)["python.torch"]["status"] == "skip"
    assert "torch" not in report["python"]["versions"]


def test_package_lock_and_markdown(tmp_path):
    (tmp_path / "x.py").write_text("import random\nrandom.seed(1)\nprint(random.random())\n")
    out = tmp_path / "report"
    proc = subprocess.run([rldk_binary(), "env-audit", str(tmp_path), "--python", sys.executable, "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout.startswith("## Environment audit: ")
    assert "| `code.seeding` | pass |" in proc.stdout
    report = json.loads((out / "env_audit.json").read_text())
    assert (out / "env_audit.md").read_text() == proc.stdout
    packages = report["python"]["packages"]
    assert "torch==" + torch.__version__ in packages and len(report["python"]["packages_digest"]) == 16
    assert packages == sorted(packages, key=str.lower)


def test_report_matches_schema(tmp_path, reproducible_env):
    jsonschema = pytest.importorskip("jsonschema")
    (tmp_path / "train.py").write_text(BENCHMARK)
    _, report = audit(tmp_path, env_file=reproducible_env)
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))
    _, report = audit(tmp_path, python=None)
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))


def test_unreadable_target_is_an_input_error(tmp_path):
    proc = subprocess.run([rldk_binary(), "env-audit", str(tmp_path / "missing"), "--no-probe"], capture_output=True,
                          text=True)
    assert proc.returncode == 2 and "missing" in proc.stderr and "no such directory" in proc.stderr
