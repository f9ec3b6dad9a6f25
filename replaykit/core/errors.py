"""The one exception tree of replaykit.

Every error a user can cause (bad input, bad run id, malformed trace, missing extra, provider failure)
is a ``ReplaykitError``; the CLI prints ``str(error)`` as one line and exits with ``error.exit_code``.
Lower-level exceptions are mapped at the seam with ``raise X from exc`` so nothing leaks a traceback.
"""

from __future__ import annotations


class ReplaykitError(Exception):
    """Base of every error replaykit raises on purpose."""

    exit_code = 2

    def __str__(self) -> str:
        # One line, always: multi-line messages would break the CLI contract.
        return " ".join(super().__str__().split())


class BadInput(ReplaykitError):
    """The user gave something unusable (a flag value, a file, an edit)."""


class TraceError(ReplaykitError):
    """A trace file is malformed, truncated in the middle, or otherwise unreadable."""


class UnknownSchemaVersion(TraceError):
    """A trace was written by a newer (or unknown) replaykit trace schema."""


class InvalidRunId(BadInput):
    """A run id that could escape the store or is not in the allowed alphabet."""


class RunNotFound(BadInput):
    """No run with that id in the store, and no trace file at that path."""


class RunExists(BadInput):
    """Refusing to overwrite an existing run."""


class MissingExtra(ReplaykitError):
    """An optional integration is not installed."""

    def __init__(self, extra: str, module: str) -> None:
        super().__init__(
            f"this feature needs the '{extra}' extra ({module} is not installed): "
            f"pip install 'replaykit[{extra}]'"
        )
        self.extra = extra
        self.module = module


class CodecError(BadInput):
    """A provider payload could not be decoded into (or encoded from) the IR."""


class ProviderError(ReplaykitError):
    """A live provider call failed for good (after the retry policy gave up)."""


class Difference(ReplaykitError):
    """Not an error: signals 'the compared things differ' (exit code 1)."""

    exit_code = 1
