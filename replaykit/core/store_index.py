"""Listing a run store without loading pydantic: what ``replaykit runs`` needs, stdlib only.

The store's naming rules (run ids, the file suffix, the default root) live here so the listing and the
full store (``core/store.py``, which re-exports them) share one definition. A summary reads only each
file's first line, so listing a store costs the same whatever the runs' lengths.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_NAME = "replaykit.trace"
SCHEMA_VERSION = 2
#: Every schema version this build can read (older ones are migrated on load).
READABLE_SCHEMA_VERSIONS = frozenset({1, 2})

RUN_ID_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
TRACE_SUFFIX = ".jsonl"
# A single trace line above this size is refused: a hostile file cannot make the reader allocate
# unbounded memory for one line.
MAX_LINE_BYTES = 256 * 1024 * 1024


def default_store_root(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get("REPLAYKIT_HOME"):
        return Path(env["REPLAYKIT_HOME"]).expanduser()
    if env.get("HERMES_HOME"):
        return Path(env["HERMES_HOME"]).expanduser() / "replaykit"
    return Path("~/.replaykit").expanduser()


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    path: Path
    created_at: str
    framework: str
    model: str | None
    title: str | None
    parent_run_id: str | None
    relation: str | None
    size_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "path": str(self.path),
            "created_at": self.created_at,
            "framework": self.framework,
            "model": self.model,
            "title": self.title,
            "parent_run_id": self.parent_run_id,
            "relation": self.relation,
            "size_bytes": self.size_bytes,
        }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def summary_of(path: Path) -> RunSummary | None:
    """The summary of one run file from its header line; None when it is not a readable run."""
    try:
        with open(path, "rb") as handle:
            raw = json.loads(handle.readline(MAX_LINE_BYTES))
        size = path.stat().st_size
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or raw.get("kind") != "run" or raw.get("schema_name", SCHEMA_NAME) != SCHEMA_NAME:
        return None
    source, lineage = raw.get("source"), raw.get("lineage")
    run_id, created_at = raw.get("run_id"), raw.get("created_at")
    if raw.get("schema_version") not in READABLE_SCHEMA_VERSIONS or not isinstance(source, dict) \
            or not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id) or not isinstance(created_at, str) \
            or not isinstance(source.get("framework"), str) or not isinstance(lineage, dict | None):
        return None
    lineage = lineage or {}
    return RunSummary(run_id=run_id, path=path, created_at=created_at, framework=source["framework"],
                      model=_text(raw.get("model")), title=_text(raw.get("title")),
                      parent_run_id=_text(lineage.get("parent_run_id")), relation=_text(lineage.get("relation")),
                      size_bytes=size)


def iter_summaries(root: Path) -> Iterator[RunSummary]:
    """Every readable run in the store directory ``root``, by file name."""
    if not root.is_dir():
        return
    for path in sorted(root.glob(f"*{TRACE_SUFFIX}")):
        run_id = path.name[: -len(TRACE_SUFFIX)]
        if not RUN_ID_RE.fullmatch(run_id) or not path.is_file():
            continue
        summary = summary_of(path)
        if summary is not None:
            yield summary
