"""TrainingStopped: how rldk stops a trainer that does not look at ``control.should_training_stop``."""

from __future__ import annotations

from typing import List, Optional


class TrainingStopped(RuntimeError):
    """A guard rule asked to stop training, and the trainer went on (or the callback was told to raise at once).

    Raised from a trainer callback, so it leaves ``trainer.train()``; catch it around that call::

        try:
            trainer.train()
        except rldk.integrations.TrainingStopped as stop:
            print(stop.alert["rule_id"], stop.step, stop.report_path)

    The report (report.json) is already written when it is raised. Attributes: ``alert`` (the alert that asked to
    stop, a dict as ``rldk.Monitor.observe`` returns), ``step`` (the trainer step it fired at), ``report_path``
    (None when files are not written, e.g. on ranks other than the main one).
    """

    def __init__(self, message: str, alert: dict, step: int, report_path: Optional[str] = None,
                 alerts: Optional[List[dict]] = None):
        super().__init__(message)
        self.alert = alert
        self.step = step
        self.report_path = report_path
        self.alerts = list(alerts or [])


__all__ = ["TrainingStopped"]
