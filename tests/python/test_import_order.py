"""rldk's extension links Arrow/Parquet from the pyarrow wheel, whose libparquet carries its own OpenSSL. Loaded
ahead of the system's OpenSSL it captured its calls, and `import rldk` followed by `import hashlib` crashed the
interpreter (cmake/pyarrow.cmake links the system OpenSSL first). Run in fresh interpreters: the order of first
imports is what matters."""
import subprocess
import sys

import pytest


@pytest.mark.parametrize("code", [
    "import rldk; import hashlib, ssl; hashlib.sha256(b'x').hexdigest(); ssl.create_default_context()",
    "import rldk._core, hashlib; import pyarrow.parquet",
    "import pyarrow.parquet; import rldk; import hashlib; hashlib.md5(b'x').hexdigest()",
])
def test_rldk_and_openssl_users_load_in_any_order(code):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
