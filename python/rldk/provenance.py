"""Content hashes for provenance: XXH3-128 over every byte (never a sample), native and parallel.

    from rldk.provenance import Hasher, hash_bytes, hash_files, hash_tree
    hash_files(["data/train.jsonl"])          # [{"path": ..., "bytes": ..., "hash": "xxh3-128:..."}]
    hash_tree(["data/"], root=".")            # every file under data/, plus a content root
    h = Hasher(); h.update(array); h.digest() # streaming, for in-memory objects (NumPy, Arrow buffers, tensors)

Hashes print as "xxh3-128:<32 hex digits>", the canonical form of xxHash's own tools (``xxhash.xxh3_128_hexdigest``).
"""

from __future__ import annotations

import os
from typing import Iterable, List, Optional, Union

from . import _core

PathLike = Union[str, "os.PathLike[str]"]

Hasher = _core.Hasher


def hash_bytes(data) -> str:
    """XXH3-128 of a C-contiguous buffer (bytes, bytearray, memoryview, NumPy array)."""
    return _core.hash_bytes(data)


def _paths(paths: Union[PathLike, Iterable[PathLike]]) -> List[str]:
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return [os.fsdecode(os.fspath(p)) for p in paths]


def hash_files(paths: Union[PathLike, Iterable[PathLike]], threads: int = 0) -> List[dict]:
    """Every byte of each file, hashed in parallel (threads=0: one per core); [{path, bytes, hash}] in order."""
    return _core.hash_files(_paths(paths), threads)


def hash_tree(paths: Union[PathLike, Iterable[PathLike]], root: Optional[PathLike] = None, threads: int = 0) -> dict:
    """The files under ``paths`` (folders walked), sorted by path, relative to ``root`` when given, with the content
    root: {"files": [{path, bytes, hash}], "root": "xxh3-128:...", "bytes": total}."""
    return _core.hash_tree(_paths(paths), os.fsdecode(os.fspath(root)) if root is not None else "", threads)


__all__ = ["Hasher", "hash_bytes", "hash_files", "hash_tree"]
