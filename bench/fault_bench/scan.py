"""Runs `rldk scan --json` over a corpus in batches and collects the findings with their run ids."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time

from .evaluate import findings_from_scan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Runs per scan invocation: few enough to keep command lines short, many enough that process start-up is noise.
BATCH = 40


def find_rldk(explicit: str | None = None) -> str:
    """--rldk, then $RLDK, then `rldk` on PATH, then the usual build directories."""
    candidates = [explicit, os.environ.get("RLDK"), shutil.which("rldk"),
                  os.path.join(ROOT, "build", "release", "rldk"), os.path.join(ROOT, "build", "faultbench", "rldk")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError("no rldk binary: pass --rldk PATH, set $RLDK, or build one "
                            "(cmake --build build/release)")


def check_scan_available(rldk: str) -> None:
    probe = subprocess.run([rldk, "scan", "--help"], capture_output=True, text=True)
    # A binary without the command answers with its top-level help (and exit 0), so look at the usage line.
    if probe.returncode != 0 or not re.search(r"Usage:.*\bscan\b", probe.stdout):
        raise RuntimeError("%s has no working `scan` command (exit %d): %s"
                           % (rldk, probe.returncode, (probe.stderr or probe.stdout).strip()[:300]))


def scan_corpus(rldk: str, directory: str, run_ids: list, extra_args=()) -> tuple:
    """Returns (findings, documents, seconds). Exit code 1 (findings at or above --fail-on) is expected; 2 is not."""
    findings, docs, seconds = [], [], 0.0
    for start in range(0, len(run_ids), BATCH):
        batch = run_ids[start:start + BATCH]
        paths = [os.path.join(directory, r + ".jsonl") for r in batch]
        cmd = [rldk, "scan", "--json", "--fail-on", "never", *extra_args, *paths]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        seconds += time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            raise RuntimeError("rldk scan failed (exit %d) on %s ...: %s"
                               % (proc.returncode, paths[0], proc.stderr.strip()[:2000]))
        try:
            doc = json.loads(proc.stdout)
        except json.JSONDecodeError as e:
            raise RuntimeError("rldk scan --json printed invalid JSON (%s); first bytes: %r" % (e, proc.stdout[:200]))
        by_source = {p: r for p, r in zip(paths, batch)}
        if len(doc.get("runs", [])) == len(batch):
            # Sources may be printed normalised; the documented order of runs is the order of the arguments.
            for entry, r in zip(doc["runs"], batch):
                by_source.setdefault(entry.get("source"), r)
                entry["run_id"] = r
        findings.extend(findings_from_scan(doc, by_source))
        docs.append(doc)
    return findings, docs, seconds
