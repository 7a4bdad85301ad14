"""The reference suite's runs and the catch expected of each bug, written beside it.

A run is one training configuration of one task: healthy, or with one mis-configuration an engineer makes. Each
bug names the rldk capability that must catch it (a check, see checks.py), what that check must report and by
when. Every check applied to a healthy run must stay quiet: a finding there is a false alarm and fails the suite.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple



@dataclass(frozen=True)
class Expect:
    check: str          # monitor, doctor, diff, reward, determinism, contamination, evals, ckpt
    what: str           # the catch, in words, as the table prints it
    within_step: Optional[int] = None  # for monitor and scan: caught at or before this training step


@dataclass(frozen=True)
class Run:
    task: str
    variant: str                      # "healthy" or the bug's short name
    bug: Optional[str]                # the mis-configuration, in words (None: healthy)
    flags: Tuple[str, ...] = ()       # train.py flags beyond the task's defaults
    train: bool = True                # False: a data-only bug (the checks read the data files)
    checks: Tuple[str, ...] = ()      # the checks applied to this run
    quick_checks: Optional[Tuple[str, ...]] = None  # the checks under --quick, when fewer
    expect: Tuple[Expect, ...] = ()   # for a bug: the catches that must happen
    full_only: bool = False           # only in --full

    @property
    def name(self) -> str:
        return "%s-%s" % (self.task, self.variant)


RUNS: List[Run] = [
    Run("summarize", "healthy", None, checks=("monitor", "doctor", "reward", "determinism", "evals")),
    Run("summarize", "lr100", "learning rate 100x the healthy run's (5e-3 instead of 5e-5)", ("--lr", "5e-3"),
        checks=("monitor", "doctor", "diff", "ckpt", "evals"),
        expect=(Expect("monitor", "a KL, entropy or length guard stops the trainer", within_step=20),
                Expect("diff", "the run parts from the healthy one by step 10, policy/kl among the signals that "
                               "diverge", within_step=10),
                Expect("doctor", "a KL or policy finding in the scan (warning or critical)", within_step=20),
                Expect("ckpt", "the weights moved at least 5x farther from the initial policy than the healthy run's"),
                Expect("evals", "the checkpoint saved at the stop is worse than the healthy run's on held-out "
                                "documents (paired test over items)"))),
    Run("summarize", "unseeded_shuffle", "training items shuffled with Python's unseeded global RNG",
        ("--shuffle-unseeded",), checks=("determinism",),
        expect=(Expect("determinism", "two replicas differ (the healthy configuration reproduces bit for bit)"),)),
    Run("summarize", "saturating_rm", "reward model head with a large logit squashed by a sigmoid",
        ("--reward", "saturating"), checks=("reward",),
        expect=(Expect("reward", "reward health reports saturation"),)),
    Run("summarize", "length_rm", "reward model that pays 0.05 per word of length", ("--reward", "length"),
        checks=("reward",), expect=(Expect("reward", "reward health reports a length bias"),)),
    # The memory_leak guard judges 20 RSS samples after a grace of 10, counted from the trainer's first logged
    # metric: at one sample per 0.25 s the leak must last well over 7.5 s of training. 60 steps leaked for about
    # 5.5 s here and a faster machine finished inside the grace; 160 steps leak for 3x that (about 2.5 GB).
    Run("summarize", "memory_leak", "a debugging hook keeps every step's activations on a list",
        ("--leak-mb-per-step", "16", "--steps", "160"), checks=("monitor",),
        expect=(Expect("monitor", "the memory_leak guard warns on the trainer's sampled RSS"),)),
    Run("refusal", "healthy", None, ("--lr", "5e-4"), checks=("monitor", "doctor", "contamination")),
    Run("refusal", "eval_leak", "the safety eval's requests copied into the preference data", train=False,
        checks=("contamination",),
        expect=(Expect("contamination", "eval items flagged as contaminated, with their training rows"),)),
    Run("refusal", "lr100", "learning rate 100x the healthy run's (5e-2 instead of 5e-4)", ("--lr", "5e-2"),
        checks=("monitor", "doctor"),
        expect=(Expect("doctor", "a DPO or policy finding in the scan (warning or critical)"),), full_only=True),
    Run("codefix", "healthy", None, checks=("monitor", "doctor", "reward", "contamination"),
        quick_checks=("contamination",)),
    Run("codefix", "eval_leak", "the code eval's problems and solutions copied into the training pool",
        train=False, checks=("contamination",),
        expect=(Expect("contamination", "eval problems flagged as contaminated, with their training rows"),)),
]

PRESETS = {"summarize": "grpo_safe", "codefix": "grpo_safe", "refusal": "dpo_basic"}


def runs(full: bool) -> List[Run]:
    return [r for r in RUNS if full or not r.full_only]


def checks_of(run: Run, full: bool) -> Tuple[str, ...]:
    return run.checks if full or run.quick_checks is None else run.quick_checks


def healthy_of(run: Run) -> Run:
    return next(r for r in RUNS if r.task == run.task and r.variant == "healthy")
