import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def examples():
    return ROOT / "examples"


@pytest.fixture
def golden_cases():
    return ROOT / "tests" / "golden" / "cases"


def write(path, text, mode="w"):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode) as f:
        f.write(text)
    return path
