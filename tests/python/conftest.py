import os
import pathlib
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def rldk_binary():
    """The rldk command under test: $RLDK, else the one installed beside this Python (the package the tests
    test), else PATH, else the release build (for running a test file by hand before installing)."""
    for candidate in (os.environ.get("RLDK"), os.path.join(os.path.dirname(sys.executable), "rldk"),
                      shutil.which("rldk"), str(ROOT / "build" / "release" / "rldk")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("no rldk binary: install the package (./scripts/setup.sh) or set $RLDK to a built binary")


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
