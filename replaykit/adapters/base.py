"""What every input adapter produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from replaykit.core.errors import BadInput
from replaykit.core.trace.ir import Event, RunHeader

#: the largest file an importer reads whole
MAX_IMPORT_BYTES = 512 * 1024 * 1024


@dataclass
class ImportedRun:
    header: RunHeader
    events: list[Event]
    #: What the source lacked or what had to be reconstructed (shown to the user, never hidden).
    warnings: list[str] = field(default_factory=list)


def read_import_text(path: Path) -> str:
    """An import file's text (UTF-8, a BOM dropped), refused with a one-line error when unreadable or over
    ``MAX_IMPORT_BYTES``."""
    try:
        if path.stat().st_size > MAX_IMPORT_BYTES:
            raise BadInput(f"{path}: too large to import (limit {MAX_IMPORT_BYTES} bytes)")
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {path} as UTF-8 text: {exc}") from exc
