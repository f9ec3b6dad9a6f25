"""What every input adapter produces."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaykit.core.errors import BadInput
from replaykit.core.trace.interop import Losses
from replaykit.core.trace.ir import Event, RunHeader

#: the largest file an importer reads whole
MAX_IMPORT_BYTES = 512 * 1024 * 1024


@dataclass
class ImportedRun:
    header: RunHeader
    events: list[Event]
    #: What the source lacked or what had to be reconstructed (shown to the user, never hidden).
    warnings: list[str] = field(default_factory=list)
    #: What the source held that the run does not, by name with a reason: written into the run header's
    #: ``metadata.not_imported`` (``inspect`` shows it) and into the warnings, here and only here.
    losses: Losses | None = None

    def __post_init__(self) -> None:
        if self.losses is not None and self.losses.items:
            self.losses.stamp(self.header)
            self.warnings = [*self.warnings, *("not imported: " + line for line in self.losses.as_list())]


def read_import_text(path: Path) -> str:
    """An import file's text (UTF-8, a BOM dropped), refused with a one-line error when unreadable or over
    ``MAX_IMPORT_BYTES``."""
    try:
        if path.stat().st_size > MAX_IMPORT_BYTES:
            raise BadInput(f"{path}: too large to import (limit {MAX_IMPORT_BYTES} bytes)")
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {path} as UTF-8 text: {exc}") from exc


def read_json_documents(path: Path, expected: str) -> list[tuple[str, Any]]:
    """An import file as one JSON document, else as JSON lines: ``(where, document)`` pairs, ``where``
    naming the file (and line) for errors. ``expected`` says what an empty file should have held."""
    text = read_import_text(path)
    if not text.strip():
        raise BadInput(f"{path.name}: empty file (expected {expected})")
    try:
        return [(path.name, json.loads(text))]
    except (ValueError, RecursionError) as whole:
        lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
        if len(lines) < 2:
            raise BadInput(f"{path.name}: not valid JSON ({whole}); truncated?") from whole
    out = []
    for number, line in lines:
        try:
            out.append((f"{path.name}:{number}", json.loads(line)))
        except (ValueError, RecursionError) as exc:
            raise BadInput(f"{path.name}:{number}: not valid JSON ({exc}); truncated?") from exc
    return out
