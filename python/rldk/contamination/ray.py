"""The contamination check on a Ray cluster: the training files are split into contiguous shards, each shard is
scanned by a Ray task running the same native kernels as the local check (``rldk._core.contamination_shard``), and
the driver merges the shards' partial results with the same rules (sums, first places by file/row order), so the
report is byte-identical to ``rldk contamination`` on one machine.

    from rldk.contamination import ray as cray
    report = cray.check(train=["s3-mounted/pool/"], eval=["evals/math500.jsonl"], address="auto")

    python -m rldk.contamination.ray --address auto --train pool/ --eval evals/math500.jsonl --out reports/
    rldk contamination --ray auto --train pool/ --eval evals/math500.jsonl      # the same, from the CLI

Every node reads the files itself: paths must resolve to the same files on every node (a shared filesystem or the
same layout). Parallelism is per file, so split a large corpus into many files (shards of the dataset). Each task
uses ``threads`` cores (default 1 per task; Ray places one task per CPU it has).
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional, Sequence

import ray

from .. import _core
from . import Report, _paths, options


def _shards(files: List[str], count: int) -> List[List[str]]:
    count = max(1, min(count, len(files)))
    size, extra = divmod(len(files), count)
    out, at = [], 0
    for i in range(count):
        n = size + (1 if i < extra else 0)
        out.append(files[at:at + n])
        at += n
    return out


@ray.remote
def _scan(files: List[str], first_file: int, eval_paths: List[str], opts: dict) -> bytes:
    from rldk import _core as core  # imported on the worker
    return core.contamination_shard(files, first_file, eval_paths, opts)


def check(train, eval, address: Optional[str] = None, shards: Optional[int] = None, threads: int = 1,
          **kwargs) -> Report:
    """Checks eval sets against training data sharded over Ray tasks. ``address``: a cluster ("auto", "ray://...")
    or None for the cluster this process is already connected to (or a new local one)."""
    if not ray.is_initialized():
        ray.init(address=address if address not in (None, "local") else None, ignore_reinit_error=True)
    train_paths, eval_paths = _paths(train), _paths(eval)
    opts = options(threads=threads, **kwargs)
    files = _core.contamination_training_files(train_paths)
    count = shards or max(1, int(ray.cluster_resources().get("CPU", 1)))
    pending, first = [], 0
    for shard in _shards(files, count):
        pending.append(_scan.remote(shard, first, eval_paths, opts))
        first += len(shard)
    partials = ray.get(pending)
    return Report(*_core.contamination_merge(train_paths, eval_paths, partials, opts))


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rldk.contamination.ray",
                                description="rldk contamination on a Ray cluster (same options as the CLI)")
    p.add_argument("--address", default=None, help="Ray cluster address ('auto', 'ray://host:10001'; 'local': new)")
    p.add_argument("--shards", type=int, default=None, help="Tasks (default: the cluster's CPUs)")
    p.add_argument("--train", nargs="+", required=True)
    p.add_argument("--eval", nargs="+", required=True)
    p.add_argument("--method", action="append", default=None)
    p.add_argument("--ngram", type=int, default=None)
    p.add_argument("--boilerplate", type=int, default=10)
    p.add_argument("--full-coverage", type=float, default=0.8)
    p.add_argument("--threshold", type=float, default=0.8)
    p.add_argument("--num-perm", type=int, default=128)
    p.add_argument("--shingle", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--minhash-scheme", choices=["legacy", "affine32"], default="legacy")
    p.add_argument("--text-col", action="append", default=[])
    p.add_argument("--keep-case", action="store_true")
    p.add_argument("--punctuation", choices=["strip", "keep"], default="strip")
    p.add_argument("--digits", choices=["keep", "mask"], default="keep")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", default=None)
    p.add_argument("--gate", action="store_true")
    a = p.parse_args(argv)
    methods = ",".join(a.method) if a.method else "all"
    try:
        report = check(a.train, a.eval, address=a.address, shards=a.shards, threads=a.threads, methods=methods,
                       ngram=a.ngram, boilerplate=a.boilerplate, full_coverage=a.full_coverage,
                       threshold=a.threshold, num_perm=a.num_perm, shingle=a.shingle, seed=a.seed,
                       scheme=a.minhash_scheme,
                       lowercase=not a.keep_case, punctuation=a.punctuation, digits=a.digits, text_cols=a.text_col)
    except Exception as e:  # noqa: BLE001 - one line on stderr, exit 2, as the CLI
        print(f"rldk contamination --ray: {e}", file=sys.stderr)
        return 2
    if a.out:
        report.write(a.out)
    sys.stdout.write(report.json_text + "\n" if a.json else report.markdown)
    if a.gate and report.contaminated:
        print("rldk contamination --ray: gate: eval items were found in the training data", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
