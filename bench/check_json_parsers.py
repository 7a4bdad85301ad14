#!/usr/bin/env python3
"""Checks that rldk's JSON-lines scanner and simdjson read the benchmark files identically (a ctest).

Generates a narrow (long-form) and a wide file with bench/gen_logs.py, as the read benchmarks do but small, and runs
bench_json_parsers on them: every line simdjson accepts must give the same fields through both parsers.

Usage: check_json_parsers.py BENCH_JSON_PARSERS [--events N] [--steps N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_logs  # noqa: E402  (sibling module; bench/ is not a package)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary")
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument("--steps", type=int, default=4_000)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        narrow = gen_logs.narrow_path(tmp, args.events)
        wide = gen_logs.wide_path(tmp, args.steps, 70)
        gen_logs.gen_narrow(narrow, args.events, gen_logs.DEFAULT_SEED)
        gen_logs.gen_wide(wide, args.steps, 70, gen_logs.DEFAULT_SEED)
        proc = subprocess.run([args.binary, "--repeat", "1", narrow, wide], capture_output=True, text=True)
        sys.stderr.write(proc.stderr)
        if proc.returncode != 0:
            return 1
        for line in proc.stdout.splitlines():
            r = json.loads(line)
            print(f"{os.path.basename(r['file'])}: {r['compared']} of {r['lines']} lines compared, agree={r['agree']}")
            # The narrow file holds a few NaN lines (the scanner's alone); everything else must have been compared.
            if not r["agree"] or r["compared"] < 0.99 * r["lines"]:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
