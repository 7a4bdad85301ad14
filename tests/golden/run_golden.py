#!/usr/bin/env python3
"""Golden CLI tests: run the real `rldk` binary on each case and diff its output with the expected files.

A case is a folder under tests/golden/cases/ holding:
  cmd              the arguments after `rldk`, one line, split like a shell would (shlex); run in the case folder
  stdin            optional: fed to the command's standard input
  expected_stdout  what stdout must be, byte for byte
  expected_stderr  optional: what stderr must be (when absent, stderr is not compared)
  expected_rc      optional: the exit code (default 0)
plus the input files the command reads. Outputs that a command writes to files can be printed by the command
itself (e.g. `ingest ... -o -`).

  run_golden.py --rldk build/release/rldk            run all cases
  run_golden.py --rldk build/release/rldk --bless    rewrite expected_* from the current output (then review the diff)
  run_golden.py --rldk ... -k info_                  only cases whose name contains "info_"
"""
import argparse
import difflib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")


def read(path, default=None):
    if not os.path.exists(path):
        return default
    with open(path, "rb") as f:
        return f.read()


def run_case(rldk, case_dir, bless):
    args = shlex.split(read(os.path.join(case_dir, "cmd")).decode().strip())
    stdin = read(os.path.join(case_dir, "stdin"), b"")
    env = dict(os.environ, LC_ALL="C")
    # Run in a copy, so files a command writes (monitor reports) never land in the source tree.
    with tempfile.TemporaryDirectory() as scratch:
        work = os.path.join(scratch, os.path.basename(case_dir))
        shutil.copytree(case_dir, work, symlinks=False)
        proc = subprocess.run([rldk] + args, cwd=work, input=stdin, capture_output=True, env=env, timeout=120)
    expected = {
        "expected_stdout": read(os.path.join(case_dir, "expected_stdout"), b""),
        "expected_rc": int(read(os.path.join(case_dir, "expected_rc"), b"0").decode().strip() or 0),
        "expected_stderr": read(os.path.join(case_dir, "expected_stderr")),
    }
    if bless:
        with open(os.path.join(case_dir, "expected_stdout"), "wb") as f:
            f.write(proc.stdout)
        if proc.returncode != 0 or os.path.exists(os.path.join(case_dir, "expected_rc")):
            with open(os.path.join(case_dir, "expected_rc"), "w") as f:
                f.write("%d\n" % proc.returncode)
        if expected["expected_stderr"] is not None or proc.stderr:
            with open(os.path.join(case_dir, "expected_stderr"), "wb") as f:
                f.write(proc.stderr)
        return []
    problems = []
    if proc.returncode != expected["expected_rc"]:
        problems.append("exit code %d, expected %d" % (proc.returncode, expected["expected_rc"]))
    for stream, actual in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        want = expected["expected_" + stream]
        if want is None or actual == want:
            continue
        diff = difflib.unified_diff(want.decode(errors="replace").splitlines(True),
                                    actual.decode(errors="replace").splitlines(True),
                                    "expected_" + stream, "actual " + stream)
        problems.append("".join(diff))
    if proc.returncode < 0 or b"runtime error:" in proc.stderr or b"AddressSanitizer" in proc.stderr:
        problems.append("crashed or sanitizer report:\n" + proc.stderr.decode(errors="replace")[-3000:])
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rldk", required=True, help="path to the rldk binary under test")
    parser.add_argument("--bless", action="store_true", help="rewrite the expected files")
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    args = parser.parse_args()
    rldk = os.path.abspath(args.rldk)
    names = sorted(n for n in os.listdir(CASES) if args.k in n and os.path.isdir(os.path.join(CASES, n)))
    failed = 0
    for name in names:
        problems = run_case(rldk, os.path.join(CASES, name), args.bless)
        if problems:
            failed += 1
            print("FAIL %s\n%s" % (name, "\n".join(problems)))
        else:
            print("ok   %s" % name)
    print("%d cases, %d failed%s" % (len(names), failed, " (blessed)" if args.bless else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
