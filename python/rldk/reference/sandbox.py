"""Runs the code-fix task's unit tests on what the policy wrote, in a sandboxed subprocess with time limits.

A policy's completion is untrusted code. It is never executed in the trainer's process: one child Python process per
batch (`python -I -S`: no site packages, no user paths, no PYTHON* variables) runs every candidate with
- resource limits: 512 MiB of address space, 20 s of CPU, no file it may create or grow, few file descriptors;
- one second of wall time per candidate (SIGALRM), and the whole batch killed after `timeout` seconds;
- builtins limited to max, min and abs (no open, no __import__);
- an empty temporary working folder and an environment holding only PATH.
What a process-level sandbox cannot do here (no namespaces or seccomp without privileges): block the network. The
candidates of this task are one-line return statements over a closed vocabulary, so that is no practical risk; a
user's own code task should run its tests in a container.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import List, Sequence, Tuple

RUNNER = r"""
import json, resource, signal, sys
resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
resource.setrlimit(resource.RLIMIT_CPU, (20, 20))
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))
jobs = json.loads(sys.stdin.read())
class Timeout(BaseException):  # not an Exception: the per-test `except Exception` must not swallow it
    pass
def on_alarm(signum, frame):
    raise Timeout()
signal.signal(signal.SIGALRM, on_alarm)
safe = {"max": max, "min": min, "abs": abs}
out = []
for job in jobs:
    passed = 0
    try:
        signal.alarm(1)
        scope = {"__builtins__": safe}
        exec(compile("def f(a, b):\n    " + job["body"] + "\n", "<candidate>", "exec"), scope)
        for a, b, want in job["tests"]:
            try:
                passed += scope["f"](a, b) == want
            except Exception:
                pass
    except BaseException:
        pass
    finally:
        signal.alarm(0)
    out.append(passed / len(job["tests"]))
sys.stdout.write(json.dumps(out))
"""


def pass_rates(candidates: Sequence[Tuple[str, List[tuple]]], timeout: float = 60.0) -> List[float]:
    """The share of its tests each (function body, [(a, b, expected)]) candidate passes; 0 for one that does not
    compile, raises or runs too long. Raises RuntimeError when the sandbox itself fails (so a broken sandbox is
    never mistaken for a policy that fails every test)."""
    if not candidates:
        return []
    jobs = [{"body": body.replace("\n", " "), "tests": [list(t) for t in tests]} for body, tests in candidates]
    with tempfile.TemporaryDirectory(prefix="rldk_sandbox_") as cwd:
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", RUNNER], input=json.dumps(jobs), text=True,
                              capture_output=True, timeout=timeout, cwd=cwd,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    if proc.returncode != 0:
        raise RuntimeError("the code-fix sandbox exited with %d: %s" % (proc.returncode, proc.stderr.strip()[-500:]))
    rates = json.loads(proc.stdout)
    if len(rates) != len(jobs):
        raise RuntimeError("the code-fix sandbox scored %d of %d candidates" % (len(rates), len(jobs)))
    return rates
