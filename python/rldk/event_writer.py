"""EventWriter: logs canonical long-form events (JSONL) that rldk reads and tails.

    with rldk.EventWriter("runs/exp1/metrics.jsonl", run_id="exp1") as w:
        w.log(step=10, name="policy/kl", value=0.012)
        w.log(step=10, metrics={"reward/mean": 0.5, "policy/entropy": 1.9})

Each call appends whole lines and flushes them, so a monitor tailing the file sees them at once; the native writer
is safe to share between threads.
"""

from __future__ import annotations

from typing import Mapping, Optional

from . import _core
from ._values import as_float, as_path, as_text, as_time
from .errors import InvalidArgumentError


def _to_float(name, value):
    number = as_float(value)
    if number is None:
        raise InvalidArgumentError("value of %r is %s, not a number" % (name, type(value).__name__))
    return number


class EventWriter:
    def __init__(self, path, run_id: Optional[str] = None, append: bool = True):
        self._native = _core.EventWriter(as_path(path), "" if run_id is None else as_text(run_id, "run_id"),
                                         bool(append))

    @property
    def path(self) -> str:
        return self._native.path

    @property
    def closed(self) -> bool:
        return self._native.closed

    def log(self, step: int, name: Optional[str] = None, value=None, *, metrics: Optional[Mapping] = None,
            time=None, tags: Optional[Mapping[str, str]] = None, meta: Optional[Mapping[str, str]] = None,
            run_id: Optional[str] = None) -> None:
        """Logs one metric (``name`` and ``value``) or several at one step (``metrics={name: value}``).

        ``time`` is epoch seconds or a datetime (default: now). NaN and infinities are written as NaN/Infinity.
        ``step`` is an int in the int64 range (NumPy/torch integers and whole floats too); anything else (2**63,
        NaN, True, "3") raises InvalidArgumentError.
        """
        step = _core.as_step(step)
        if metrics is not None:
            if not callable(getattr(metrics, "items", None)):
                raise InvalidArgumentError("metrics must be a mapping of name to value, got %s" %
                                           type(metrics).__name__)
            if name is not None or value is not None:
                raise InvalidArgumentError("pass either name= and value= or metrics=, not both")
            if time is None and not tags and not meta and run_id is None:
                self._native.log_metrics(step, [(str(k), _to_float(k, v)) for k, v in metrics.items()])
                return
            for k, v in metrics.items():
                self.log(step, str(k), v, time=time, tags=tags, meta=meta, run_id=run_id)
            return
        if name is None or value is None:
            raise InvalidArgumentError("log() needs name= and value=, or metrics=")
        self._native.log(step, str(name), _to_float(name, value), as_time(time),
                         {str(k): str(v) for k, v in (tags or {}).items()},
                         {str(k): str(v) for k, v in (meta or {}).items()},
                         "" if run_id is None else as_text(run_id, "run_id"))

    def log_dict(self, step: int, metrics: Mapping, **kwargs) -> None:
        """Same as ``log(step, metrics=metrics)``."""
        self.log(step, metrics=metrics, **kwargs)

    def close(self) -> None:
        self._native.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return "<rldk.EventWriter %s%s>" % (self.path, " (closed)" if self.closed else "")


__all__ = ["EventWriter"]
