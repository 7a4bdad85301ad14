"""MonitorSession: guard rules, a canonical event log and a report for one training run, fed one logged dict at a
time. Trainer integrations (the TRL callback, a hand-written loop) are thin adapters over it.

    session = MonitorSession("runs/exp1/rldk", preset="grpo_safe", run_id="exp1")
    for step in ...:
        alerts = session.log(step, {"kl": kl, "reward": reward})
        if session.stop_alert:
            break
    session.finish()            # writes report.json

Files under ``out_dir`` (the same names ``rldk monitor --out`` uses): metrics.jsonl (every logged number under its
canonical name, readable and tailable by every rldk command), alerts.jsonl (one record per action), report.json
(schema rldk.monitor-report/v1).
"""

from __future__ import annotations

import json
import logging
import os
from typing import Callable, List, Mapping, Optional, Sequence, Union

from .. import _core
from .._values import as_float
from ..event_writer import EventWriter
from ..monitor import Monitor

log = logging.getLogger("rldk")
NAN = float("nan")

METRICS_FILE = "metrics.jsonl"
ALERTS_FILE = "alerts.jsonl"
REPORT_FILE = "report.json"


def numeric_items(metrics: Mapping[str, object]) -> List[tuple]:
    """(name, float) for every value that is a number, and NaN for None; strings and lists are left out.

    None counts as NaN because that is what it means in a trainer's logs: TRL's GRPO/RLOO log None for a metric
    whose every value in the logging window was NaN (JSON loggers reject NaN), and rldk reads null in
    trainer_state.json as NaN too, so a NaN guard fires in process exactly as it does on the saved run."""
    items = []
    for name, value in metrics.items():
        number = NAN if value is None else as_float(value)
        if number is not None:
            items.append((str(name), number))
    return items


class MonitorSession:
    def __init__(self, out_dir: Optional[Union[str, os.PathLike]], preset: Union[str, Sequence[str], None] = None,
                 rules: Union[str, Sequence[str], None] = None, rules_yaml: Union[str, Sequence[str], None] = None,
                 set_rule: Optional[Sequence[str]] = None, run_id: str = "run", write_events: bool = True,
                 fail_on: str = "stop", allow_shell: bool = False,
                 on_alert: Optional[Callable[[dict], None]] = None):
        """``out_dir`` None: evaluate rules only and write nothing (other ranks of a distributed run)."""
        self.out_dir = os.fspath(out_dir) if out_dir is not None else None
        self.run_id = run_id
        self.fail_on = fail_on
        self._on_alert = on_alert
        alerts_path = None
        if self.out_dir is not None:
            os.makedirs(self.out_dir, exist_ok=True)
            alerts_path = os.path.join(self.out_dir, ALERTS_FILE)
        self.monitor = Monitor(preset=preset, rules=rules, rules_yaml=rules_yaml, set_rule=set_rule,
                               alerts_path=alerts_path, allow_shell=allow_shell, run_id=run_id)
        self._events: Optional[EventWriter] = None
        if self.out_dir is not None and write_events:
            self._events = EventWriter(os.path.join(self.out_dir, METRICS_FILE), run_id=run_id)
        self.stop_alert: Optional[dict] = None  # the first alert whose rule asks to stop
        self.last_step: Optional[int] = None

    @property
    def metrics_path(self) -> Optional[str]:
        return self._events.path if self._events is not None else None

    @property
    def report_path(self) -> Optional[str]:
        return os.path.join(self.out_dir, REPORT_FILE) if self.out_dir is not None else None

    @property
    def alerts(self) -> List[dict]:
        return self.monitor.alerts

    def log(self, step: int, metrics: Mapping[str, object]) -> List[dict]:
        """Records one logged dict (raw trainer names) and evaluates the rules on it; returns the new alerts."""
        step = _core.as_step(step)  # the same check (and InvalidArgumentError) as Monitor.observe
        items = numeric_items(metrics)
        if not items:
            return []
        self.last_step = step
        if self._events is not None and not self._events.closed:
            # Written before the rules run, so the file holds the values that made a rule stop the run.
            self._events.log(step, metrics={_core.canonical_name(name): value for name, value in items})
        return self._handle(self.monitor.observe(step, dict(items)))

    def _handle(self, alerts: List[dict]) -> List[dict]:
        for alert in alerts:
            if alert["stop"] and self.stop_alert is None:
                self.stop_alert = alert
            if self._on_alert is not None:
                self._on_alert(alert)
        return alerts

    def report(self) -> dict:
        """The rldk.monitor-report/v1 object for the session so far."""
        return self.monitor.session_report(fail_on=self.fail_on,
                                           sources=[self.metrics_path] if self.metrics_path else [])

    def write_report(self) -> Optional[str]:
        """Writes report.json (again, if it exists) and returns its path; None when the session writes no files."""
        if self.report_path is None:
            return None
        tmp = self.report_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.report(), f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(tmp, self.report_path)  # a reader never sees half a report
        return self.report_path

    def finish(self) -> Optional[str]:
        """End-of-run rules give their verdict (their alerts reach stop_alert and on_alert like any other), then
        flushes actions, closes the event log and writes the report; logging may resume later (it appends)."""
        self._handle(self.monitor.finish())
        self.monitor.close()
        if self._events is not None and not self._events.closed:
            self._events.close()
        return self.write_report()

    def reopen_events(self) -> None:
        """Appends to the event log again after finish() (a second trainer.train() call)."""
        if self._events is not None and self._events.closed:
            self._events = EventWriter(self._events.path, run_id=self.run_id)


def describe_alert(alert: dict) -> str:
    """One line for a console or an exception: rule, step, metric and value, and the rule's message."""
    text = "%s at step %d: %s = %.6g" % (alert["rule_id"], alert["step"], alert["metric"], alert["value"])
    if alert.get("message"):
        text += " (%s)" % alert["message"]
    return text


__all__ = ["MonitorSession", "describe_alert", "numeric_items"]
