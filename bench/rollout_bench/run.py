"""Labeled rollout benchmark for `rldk reward health`: detection rate per injected pathology, false alarms on clean
sets, and speed on one million samples against pandas/NumPy computing the same correlations in the same run.

    python bench/rollout_bench/run.py                       # 5 seeds, formats rotated over seeds, then speed
    python bench/rollout_bench/run.py --rldk build/rldk --seeds 10 --formats all
    python bench/rollout_bench/run.py --skip-speed          # detection table only
    python bench/rollout_bench/run.py --generate-only --keep DIR   # write the sets, run nothing

The sets come from tests/python/rollout_fixtures.py (kinds, parameters and file layouts are documented there and in
README.md next to this file). Prints Markdown to stdout; progress goes to stderr.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import rollout_fixtures as rf  # noqa: E402

ALARM = ("warning", "critical")  # severities that count as "the check fired"
TIMEOUT_S = 300


def find_rldk(name):
    """The rldk binary to run, or None: a path to an executable file, or a name on PATH."""
    if os.sep in name or (os.altsep and os.altsep in name):
        return os.path.abspath(name) if os.path.isfile(name) and os.access(name, os.X_OK) else None
    return shutil.which(name)


def has_reward_health(rldk):
    """Whether this rldk knows `reward health` (the command is new; an older build answers with a usage error)."""
    try:
        proc = subprocess.run([rldk, "reward", "health", "--help"], capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    # CLI11 answers `--help` after an unknown subcommand with the top-level help and exit 0, so look for the
    # command's own usage line rather than trusting the exit code.
    return proc.returncode == 0 and "reward health" in proc.stdout


def set_path(folder, kind, fmt, seed):
    name = "%s-s%d" % (kind, seed)
    if fmt == "trl_parquet":
        return os.path.join(folder, name, "completions")  # the layout of TRL's OUTPUT_DIR/completions
    if fmt == "verl_jsonl":
        return os.path.join(folder, name, "rollout_data")
    return os.path.join(folder, name + (".jsonl" if fmt == "jsonl" else ".csv"))


def health_command(rldk, rollouts, gold_flag=True, extra=()):
    cmd = [rldk, "reward", "health", rollouts.path, "--json"]
    if gold_flag and rollouts.gold_column:
        cmd += ["--gold", rollouts.gold_column]  # the issue's `--gold FILE|COL`
    return cmd + list(extra)


def run_health(cmd):
    """Runs one `rldk reward health` and returns (report or None, error text or None, seconds)."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % TIMEOUT_S, time.perf_counter() - start
    seconds = time.perf_counter() - start
    # Exit 1 means findings at or above the gate, not a failure to run; 2 is a usage or input error.
    if proc.returncode not in (0, 1):
        return None, "exit %d: %s" % (proc.returncode, proc.stderr.strip()[-500:]), seconds
    try:
        return json.loads(proc.stdout), None, seconds
    except json.JSONDecodeError as e:
        return None, "stdout is not JSON (%s): %r" % (e, proc.stdout[:200]), seconds


def alarms(report):
    """The (check, reward) pairs of a report's findings at warning or critical severity."""
    return sorted({(f.get("check"), f.get("reward")) for f in report.get("findings", [])
                   if f.get("severity") in ALARM})


def score(kind, report):
    """One set's outcome: for a pathology, whether an expected check fired; for a clean set, whether anything did
    (a false alarm)."""
    fired = alarms(report)
    checks = sorted({c for c, _ in fired})
    if kind in rf.CLEAN_KINDS:
        return {"kind": kind, "hit": None, "false_alarm": bool(fired), "fired": checks,
                "verdict": report.get("verdict")}
    expected = rf.EXPECTED_CHECKS[kind]
    return {"kind": kind, "hit": any(c in expected for c in checks), "false_alarm": None, "fired": checks,
            "verdict": report.get("verdict")}


def detection_table(results):
    """Markdown: one row per kind. results: list of score() dicts plus "fmt" and optional "error"."""
    lines = ["| set | expected check | detected / false alarms | rate | checks that fired (warning or critical) |",
             "|---|---|---|---|---|"]
    for kind in rf.KINDS + rf.PAIR_KINDS:
        rows = [r for r in results if r["kind"] == kind]
        if not rows:
            continue
        ran = [r for r in rows if not r.get("error")]
        errors = len(rows) - len(ran)
        fired = {}
        for r in ran:
            for c in r["fired"]:
                fired[c] = fired.get(c, 0) + 1
        fired_text = ", ".join("%s %d/%d" % (c, n, len(ran)) for c, n in sorted(fired.items())) or "none"
        if errors:
            fired_text += "; %d run(s) failed" % errors
        if kind in rf.CLEAN_KINDS:
            n = sum(r["false_alarm"] for r in ran)
            lines.append("| %s (clean) | none | %d/%d false alarms | %s | %s |"
                         % (kind, n, len(ran), _rate(n, len(ran)), fired_text))
        else:
            n = sum(r["hit"] for r in ran)
            lines.append("| %s | %s | %d/%d detected | %s | %s |"
                         % (kind, " or ".join(rf.EXPECTED_CHECKS[kind]), n, len(ran), _rate(n, len(ran)), fired_text))
    return "\n".join(lines)


def _rate(n, d):
    return "%.0f%%" % (100.0 * n / d) if d else "n/a"


# ----------------------------------------------------------------------------------------------------------------
# Speed: rldk against what a user would otherwise write, pandas + NumPy, on the same file in the same run.

def pandas_baseline(path):
    """Reads step/prompt/completion/reward with pandas (pyarrow engine) and computes Pearson and Spearman of reward
    vs completion length in characters, overall and within prompt (both centred on their prompt's mean with a
    groupby-transform). Returns (results, seconds_read, seconds_compute)."""
    import numpy as np
    import pandas as pd

    t0 = time.perf_counter()
    df = pd.read_parquet(path, columns=["prompt", "completion", "reward"])
    t1 = time.perf_counter()
    length = df["completion"].str.len().astype("float64")
    reward = df["reward"].astype("float64")
    by_prompt = df["prompt"]
    centred_len = length - length.groupby(by_prompt).transform("mean")
    centred_reward = reward - reward.groupby(by_prompt).transform("mean")

    def pearson(a, b):
        return float(np.corrcoef(np.asarray(a, float), np.asarray(b, float))[0, 1])

    def spearman(a, b):
        return pearson(a.rank(method="average"), b.rank(method="average"))

    out = {"pearson": pearson(reward, length), "spearman": spearman(reward, length),
           "pearson_within_prompt": pearson(centred_reward, centred_len),
           "spearman_within_prompt": spearman(centred_reward, centred_len)}
    t2 = time.perf_counter()
    return out, t1 - t0, t2 - t1


# Peak memory of a child is its ru_maxrss, but Linux carries the high-water mark of the process that forked it
# across exec: a child forked from this Python (holding a million generated samples and pandas) would report this
# process's size. So children are started by a small launcher process spawned before anything large is loaded; it
# runs one command per request and answers with the wall time and the child's own peak.
_LAUNCHER_CODE = r"""
import json, os, subprocess, sys, time
for line in sys.stdin:
    req = json.loads(line)
    with open(req["stdout"], "w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(req["cmd"], stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        stderr = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
    print(json.dumps({"code": os.waitstatus_to_exitcode(status), "seconds": seconds,
                      "rss_mb": usage.ru_maxrss / 1024.0, "stderr": stderr[-500:]}), flush=True)
"""
_launcher = None


def start_launcher():
    """Starts the launcher; call before generating data (see above)."""
    global _launcher
    if _launcher is None:
        _launcher = subprocess.Popen([sys.executable, "-c", _LAUNCHER_CODE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
    return _launcher


def run_measured(cmd, stdout_path):
    """Runs cmd with stdout to a file; returns (exit code, wall seconds, peak RSS in MB of that process)."""
    launcher = start_launcher()
    launcher.stdin.write(json.dumps({"cmd": cmd, "stdout": stdout_path}) + "\n")
    launcher.stdin.flush()
    answer = json.loads(launcher.stdout.readline())
    if answer["code"] not in (0, 1):
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), answer["code"], answer["stderr"].strip()))
    return answer["code"], answer["seconds"], answer["rss_mb"]


def speed(rldk, folder, samples, repeats):
    path = os.path.join(folder, "speed.parquet")
    t0 = time.perf_counter()
    text_bytes = rf.write_speed_parquet(path, samples=samples)
    print("speed: wrote %d samples, %.1f MB of text, %.1f MB file in %.1f s"
          % (samples, text_bytes / 1e6, os.path.getsize(path) / 1e6, time.perf_counter() - t0), file=sys.stderr)
    rldk_runs, base_runs = [], []
    for i in range(repeats):
        # Alternate, so neither side always runs with the warmer page cache.
        _, seconds, rss = run_measured([rldk, "reward", "health", path, "--json"], os.path.join(folder, "speed.json"))
        rldk_runs.append((seconds, rss))
        base_runs.append(pandas_baseline(path))
        print("speed: run %d: rldk %.2f s, pandas %.2f s" % (i + 1, seconds, sum(base_runs[-1][1:])), file=sys.stderr)
    best_rldk = min(rldk_runs)
    best_base = min(base_runs, key=lambda r: r[1] + r[2])
    base_total = best_base[1] + best_base[2]
    with open(os.path.join(folder, "speed.json")) as f:
        verdict = json.load(f).get("verdict")
    mb = text_bytes / 1e6
    lines = ["| tool | what it computes | seconds (best of %d) | MB of text / s | peak RSS |" % repeats,
             "|---|---|---|---|---|",
             "| `rldk reward health` | every check, text features included | %.2f | %.0f | %.0f MB |"
             % (best_rldk[0], mb / best_rldk[0], best_rldk[1]),
             "| pandas + NumPy | read, then Pearson + Spearman of reward vs length, overall and within prompt "
             "(read %.2f s + compute %.2f s) | %.2f | %.0f | |" % (best_base[1], best_base[2], base_total, mb / base_total)]
    summary = ("%d samples, %.1f MB of text (prompt + completion); rldk is %.1fx the speed of the pandas/NumPy "
               "baseline (verdict on this file: %s). Baseline correlations: %s"
               % (samples, mb, base_total / best_rldk[0], verdict,
                  ", ".join("%s %.4f" % kv for kv in best_base[0].items())))
    return "\n".join(lines) + "\n\n" + summary


# ----------------------------------------------------------------------------------------------------------------

def plan(seeds, formats):
    """(kind, fmt, seed) of every labeled set: with one format per seed, the formats rotate over the seeds so every
    layout is read without multiplying the run count."""
    out = []
    for seed in range(seeds):
        fmts = rf.FORMATS if formats == "all" else ([rf.FORMATS[seed % len(rf.FORMATS)]] if formats == "rotate"
                                                    else [formats])
        for fmt in fmts:
            for kind in rf.KINDS + rf.PAIR_KINDS:
                out.append((kind, fmt, seed))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rldk", default="rldk", help="the rldk binary (default: rldk on PATH)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--formats", default="rotate", choices=("rotate", "all") + rf.FORMATS,
                    help="rotate: one layout per seed (default); all: every layout for every seed")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--no-gold-flag", action="store_true", help="do not pass --gold COL for sets with a gold column")
    ap.add_argument("--extra", action="append", default=[], help="an extra argument for every health run")
    ap.add_argument("--skip-detection", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--speed-samples", type=int, default=1_000_000)
    ap.add_argument("--speed-repeats", type=int, default=3)
    ap.add_argument("--generate-only", action="store_true", help="write the labeled sets and stop (needs no rldk)")
    ap.add_argument("--keep", metavar="DIR", help="write the sets here and keep them (default: a temp folder)")
    args = ap.parse_args(argv)

    rldk = None
    if args.generate_only and not args.keep:
        ap.error("--generate-only needs --keep DIR (the sets would be deleted at exit)")
    if not args.generate_only:
        rldk = find_rldk(args.rldk)
        if rldk is None:
            print("rollout_bench: no rldk binary at %r (pass --rldk PATH, or put rldk on PATH; "
                  "--generate-only writes the sets without it)" % args.rldk, file=sys.stderr)
            return 2
        if not has_reward_health(rldk):
            print("rollout_bench: %s has no `reward health` command yet (`%s reward health --help` failed); "
                  "build a version that has it, or use --generate-only" % (rldk, rldk), file=sys.stderr)
            return 2

    if not args.skip_speed and not args.generate_only:
        start_launcher()  # before any data is generated: its children's peak memory must be their own
    folder = args.keep or tempfile.mkdtemp(prefix="rldk_rollout_bench_")
    os.makedirs(folder, exist_ok=True)
    try:
        out = ["# rollout benchmark", ""]
        if not args.skip_detection:
            results = []
            for kind, fmt, seed in plan(args.seeds, args.formats):
                if kind in rf.PAIR_KINDS:
                    rollouts = rf.write_pairs(set_path(folder, kind, fmt, seed), kind, fmt, seed=seed)
                else:
                    rollouts = rf.write_rollouts(set_path(folder, kind, fmt, seed), kind, fmt, seed=seed,
                                                 steps=args.steps, prompts=args.prompts, group=args.group)
                if args.generate_only:
                    print("%s %s seed %d: %d samples -> %s" % (kind, fmt, seed, rollouts.samples, rollouts.path))
                    continue
                report, error, seconds = run_health(health_command(rldk, rollouts, not args.no_gold_flag, args.extra))
                if error:
                    result = {"kind": kind, "error": error, "fired": []}
                    print("%s %s seed %d: ERROR %s" % (kind, fmt, seed, error), file=sys.stderr)
                else:
                    if len(rollouts.reward_columns) == 2:
                        # Two reward models on one file: `rldk reward drift` compares them; "disagree" counts as
                        # the finding "reward drift".
                        a_col, b_col = rollouts.reward_columns
                        drift, derror, _ = run_health([rldk, "reward", "drift", "--json", rollouts.path, rollouts.path,
                                                       "--a-col", a_col, "--b-col", b_col])
                        if not derror and drift.get("verdict") == "disagree":
                            report.setdefault("findings", []).append(
                                {"check": "reward drift", "reward": b_col, "severity": "warning"})
                    result = score(kind, report)
                    print("%s %s seed %d: %s, fired %s (%.2f s)" % (kind, fmt, seed, report.get("verdict"),
                                                                    result["fired"] or "nothing", seconds),
                          file=sys.stderr)
                result.update(fmt=fmt, seed=seed)
                results.append(result)
            if args.generate_only:
                return 0
            out += ["## Detection (%d seeds, %s, %d steps x %d prompts x %d completions per set)"
                    % (args.seeds, "every layout" if args.formats == "all" else
                       "layouts rotated over seeds" if args.formats == "rotate" else args.formats,
                       args.steps, args.prompts, args.group), "", detection_table(results), ""]
        if not args.skip_speed and not args.generate_only:
            out += ["## Speed", "", speed(rldk, folder, args.speed_samples, args.speed_repeats), ""]
        print("\n".join(out))
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
