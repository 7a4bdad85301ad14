"""Trainer integrations. ``rldk.integrations.trl.RLDKCallback`` needs transformers; it is imported on first use so
``import rldk`` never pulls in a deep-learning stack.

    from rldk.integrations import RLDKCallback, TrainingStopped, MonitorSession
"""

from .session import MonitorSession
from .stop import TrainingStopped


def __getattr__(name):
    if name == "RLDKCallback":
        from .trl import RLDKCallback
        return RLDKCallback
    raise AttributeError("module 'rldk.integrations' has no attribute %r" % name)


__all__ = ["MonitorSession", "RLDKCallback", "TrainingStopped"]
