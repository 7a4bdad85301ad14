"""rldk.Monitor: the guard rules of `rldk monitor`, evaluated inside the training process.

    monitor = rldk.Monitor(preset="grpo_safe")
    for step in ...:
        alerts = monitor.observe(step, {"kl": kl, "reward": reward})   # raw or canonical names
        if any(a["stop"] for a in alerts):
            break                                                    # or control.should_training_stop = True

Each alert is a dict: rule_id, run_id, metric, step, value, message, stop (the rule asks to stop the run), actions,
window (the values the condition saw). At the end of the run call ``finish()`` (``close()`` and ``with`` do): rules
that judge a whole episode (a steady trend, a shift still open) give their verdict there, as in ``rldk monitor``.
``alerts_path`` also writes every action record to a JSONL file, as the command does; stop actions are recorded as
requests, since stopping is the trainer's decision in process.
"""

from __future__ import annotations

import json
from typing import Iterable, List, Mapping, Optional, Sequence, Union

from . import _core
from ._values import as_float, as_text, as_time
from .errors import InvalidArgumentError


def _as_list(x) -> List[str]:
    if x is None:
        return []
    if isinstance(x, str):
        return [x]
    return [str(i) for i in x]


class Monitor:
    def __init__(self, preset: Union[str, Sequence[str], None] = None, rules: Union[str, Sequence[str], None] = None,
                 rules_yaml: Union[str, Sequence[str], None] = None, set_rule: Optional[Sequence[str]] = None,
                 alerts_path: Optional[str] = None, allow_shell: bool = False, run_id: str = "run"):
        """``preset``: built-in preset name(s) (see ``rldk rules list``). ``rules``: rule file path(s).
        ``rules_yaml``: rule file text(s). ``set_rule``: overrides "RULE_ID.FIELD=VALUE"."""
        presets = _as_list(preset)
        if not presets and rules is None and rules_yaml is None:
            raise InvalidArgumentError("give preset=, rules= or rules_yaml=")
        self.run_id = as_text(run_id, "run_id")
        self._native = _core.Monitor(presets, _as_list(rules), _as_list(rules_yaml), _as_list(set_rule),
                                     str(alerts_path or ""), bool(allow_shell))

    @property
    def rule_ids(self) -> List[str]:
        return self._native.rule_ids

    @property
    def alerts(self) -> List[dict]:
        """Every alert so far."""
        return self._native.alerts

    def observe(self, step: int, metrics: Mapping[str, object], run_id: Optional[str] = None,
                time: Optional[float] = None) -> List[dict]:
        """Evaluates one step's metrics (a dict as logged: ``{"kl": 0.1, "train/reward": 0.5}``); returns the
        alerts raised at this step. Values that are not numbers (strings, None) are skipped; NaN is kept.

        ``step``: an int in the int64 range (NumPy/torch integers and whole floats too); anything else raises
        InvalidArgumentError. ``time``: epoch seconds or a datetime."""
        if not callable(getattr(metrics, "items", None)):
            raise InvalidArgumentError("metrics must be a mapping of name to value, got %s" % type(metrics).__name__)
        items = []
        for name, value in metrics.items():
            number = as_float(value)
            if number is not None:
                items.append((str(name), number))
        run_id = (as_text(run_id, "run_id") if run_id is not None else "") or self.run_id  # "" too means the default
        return self._native.observe(step, items, run_id, as_time(time))

    def report(self) -> dict:
        """Per rule: condition, window, activations, first and last activation."""
        return json.loads(self._native.report())

    @property
    def observations(self) -> int:
        """Metric values evaluated so far."""
        return self._native.observations

    @property
    def evaluation_errors(self) -> int:
        """Conditions that could not be evaluated (e.g. a rule reading a metric the trainer never logged)."""
        return self._native.evaluation_errors

    def records(self) -> List[dict]:
        """The action records so far (warn, stop, http, ...), as alerts.jsonl holds them; empty without
        ``alerts_path``."""
        return json.loads(self._native.records())

    def session_report(self, fail_on: str = "stop", sources: Sequence[str] = ()) -> dict:
        """The report ``rldk monitor`` writes to report.json (schema rldk.monitor-report/v1), for this in-process
        session. ``exit_code`` is what the command would have exited with: 1 when an alert at or above ``fail_on``
        (never, warn or stop) fired, else 0. Built by the same core function as the command's report."""
        return json.loads(self._native.session_report(str(fail_on), [str(s) for s in sources]))

    def finish(self) -> List[dict]:
        """End of the run's data: flushes, then rules whose detector judges a whole episode (a steady trend, a
        shift still open at the end) give their verdict, as ``rldk monitor`` does when its input ends. Returns the
        alerts raised there (they are in ``alerts`` and the records too). Calling it again does nothing unless
        steps were observed since (logging may resume, e.g. a second ``trainer.train()``)."""
        return self._native.finish()

    def close(self) -> None:
        """``finish()``, then waits for pending actions (alert records, webhooks). Observing may go on after."""
        self.finish()
        self._native.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
