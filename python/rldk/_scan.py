"""rldk.scan(): what went wrong in a finished (or running) training log, as ``rldk scan --json`` reports it."""

from __future__ import annotations

import json
import os
from typing import Iterable, List, Union

from . import _core
from ._values import as_path, as_text
from .errors import InvalidArgumentError

_SEVERITIES = ("info", "warning", "critical")


class ScanReport(dict):
    """The rldk.scan/v1 document (docs/schemas/rldk.scan.v1.schema.json): a dict, with its top-level keys readable as
    attributes. ``diagnostics`` holds, per run, what its reader had to say about the file (bad lines, with file and
    line), as ``rldk scan`` prints them on stderr."""

    def __init__(self, document: dict, diagnostics: List[list]):
        super().__init__(document)
        self.diagnostics = diagnostics

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def findings(self, at_least: str = "info") -> list:
        """Every run's findings at or above a severity ("info", "warning", "critical"), each with its run_id."""
        if at_least not in _SEVERITIES:
            raise InvalidArgumentError("at_least must be one of %s, got %r" % (", ".join(_SEVERITIES), at_least))
        floor = _SEVERITIES.index(at_least)
        return [dict(f, run_id=run["run_id"]) for run in self["runs"] for f in run["findings"]
                if _SEVERITIES.index(f["severity"]) >= floor]


def _names(value, arg: str) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [n for n in value.split(",") if n]
    if isinstance(value, Iterable):
        return [as_text(n, arg) for n in value]
    raise InvalidArgumentError("%s must be a str or a list of str, got %s" % (arg, type(value).__name__))


def scan(*runs: Union[str, "os.PathLike"], only=None, skip=None, threads: int = 0,
         plan_steps: int = 2048) -> ScanReport:
    """Scans run logs (files, gzip/zstd files, folders of runs) with the detector catalog, as ``rldk scan`` does:
    findings (episodes with onset, end, peak, evidence, explanation and fixes) and per-area health per run.

    only / skip: detector ids, fault types or areas (a list, or one comma-separated str). threads: files of a folder
    scanned at once (0: one per core; the report is the same for any number). plan_steps: steps read before the
    detectors are planned; after that the scan keeps no more of the run (docs/detectors.md)."""
    if not runs:
        raise InvalidArgumentError("scan needs at least one run log")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise InvalidArgumentError("threads must be an int >= 0, got %r" % (threads,))
    if isinstance(plan_steps, bool) or not isinstance(plan_steps, int) or plan_steps < 1:
        raise InvalidArgumentError("plan_steps must be an int >= 1, got %r" % (plan_steps,))
    sources = [as_path(r, "runs") for r in runs]
    text, diagnostics = _core.scan_json(sources, _names(only, "only"), _names(skip, "skip"), threads, plan_steps)
    return ScanReport(json.loads(text), diagnostics)
