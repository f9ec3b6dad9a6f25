"""Errors raised by the redaction package (subclasses of the project-wide tree)."""

from __future__ import annotations

from replaykit.core.errors import BadInput, MissingExtra


class RedactionError(BadInput):
    """Bad redaction input or configuration."""


class RedactExtraMissing(MissingExtra):
    """Presidio or its spaCy model (the ``redact`` extra) is not installed."""

    def __init__(self, module: str = "presidio_analyzer") -> None:
        super().__init__("redact", module)
