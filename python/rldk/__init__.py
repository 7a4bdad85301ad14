"""rldk, the RL Debug Kit: catch RL training failures of language models early, and explain them.

    import rldk
    run = rldk.read_run("runs/exp1/trainer_state.json")
    kl = run["policy/kl"]            # canonical names, whatever the trainer called it
    kl.steps, kl.values              # NumPy arrays
    run.to_pandas()                  # one row per step (needs pandas)

    monitor = rldk.Monitor(preset="grpo_safe")     # guard rules in the training loop
    alerts = monitor.observe(step, {"kl": 0.4, "reward": 0.5})

    report = rldk.scan("runs/exp1/trainer_state.json")   # what went wrong, as `rldk scan --json`
    report.findings(at_least="warning")

The engine is native (C++); the ``rldk`` command uses the same engine.
"""

from . import _core
from ._values import as_text as _as_text
from .errors import (InvalidArgumentError, MetricNotFoundError, RldkError, SourceNotFoundError,
                     SourceUnreadableError, UnrecognizedFormatError, WriteError)
from .event_writer import EventWriter
from .monitor import Monitor
from .run import Run, Segment, Series, read_run, read_runs
from ._scan import ScanReport, scan
from . import contamination, evals, reward, seed, tracking  # tracking imports torch/pandas/datasets only when used
from .seed import rng_fingerprint, seed_context, set_global_seed

__version__ = _core.__version__

metric_names = _core.metric_names


def canonical_name(raw_name: str) -> str:
    """The canonical name of a metric as a trainer logged it (unknown names are returned unchanged)."""
    return _core.canonical_name(_as_text(raw_name, "raw_name"))


def metric_info(name: str):
    """The dictionary entry (name, unit, aggregation, description, aliases) of a metric, raw or canonical; None
    when the dictionary does not know it."""
    return _core.metric_info(_as_text(name, "name"))


__all__ = [
    "EventWriter", "InvalidArgumentError", "MetricNotFoundError", "Monitor", "RldkError", "Run", "Segment", "Series",
    "SourceNotFoundError", "SourceUnreadableError", "UnrecognizedFormatError", "WriteError", "canonical_name",
    "metric_info", "metric_names", "read_run", "read_runs", "rng_fingerprint", "seed", "seed_context",
    "set_global_seed", "tracking",
]
