"""Turning what trainers log (floats, ints, bools, NumPy scalars, one-element torch tensors) into floats."""

import numbers
from typing import Optional


def as_float(value) -> Optional[float]:
    """The value as a float, or None when it is not a number (strings, None, lists). NaN and inf are numbers."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, numbers.Real):
        return float(value)
    item = getattr(value, "item", None)  # NumPy scalars and 0-d arrays, one-element torch tensors
    if callable(item):
        try:
            return float(item())
        except (TypeError, ValueError):
            return None
    return None
