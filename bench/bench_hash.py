#!/usr/bin/env python3
"""Content hashing (rldk.provenance, rldk lineage, rldk.tracking) against what a user would pick in Python, on the
same files, in the same run: hashlib.file_digest with SHA-256 (what most data tools and the older tracker use) and
BLAKE2b, and xxHash's own Python binding (xxhash.xxh3_128, the same function rldk computes) fed in 4 MiB reads.

Files are generated once into a temporary folder and read once before timing, so every contender reads from the page
cache (from a cold disk all of them run at the disk's speed). Each figure is the best of --repeat runs.

  python3 bench/bench_hash.py [--files 8] [--mb 128] [--repeat 3]

Prints a Markdown table: GB/s of each, and rldk's ratio against each baseline on one core, plus rldk on all cores.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import time

import xxhash

from rldk import provenance

CHUNK = 4 << 20


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def hashlib_files(paths, name):
    for p in paths:
        with open(p, "rb") as f:
            hashlib.file_digest(f, name).hexdigest()


def xxhash_files(paths):
    for p in paths:
        h = xxhash.xxh3_128()
        with open(p, "rb") as f:
            while chunk := f.read(CHUNK):
                h.update(chunk)
        h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--mb", type=int, default=128, help="size of each file in MB")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="rldk-bench-hash-") as tmp:
        paths = []
        block = os.urandom(1 << 20)
        for i in range(args.files):
            p = os.path.join(tmp, f"shard-{i:05d}.bin")
            with open(p, "wb") as f:
                for _ in range(args.mb):
                    f.write(block)
            paths.append(p)
        total = args.files * args.mb * (1 << 20)
        for p in paths:  # into the page cache
            with open(p, "rb") as f:
                while f.read(CHUNK):
                    pass

        ours = provenance.hash_files(paths, threads=1)
        with open(paths[0], "rb") as f:  # same function as xxhash's: the comparison is like for like
            assert ours[0]["hash"] == "xxh3-128:" + xxhash.xxh3_128_hexdigest(f.read())
        rows = [
            ("rldk hash_files, 1 thread", best(lambda: provenance.hash_files(paths, threads=1), args.repeat)),
            ("rldk hash_files, all cores", best(lambda: provenance.hash_files(paths, threads=0), args.repeat)),
            ("xxhash.xxh3_128 (Python binding)", best(lambda: xxhash_files(paths), args.repeat)),
            ("hashlib.file_digest sha256", best(lambda: hashlib_files(paths, "sha256"), args.repeat)),
            ("hashlib.file_digest blake2b", best(lambda: hashlib_files(paths, "blake2b"), args.repeat)),
        ]
    one = rows[0][1]
    gb = total / 1e9
    print(f"{args.files} files x {args.mb} MB = {gb:.2f} GB, page cache, {os.cpu_count()} cores, best of {args.repeat}")
    print()
    print("| contender | time | GB/s | rldk (1 thread) is faster by |")
    print("|---|---|---|---|")
    for name, t in rows:
        ratio = "—" if name.startswith("rldk") else f"{t / one:.1f}x"
        print(f"| {name} | {t:.3f} s | {gb / t:.2f} | {ratio} |")


if __name__ == "__main__":
    main()
