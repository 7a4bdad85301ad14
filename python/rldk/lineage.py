"""Data lineage from a data script: datasets by content hash and the transforms between them (rldk.lineage/v1).

    import rldk.lineage as lineage
    lineage.record("data/raw", manifest="lineage.json")                       # a source dataset
    lineage.record("data/clean", manifest="lineage.json", inputs=["raw"],
                   command="python clean.py --dedup", script="clean.py")       # and what was made from it
    report = lineage.verify("lineage.json")      # report["ok"], report["changes"]: changed/added/removed files
    print(lineage.show("lineage.json", format="mermaid"))

The same manifest is written and read by ``rldk lineage record | verify | show``.
"""

from __future__ import annotations

import json
import os
from typing import Iterable, Optional, Union

from . import _core
from .provenance import PathLike, _paths


def _text(path: PathLike) -> str:
    return os.fsdecode(os.fspath(path))


def record(paths: Union[PathLike, Iterable[PathLike]], manifest: PathLike, name: Optional[str] = None,
           inputs: Iterable[PathLike] = (), command: Optional[str] = None, script: Optional[PathLike] = None,
           transform: Optional[str] = None, threads: int = 0) -> dict:
    """Hash the dataset's files and folders into ``manifest`` (created or updated). ``inputs`` are the datasets it
    was made from: names already in the manifest, or paths (hashed and added). Returns the manifest written."""
    return json.loads(_core.lineage_record(
        _text(manifest), _paths(paths), name or "", [_text(p) for p in inputs], command or "",
        _text(script) if script is not None else "", transform or "", threads))


def verify(manifest: PathLike, threads: int = 0) -> dict:
    """Re-hash every dataset of the manifest: {"ok": bool, "changes": [{dataset, path, change, ...}], ...}."""
    return json.loads(_core.lineage_verify(_text(manifest), threads))


def show(manifest: PathLike, format: str = "text") -> str:
    """The lineage graph as text, "mermaid" or "dot"."""
    return _core.lineage_graph(_text(manifest), format)


def html(manifest: PathLike) -> str:
    """A self-contained HTML page with the lineage graph drawn as SVG."""
    return _core.lineage_html(_text(manifest))


__all__ = ["html", "record", "show", "verify"]
