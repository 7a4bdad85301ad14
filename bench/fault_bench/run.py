#!/usr/bin/env python3
"""Detector-quality benchmark for `rldk scan`: generate a labeled corpus, scan it, print and write the table.

    python3 bench/fault_bench/run.py                 # full corpus (~2,530 runs, ~1.38M logged steps; about 50 s)
    python3 bench/fault_bench/run.py --quick         # 3 long + 2 per regime per fault type, ~28k clean steps
    python3 bench/fault_bench/run.py --generate-only # just write the corpus (to tune detectors against)
    python3 bench/fault_bench/run.py --scan-json scan.json   # evaluate a saved `rldk scan --json` document

The corpus goes to bench/data/fault_bench/<full|quick>-<seed>/ (reused when its manifest matches; --regenerate
forces a rebuild); the table to that directory's result.md and result.json. Exit code 0 when every goal is met, 1
when the benchmark ran but some goal is missed, 2 on a usage or scan error. Method: docs/detector-benchmark.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fault_bench import corpus as corpus_mod  # noqa: E402
from fault_bench.evaluate import MatchOptions, evaluate, evaluate_by_regime, findings_from_scan  # noqa: E402
from fault_bench.faults import FAULT_TYPES  # noqa: E402
from fault_bench.report import GOALS, to_json, to_markdown  # noqa: E402
from fault_bench.scan import ROOT, check_scan_available, find_rldk, scan_corpus  # noqa: E402

DEFAULT_SEED = 20261122


def _corpus(args):
    size = corpus_mod.QUICK if args.quick else corpus_mod.FULL
    name = "%s-%d" % ("quick" if args.quick else "full", args.seed)
    directory = args.corpus_dir or os.path.join(ROOT, "bench", "data", "fault_bench", name)
    manifest_path = os.path.join(directory, "manifest.json")
    fresh = args.regenerate or not os.path.exists(manifest_path)
    if not fresh and not args.corpus_dir:
        # The default directory is named after size and seed; rebuild if it holds something else anyway.
        with open(manifest_path) as f:
            m = json.load(f)
        fresh = not (m.get("generator") == corpus_mod.GENERATOR_VERSION and m.get("seed") == args.seed
                     and m.get("size") == asdict(size))
    if fresh:
        t0 = time.perf_counter()
        m = corpus_mod.write_corpus(directory, size, args.seed)
        print("generated %d runs (%d logged steps, %d optimizer steps) in %.1f s -> %s" % (
            len(m["runs"]), sum(r["points"] for r in m["runs"]), sum(r["steps"] for r in m["runs"]),
            time.perf_counter() - t0, directory),
            file=sys.stderr)
    manifest, labels = corpus_mod.read_corpus(directory)
    return name, directory, manifest, labels


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--quick", action="store_true",
                   help="small corpus: 3 long runs and 2 runs per other regime per fault type, ~28k clean steps")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--corpus-dir", help="where the corpus lives (default bench/data/fault_bench/<size>-<seed>); an "
                   "existing corpus there is used as it is")
    p.add_argument("--regenerate", action="store_true", help="rebuild the corpus even if it exists")
    p.add_argument("--generate-only", action="store_true", help="write the corpus and stop")
    p.add_argument("--rldk", help="rldk binary (default: $RLDK, `rldk` on PATH, build/release/rldk)")
    p.add_argument("--scan-json", help="evaluate this saved scan document instead of running scan")
    p.add_argument("--tolerance", type=int, default=MatchOptions.tolerance,
                   help="steps a finding may start before the labeled onset (default %(default)s)")
    p.add_argument("--max-delay", type=int, default=MatchOptions.max_delay,
                   help="steps after the labeled end a finding may start (default %(default)s)")
    p.add_argument("--min-severity", choices=("info", "warning", "critical"), default=MatchOptions.min_severity,
                   help="lowest severity counted as an alarm (default %(default)s)")
    p.add_argument("--out", help="directory for result.md / result.json (default: the corpus directory)")
    args = p.parse_args(argv)

    try:
        name, directory, manifest, labels = _corpus(args)
    except (OSError, ValueError) as e:
        print("fault_bench: corpus: %s" % e, file=sys.stderr)
        return 2
    if args.generate_only:
        print(directory)
        return 0
    run_ids = [r["run_id"] for r in manifest["runs"]]
    try:
        if args.scan_json:
            with open(args.scan_json) as f:
                doc = json.load(f)
            findings = findings_from_scan(doc, {os.path.join(directory, r + ".jsonl"): r for r in run_ids})
            rldk, seconds = "saved scan " + args.scan_json, 0.0
        else:
            rldk = find_rldk(args.rldk)
            check_scan_available(rldk)
            findings, _, seconds = scan_corpus(rldk, directory, run_ids)
        options = MatchOptions(tolerance=args.tolerance, max_delay=args.max_delay, min_severity=args.min_severity)
        result = evaluate(labels, findings, options, fault_types=FAULT_TYPES)
        by_regime = evaluate_by_regime(labels, findings, options, fault_types=FAULT_TYPES)
    except (OSError, RuntimeError, ValueError, KeyError) as e:
        print("fault_bench: %s" % e, file=sys.stderr)
        return 2
    meta = {"corpus": name, "seed": args.seed, "runs": len(run_ids), "generator": manifest.get("generator"),
            "total_steps": sum(r["steps"] for r in manifest["runs"]),
            "logged_steps": sum(r.get("points", r["steps"]) for r in manifest["runs"]),
            "scan_seconds": round(seconds, 2),
            "rldk": rldk if args.scan_json else os.path.relpath(rldk, ROOT), "tolerance": options.tolerance,
            "max_delay": options.max_delay, "min_severity": options.min_severity}
    doc = to_json(result, meta, by_regime)
    markdown = to_markdown(doc)
    out = args.out or directory
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out, "result.md"), "w") as f:
        f.write(markdown)
    print(markdown)
    h = doc["headline"]
    met = (h["fault_types_meeting_recall_goal"] == h["fault_types_labeled"]
           and h["false_alarms_per_10k_clean_steps"] is not None
           and h["false_alarms_per_10k_clean_steps"] <= GOALS["false_alarms_per_10k"]
           and h["level_shift_3sigma"]["median_delay"] is not None
           and h["level_shift_3sigma"]["median_delay"] <= GOALS["level_shift_3sigma_median_delay"])
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
