"""Errors raised by the redaction package.

They subclass the project-wide classes in ``replaykit.core.errors`` when that module exists, so the CLI
maps them to exit 2 with a one-line message.
"""

from __future__ import annotations

try:  # the foundation's error tree; fall back so this package stays usable on its own
    from replaykit.core.errors import MissingExtra as _BaseMissingExtra
    from replaykit.core.errors import ReplaykitError as _BaseError
except ImportError:  # pragma: no cover - only before the foundation lands

    class _BaseError(Exception):  # type: ignore[no-redef]
        """Base class of every replaykit error."""

    class _BaseMissingExtra(_BaseError, ImportError):  # type: ignore[no-redef]
        """An optional dependency is not installed."""


class RedactionError(_BaseError):
    """Bad redaction input or configuration."""


class RedactExtraMissing(_BaseMissingExtra):
    """Presidio (the ``redact`` extra) is not installed."""

    def __init__(self, detail: str = "") -> None:
        msg = "redaction needs Presidio and spaCy: pip install 'replaykit[redact]'"
        if detail:
            msg += f" ({detail})"
        super().__init__(msg)
