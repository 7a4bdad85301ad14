"""Exceptions raised by rldk. Each also derives from the builtin a caller would naturally catch.

Every error the API raises for bad input or a failed read/write is one of these: an argument of the wrong type or
out of range (a step of 2**63, NaN, True or "3") is an InvalidArgumentError naming the argument and the value, and
an unexpected failure inside the native engine is an RldkError, never a bare RuntimeError or TypeError.
"""


class RldkError(Exception):
    """Base class of every rldk error."""

    def __init__(self, message, context=""):
        super().__init__(message)
        self.context = context


class SourceNotFoundError(RldkError, FileNotFoundError):
    """The run log path does not exist."""


class SourceUnreadableError(RldkError, PermissionError):
    """The path exists but cannot be read (permissions, I/O error, a folder where a file was expected)."""


class UnrecognizedFormatError(RldkError, ValueError):
    """The path was read, but holds no run data rldk recognises (or is binary)."""


class InvalidArgumentError(RldkError, ValueError):
    """An argument rldk cannot use (unknown format name, closed writer, empty metric name)."""


class WriteError(RldkError, OSError):
    """Writing failed (disk full, permissions)."""


class MetricNotFoundError(RldkError, KeyError):
    """``run[name]`` for a metric the run does not have."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""  # KeyError would show the message's repr, quotes and all


_BY_CODE = {
    "not_found": SourceNotFoundError,
    "unreadable": SourceUnreadableError,
    "unrecognized": UnrecognizedFormatError,
    "invalid_argument": InvalidArgumentError,
    "io": WriteError,
}


def error_from_code(code, message, context=""):
    """Used by the native engine to build the exception for an error code."""
    return _BY_CODE.get(code, RldkError)(message, context)
