"""Checking what callers pass in: numbers trainers log (floats, ints, bools, NumPy scalars, one-element torch
tensors) turned into floats, and the text, path and time arguments of the API. A wrong argument raises
InvalidArgumentError naming it, never a TypeError from inside the native binding."""

import datetime as _dt
import math
import numbers
import os
from typing import Optional

from .errors import InvalidArgumentError


def _overflow_to_inf(number) -> float:
    # float(10**400) raises OverflowError; as a logged value it is simply beyond every float.
    return math.inf if number > 0 else -math.inf


def as_float(value) -> Optional[float]:
    """The value as a float, or None when it is not a number (strings, None, lists). NaN and inf are numbers."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, numbers.Real):
        try:
            return float(value)
        except OverflowError:
            return _overflow_to_inf(value)
    item = getattr(value, "item", None)  # NumPy scalars and 0-d arrays, one-element torch tensors
    if callable(item):
        try:
            number = item()
        except (TypeError, ValueError, RuntimeError):  # torch raises RuntimeError for a tensor of several elements
            return None
        try:
            return float(number)
        except (TypeError, ValueError):
            return None
        except OverflowError:
            return _overflow_to_inf(number)
    return None


def _shown(value) -> str:
    try:
        text = repr(value)
    except Exception:  # a __repr__ that raises must not hide the error being reported
        text = "<unrepresentable>"
    return text if len(text) <= 80 else text[:80] + "..."


def as_text(value, arg: str) -> str:
    """A str argument (run id, metric name, format name)."""
    if not isinstance(value, str):
        raise InvalidArgumentError("%s must be a str, got %s (%s)" % (arg, _shown(value), type(value).__name__))
    return value


def as_path(value, arg: str = "path") -> str:
    """A file path: str, bytes or os.PathLike. Bytes go through os.fsdecode, so a file name that is not UTF-8 still
    opens (the binding turns the escaped bytes back into the original ones)."""
    try:
        path = os.fspath(value)
    except TypeError:
        raise InvalidArgumentError("%s must be a path (str, bytes or os.PathLike), got %s (%s)" %
                                   (arg, _shown(value), type(value).__name__)) from None
    return os.fsdecode(path) if isinstance(path, bytes) else path


def as_time(value, arg: str = "time") -> Optional[float]:
    """A wall time: None (unknown), epoch seconds, or a datetime (naive means UTC)."""
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return value.timestamp()
    if not isinstance(value, bool):
        number = as_float(value)
        if number is not None:
            return number
    raise InvalidArgumentError("%s must be epoch seconds or a datetime, got %s (%s)" %
                               (arg, _shown(value), type(value).__name__))
