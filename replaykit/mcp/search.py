"""Which runs a ``list_runs`` query selects.

``text`` is looked for (case-insensitively) first in what the list shows (run id, title, tags, model,
framework, tools used) and then in the whole record: every message, tool argument, tool result and
error, as the file holds them (each once: requests are stored as deltas). The file is searched as JSON
text, so the needle is matched both as typed and in its JSON-escaped form (quotes, backslashes,
non-ASCII characters as ``\\u`` escapes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from replaykit.core.errors import BadInput
from replaykit.mcp.runs import RunFacts

#: ``status`` values besides the recorded ones (completed, failed, interrupted, incomplete).
FAILING = "failing"


@dataclass(frozen=True)
class RunQuery:
    text: str | None = None
    tool: str | None = None
    model: str | None = None
    status: str | None = None
    framework: str | None = None
    min_health: int | None = None
    max_health: int | None = None

    def __post_init__(self) -> None:
        for name in ("min_health", "max_health"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 100:
                raise BadInput(f"{name} must be between 0 and 100")

    def as_dict(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    def matches(self, row: RunFacts, path: Path) -> str | None:
        """Where the run matched ("list" or "record"; "all" with no text), or None when it does not."""
        if self.tool is not None and self.tool not in row.tools:
            return None
        if self.model is not None and (row.model or "").lower() != self.model.lower():
            return None
        if self.framework is not None and row.framework != self.framework:
            return None
        if self.status is not None:
            wanted = self.status.lower()
            if wanted == FAILING:
                if row.failing_step is None and row.status != "failed":
                    return None
            elif row.status != wanted:
                return None
        if self.min_health is not None and (row.health is None or row.health < self.min_health):
            return None
        if self.max_health is not None and (row.health is None or row.health > self.max_health):
            return None
        if not self.text:
            return "all"
        needle = self.text.lower()
        shown = " ".join([row.run_id, row.title or "", row.model or "", row.framework, *row.tags, *row.tools])
        if needle in shown.lower():
            return "list"
        return "record" if _in_file(path, needle) else None


def _in_file(path: Path, needle: str) -> bool:
    forms = {needle, json.dumps(needle)[1:-1], json.dumps(needle, ensure_ascii=False)[1:-1]}
    try:
        data = path.read_bytes().decode("utf-8", "replace").lower()
    except OSError:
        return False
    return any(form in data for form in forms)
