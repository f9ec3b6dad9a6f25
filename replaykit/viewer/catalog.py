"""The runs list: one row per run in the store, filtered, sorted, and nested by lineage.

A row needs more than the header (status, steps, failing step), so each run is loaded once and cached
by its file's size and modification time: a run being recorded is re-read when it grows, the others
cost a ``stat``. A run whose file changed in the last ``RECORDING_WINDOW`` seconds and has no
``run_end`` yet is shown as recording (the page then refreshes itself).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaykit.core.errors import ReplaykitError
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore

RECORDING_WINDOW = 60.0
SORT_KEYS = ("created", "run", "framework", "model", "status", "steps", "duration", "health")


@dataclass
class RunRow:
    run_id: str
    created_at: str
    framework: str
    model: str | None
    title: str | None
    status: str
    steps: int
    duration: float
    failing_step: int | None
    tags: list[str]
    parent_run_id: str | None
    relation: str | None
    recording: bool
    health: float | None = None
    error: str | None = None
    children: list[RunRow] = field(default_factory=list)
    depth: int = 0


def _health(run: Run) -> float | None:
    """The run's health score, 0-100 (``replaykit.core.analysis.health``: the same score as ``inspect`` and
    ``stats``; the cost part is left out here, a list of runs must stay quick)."""
    from replaykit.core.analysis.health import run_health

    try:
        return float(run_health(run, with_cost=False).score)
    except Exception:  # a score is an extra column, never a reason to hide the run
        return None


class Catalog:
    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._cache: dict[Path, tuple[tuple[int, int], RunRow]] = {}
        self._lock = threading.Lock()

    def _row(self, path: Path, run_id: str) -> RunRow | None:
        try:
            info = path.stat()
        except OSError:
            return None
        stamp = (info.st_size, info.st_mtime_ns)
        with self._lock:
            cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp:
            row = cached[1]
        else:
            row = self._load(path, run_id)
            with self._lock:
                self._cache[path] = (stamp, row)
        recent = time.time() - info.st_mtime < RECORDING_WINDOW
        # A branch is written whole and never gets a run_end: "incomplete" there is not "recording".
        row.recording = recent and row.status == "incomplete" and row.relation != "branch"
        return row

    @staticmethod
    def _load(path: Path, run_id: str) -> RunRow:
        try:
            run = Run.load(path)
        except (ReplaykitError, OSError, ValueError) as exc:
            return RunRow(run_id, "", "?", None, None, "unreadable", 0, 0.0, None, [], None, None, False,
                          error=str(exc)[:200])
        header = run.header
        lineage = header.lineage
        return RunRow(
            run_id=run.run_id, created_at=header.created_at, framework=header.source.framework,
            model=run.model, title=header.title, status=run.status, steps=len(run.steps),
            duration=run.duration, failing_step=run.failing_step, tags=list(header.tags),
            parent_run_id=lineage.parent_run_id if lineage else None,
            relation=lineage.relation if lineage else None, recording=False, health=_health(run),
        )

    def rows(self) -> list[RunRow]:
        out = []
        for summary in self.store.iter_summaries():
            row = self._row(summary.path, summary.run_id)
            if row is not None:
                out.append(row)
        return out


@dataclass
class Query:
    q: str = ""
    framework: str = ""
    model: str = ""
    status: str = ""
    tag: str = ""
    since: str = ""  # YYYY-MM-DD, inclusive
    until: str = ""  # YYYY-MM-DD, inclusive
    min_health: str = ""
    sort: str = "created"
    desc: bool = True

    @classmethod
    def from_params(cls, params: Any) -> Query:
        sort = params.get("sort", "created")
        return cls(
            q=params.get("q", "").strip(), framework=params.get("framework", ""), model=params.get("model", ""),
            status=params.get("status", ""), tag=params.get("tag", ""), since=params.get("since", ""),
            until=params.get("until", ""), min_health=params.get("min_health", ""),
            sort=sort if sort in SORT_KEYS else "created", desc=params.get("order", "desc") != "asc",
        )

    def matches(self, row: RunRow) -> bool:
        if self.q:
            needle = self.q.lower()
            hay = " ".join(str(x) for x in (row.run_id, row.title or "", row.model or "", " ".join(row.tags)))
            if needle not in hay.lower():
                return False
        if self.framework and row.framework != self.framework:
            return False
        if self.model and row.model != self.model:
            return False
        if self.status and row.status != self.status and not (self.status == "failing" and row.failing_step is not None):
            return False
        if self.tag and self.tag not in row.tags:
            return False
        day = row.created_at[:10]
        if self.since and day < self.since:
            return False
        if self.until and day > self.until:
            return False
        if self.min_health:
            try:
                floor = float(self.min_health)
            except ValueError:
                floor = None
            if floor is not None and (row.health is None or row.health < floor):
                return False
        return True

    def key(self, row: RunRow) -> Any:
        return {
            "created": row.created_at, "run": row.run_id, "framework": row.framework, "model": row.model or "",
            "status": row.status, "steps": row.steps, "duration": row.duration,
            "health": -1.0 if row.health is None else row.health,
        }[self.sort]


def lineage_tree(rows: list[RunRow], query: Query) -> list[RunRow]:
    """Matching rows in display order: each root (sorted), then its branches and plays under it,
    depth-first, siblings sorted the same way. A run whose parent is not shown is a root."""
    shown = [r for r in rows if query.matches(r)]
    by_id = {r.run_id: r for r in shown}
    for row in shown:
        row.children = []
    roots = []
    for row in shown:
        parent = by_id.get(row.parent_run_id or "")
        if parent is not None and parent is not row:
            parent.children.append(row)
        else:
            roots.append(row)
    ordered: list[RunRow] = []
    seen: set[str] = set()

    def visit(row: RunRow, depth: int) -> None:
        if row.run_id in seen:  # a lineage cycle in hand-edited files must not loop
            return
        seen.add(row.run_id)
        row.depth = depth
        ordered.append(row)
        for child in sorted(row.children, key=query.key, reverse=query.desc):
            visit(child, depth + 1)

    for root in sorted(roots, key=query.key, reverse=query.desc):
        visit(root, 0)
    return ordered
