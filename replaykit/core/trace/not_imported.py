"""The record of what an import did not bring into a run, kept in the run header (stdlib only).

The rule every importer follows (docs/importers.md): whatever the source holds becomes part of the run (a
step, an error, a link, metadata) or is listed here, with a reason. Importers append through
``replaykit.core.trace.interop.Losses.stamp``; ``inspect`` (which must not import pydantic) reads the
record with ``entries``. An entry: ``{"what": name, "count": n, "reason": why, "examples": [...],
"fields": [source field names it covers]}``.
"""

from __future__ import annotations

from typing import Any

#: the run header's metadata key
KEY = "not_imported"


def entries(metadata: Any) -> list[dict[str, Any]]:
    """A header's ``metadata.not_imported`` (``[]`` when none, or when hand-edited into another shape)."""
    found = metadata.get(KEY) if isinstance(metadata, dict) else None
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []
