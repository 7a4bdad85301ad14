"""Run: one training run read by the native engine, with its metric series as NumPy arrays."""

from __future__ import annotations

from typing import Iterator, List, Optional

from . import _core
from ._values import as_path, as_text
from .errors import UnrecognizedFormatError

Series = _core.Series
Segment = _core.Segment


class Run:
    """A run: series by canonical metric name (``run["policy/kl"]``), where they came from, and what was odd.

    Each series exposes read-only NumPy arrays ``steps``, ``values``, ``wall_times`` (NaN when the source had no
    time) and ``segments`` (restart segment of each point). Non-finite values are kept as observations.
    """

    def __init__(self, core: "_core.Run"):
        self._core = core

    # Identity and provenance
    run_id = property(lambda self: self._core.run_id)
    source = property(lambda self: self._core.source, doc="Path the run was read from ('-' for stdin).")
    format = property(lambda self: self._core.format, doc="Detected format family (jsonl, json, csv, tsv, console).")
    format_detail = property(lambda self: self._core.meta.get("format_detail", self._core.format))
    compression = property(lambda self: self._core.compression)
    meta = property(lambda self: dict(self._core.meta))
    raw_to_canonical = property(lambda self: dict(self._core.raw_to_canonical))
    segments = property(lambda self: list(self._core.segments))
    diagnostics = property(lambda self: self._core.diagnostics, doc="First examples of each problem kind (a metric "
                           "name or run id that was not valid UTF-8 is kind 'invalid_utf8': it is shown, and looked "
                           "up, with U+FFFD for the invalid bytes).")
    diagnostic_counts = property(lambda self: dict(self._core.diagnostic_counts))
    first_step = property(lambda self: self._core.first_step)
    last_step = property(lambda self: self._core.last_step)
    num_points = property(lambda self: self._core.num_points)

    @property
    def metrics(self) -> List[str]:
        """Canonical names of the metrics in this run, sorted."""
        return self._core.metrics

    def __getitem__(self, name: str) -> Series:
        return self._core.series(name)

    def __contains__(self, name: str) -> bool:
        return self._core.has(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)

    def get(self, name: str, default=None) -> Optional[Series]:
        return self._core.series(name) if self._core.has(name) else default

    def to_pandas(self, long: bool = False):
        """A pandas DataFrame of the run.

        Wide (default): one row per (segment, step), one column per metric; if a metric was logged twice at the
        same step of a segment, the last value is kept. ``long=True``: one row per observation with columns
        metric, step, segment, value, wall_time, nothing merged.
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - exercised only without pandas
            raise ImportError("Run.to_pandas() needs pandas: pip install pandas") from exc
        import numpy as np

        frames = []
        for name in self.metrics:
            s = self[name]
            frames.append(pd.DataFrame({"metric": name, "step": np.asarray(s.steps), "segment":
                                        np.asarray(s.segments), "value": np.asarray(s.values),
                                        "wall_time": np.asarray(s.wall_times)}))
        if not frames:
            long_frame = pd.DataFrame(columns=["metric", "step", "segment", "value", "wall_time"])
        else:
            long_frame = pd.concat(frames, ignore_index=True)
        if long:
            return long_frame
        wide = (long_frame.groupby(["segment", "step", "metric"], sort=True)["value"].last()
                .unstack("metric").reset_index())
        wide.columns.name = None
        return wide

    def __repr__(self) -> str:
        return "<rldk.Run %r from %s: %d metrics, steps %d..%d, %d segment(s)>" % (
            self.run_id, self.source, len(self), self.first_step, self.last_step, len(self.segments))


def read_runs(path, *, run_id: Optional[str] = None, canonical: bool = True, format: str = "auto") -> List[Run]:
    """Reads every run in ``path``: a log file (gzip/zstd too), a folder of runs, or ``"-"`` for stdin.

    ``canonical=False`` keeps metric names as logged. ``format`` forces a reader (jsonl, json, csv, tsv, console)
    instead of detecting it. Raises SourceNotFoundError (a FileNotFoundError) or UnrecognizedFormatError (a
    ValueError) when nothing can be read.
    """
    return [Run(core) for core in _core.read_runs(as_path(path), "" if run_id is None else as_text(run_id, "run_id"),
                                                  bool(canonical), as_text(format, "format"))]


def read_run(path, **kwargs) -> Run:
    """Reads exactly one run; see read_runs. Raises UnrecognizedFormatError if ``path`` holds several runs."""
    runs = read_runs(path, **kwargs)
    if len(runs) != 1:
        ids = ", ".join(r.run_id for r in runs[:5])
        raise UnrecognizedFormatError("%s holds %d runs (%s%s); use rldk.read_runs()" %
                                      (path, len(runs), ids, ", ..." if len(runs) > 5 else ""), str(path))
    return runs[0]
