"""rldk.seed: set_global_seed seeds every RNG and sets torch's determinism flags; seed_context restores states;
rng_fingerprint tells equal streams from different ones. `rldk seed --env` prints the shell side."""
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import torch

import rldk
from rldk import seed as rseed
from conftest import rldk_binary


@pytest.fixture(autouse=True)
def quiet_and_restored(monkeypatch):
    monkeypatch.setenv("RLDK_SILENCE_SEED_WARNINGS", "1")
    deterministic = torch.are_deterministic_algorithms_enabled()
    yield
    torch.use_deterministic_algorithms(deterministic)


def draws():
    return (random.random(), float(np.random.rand()), float(torch.rand(1)))


def test_same_seed_same_draws_different_seed_different_draws():
    rldk.set_global_seed(123)
    first = draws()
    rldk.set_global_seed(123)
    assert draws() == first
    rldk.set_global_seed(124)
    assert draws() != first


def test_deterministic_flags_and_report(monkeypatch):
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    report = rseed.set_global_seed(5, deterministic=True)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    assert report["seed"] == 5 and {"random", "numpy", "torch"} <= set(report["seeded"])
    torch.use_deterministic_algorithms(False)
    report = rseed.set_global_seed(5, deterministic=False)
    assert not torch.are_deterministic_algorithms_enabled()  # seeding only: flags left as they were


def test_negative_seed_wraps_and_env_seed(monkeypatch):
    assert rseed.set_global_seed(-1)["seed"] == 2 ** 32 - 1
    monkeypatch.setenv("RLDK_SEED", "77")
    assert rseed.set_global_seed()["seed"] == 77
    monkeypatch.setenv("RLDK_SEED", "abc")
    with pytest.raises(ValueError, match="RLDK_SEED"):
        rseed.set_global_seed()
    with pytest.raises(TypeError):
        rseed.set_global_seed(1.5)


def test_pythonhashseed_note(monkeypatch):
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    assert any("PYTHONHASHSEED" in n for n in rseed.set_global_seed(1)["notes"])
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    assert not any("PYTHONHASHSEED" in n for n in rseed.set_global_seed(1)["notes"])


def test_seed_context_restores_every_state():
    rldk.set_global_seed(9)
    before = rldk.rng_fingerprint()
    with rldk.seed_context(1):
        inside = draws()
    assert rldk.rng_fingerprint() == before
    expected_after = draws()
    rldk.set_global_seed(9)
    assert draws() == expected_after  # the block drew nothing, as far as later code can tell
    with rldk.seed_context(1):
        assert draws() == inside


def test_seed_context_restores_on_exception():
    rldk.set_global_seed(3)
    before = rldk.rng_fingerprint()
    with pytest.raises(RuntimeError):
        with rldk.seed_context(4):
            torch.rand(10)
            raise RuntimeError("boom")
    assert rldk.rng_fingerprint() == before


def test_fingerprint_tracks_each_library():
    rldk.set_global_seed(11)
    base = rldk.rng_fingerprint()
    assert rldk.rng_fingerprint() == base  # reading does not advance
    assert len(base) == 16 and int(base, 16) >= 0
    for draw in (random.random, np.random.rand, lambda: torch.rand(1)):
        rldk.set_global_seed(11)
        draw()
        assert rldk.rng_fingerprint() != base


def test_fingerprint_equal_across_processes():
    code = ("import os; os.environ['RLDK_SILENCE_SEED_WARNINGS']='1'; import rldk, torch; rldk.set_global_seed(21); "
            "torch.rand(4); print(rldk.rng_fingerprint())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)}
    assert len(outs) == 1


def test_seed_env_cli_exports_apply_in_a_shell():
    exports = subprocess.run([rldk_binary(), "seed", "--env", "--seed", "42"], capture_output=True, text=True,
                             check=True).stdout
    assert "export PYTHONHASHSEED='42'" in exports
    shell = subprocess.run(["/bin/sh", "-c", exports + '\necho "$PYTHONHASHSEED $CUBLAS_WORKSPACE_CONFIG $RLDK_SEED"'],
                           capture_output=True, text=True, check=True, env={"PATH": os.environ["PATH"]})
    assert shell.stdout.strip() == "42 :4096:8 42"
    bad = subprocess.run([rldk_binary(), "seed"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--env" in bad.stderr
