"""Deterministic conversion of Python values to JSON for the run manifest.

Hyperparameters and metadata arrive as whatever the training script holds: NumPy scalars, Paths, tuples, enums,
dataclasses, torch dtypes, NaN. The manifest must be strict JSON (other tools read it) and must not change between
two runs that hold equal values, so every conversion here is a pure function of the value:

- None, bool, int, str stay; finite floats stay; NaN, +inf, -inf become the strings "NaN", "Infinity", "-Infinity"
  (lossless, strict JSON, and a NaN learning rate still differs from an unset one in ``rldk track diff``);
- NumPy scalars become the Python scalar; arrays and torch tensors become nested lists;
- tuples and lists become lists; sets and frozensets become lists sorted by their canonical JSON text;
- dict keys become strings (str(key)); Paths and other os.PathLike become their string;
- enums become their value, dataclasses a dict of their fields, objects with ``to_dict()`` (TrainingArguments,
  transformers configs) that dict; bytes become "hex:<hex digits>";
- anything else becomes str(value) with memory addresses (" at 0x7f...") removed, so two runs print alike.
"""
import dataclasses
import enum
import json
import math
import os
import re

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_MAX_DEPTH = 64  # a self-referencing structure ends as text instead of a RecursionError


def _float(value):
    value = float(value)
    if math.isfinite(value):
        return value
    return _NON_FINITE[repr(value)]


def json_safe(value, _depth=0):
    """A JSON-serializable copy of `value` (see the module docstring for each conversion)."""
    if _depth > _MAX_DEPTH:
        return _text(value)
    depth = _depth + 1
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)  # int subclasses too (IntEnum, IntFlag): their number
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: json_safe(v, depth) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v, depth) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [json_safe(v, depth) for v in value]
        return sorted(items, key=canonical_json)
    if isinstance(value, enum.Enum):
        return json_safe(value.value, depth)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "hex:" + bytes(value).hex()
    if isinstance(value, os.PathLike):
        return os.fspath(value) if isinstance(os.fspath(value), str) else json_safe(os.fspath(value), depth)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_safe({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, depth)
    module = type(value).__module__ or ""
    if module == "numpy" or module.startswith("numpy."):
        if hasattr(value, "tolist"):  # numpy scalars and arrays; bool_/integer/floating come back as Python values
            return json_safe(value.tolist(), depth)
    if module.startswith("torch"):
        if hasattr(value, "detach") and hasattr(value, "tolist"):
            return json_safe(value.detach().cpu().tolist(), depth)
        return _text(value)  # torch.dtype, torch.device: "torch.float32", "cpu"
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, type):
        try:
            converted = to_dict()
        except Exception:  # noqa: BLE001 - a to_dict that needs arguments or fails: fall back to text
            converted = None
        if isinstance(converted, dict):
            return json_safe(converted, depth)
    return _text(value)


def _text(value):
    return _ADDRESS.sub("", str(value))


def canonical_json(value):
    """The canonical JSON text of an already JSON-safe value: sorted keys, no spaces, UTF-8 kept (not escaped).

    This text is what rldk hashes for Python objects, so it is fixed: changing it changes every such hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def dumps_manifest(value):
    """The manifest file's text: sorted keys, indent 2, strict JSON, a final newline."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
