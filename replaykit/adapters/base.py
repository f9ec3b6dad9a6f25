"""What every input adapter produces."""

from __future__ import annotations

from dataclasses import dataclass, field

from replaykit.core.ir import Event, RunHeader


@dataclass
class ImportedRun:
    header: RunHeader
    events: list[Event]
    #: What the source lacked or what had to be reconstructed (shown to the user, never hidden).
    warnings: list[str] = field(default_factory=list)
