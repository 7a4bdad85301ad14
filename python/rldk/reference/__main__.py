"""python -m rldk.reference run [--quick | --full] [--out DIR] [--model PATH]  (also `rldk reference run`)."""
from __future__ import annotations

import argparse
import os
import shutil
import sys


def find_rldk() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "rldk")
    found = os.environ.get("RLDK_BINARY") or (here if os.path.exists(here) else shutil.which("rldk"))
    if not found:
        raise SystemExit("rldk reference: the rldk command is not on PATH (install the package, or set RLDK_BINARY)")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="rldk reference",
        description="The reference suite: real TRL trainers (GRPO, DPO) on a tiny model with known bugs, each caught "
                    "by the rldk capability named for it; healthy runs must stay quiet.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="train the suite's runs, apply every check, print the table of catches")
    mode = run.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="the smoke test: 40 steps per run, about two minutes on "
                                                           "two CPU cores (the default)")
    mode.add_argument("--full", action="store_true", help="every task and bug, 150 steps per run")
    run.add_argument("--out", default="runs/reference", help="output folder, replaced (default runs/reference)")
    run.add_argument("--model", default=None, help="a local Hugging Face causal LM folder to train instead of the "
                                                  "tiny built-in policy (nothing is downloaded)")
    run.add_argument("--jobs", type=int, default=2, help="trainers running at once (default 2)")
    run.add_argument("--only", nargs="+", default=None, metavar="RUN",
                     help="only these runs (e.g. summarize-lr100), with the healthy runs they are compared with")
    run.add_argument("--docs", default=None, help="also write the table into this Markdown file, between its "
                                                 "<!-- reference:begin --> and <!-- reference:end --> lines")
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        import trl  # noqa: F401
    except ImportError as e:
        raise SystemExit("rldk reference: the suite trains with TRL; install torch, transformers and trl (%s)" % e)
    from .suite import run_suite

    return run_suite(args.out, find_rldk(), sys.executable, full=args.full, model_path=args.model, jobs=args.jobs,
                     docs=args.docs, only=args.only)


if __name__ == "__main__":
    sys.exit(main())
