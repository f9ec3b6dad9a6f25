"""The runs list: one row per run in the store, filtered, sorted, nested by lineage, and shown a page at
a time.

A row starts from the run's header line (``core/trace/store_index.summary_of``: id, date, framework,
model, title, lineage), which is all the default order, the lineage nesting and most filters need; its
status, steps, duration, failing step and health come from one streaming ``inspect`` pass over the file
(``core/analysis/inspect_view.inspect_file``, no pydantic, no rows kept), computed only for the rows a page
shows, or for every row when the order or a filter asks for them. Both are cached by the file's size and
modification time: a run being recorded is re-read when it grows, the others cost a ``stat``. A run whose
file changed in the last ``RECORDING_WINDOW`` seconds and has no ``run_end`` yet is shown as recording
(the page then refreshes itself).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaykit.core.errors import ReplaykitError
from replaykit.core.trace.store import RunStore
from replaykit.core.trace.store_index import RunSummary, iter_run_files, summary_of
from replaykit.viewer.run_views import check_page

RECORDING_WINDOW = 60.0
SORT_KEYS = ("created", "run", "framework", "model", "status", "steps", "duration", "health")
#: Orders and filters that need more than the header line (the streaming pass of every matching run).
STATS_SORTS = frozenset({"status", "steps", "duration", "health"})
PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
#: How long a run page may reuse the store's last listing for its branches and plays (seconds).
LINEAGE_MAX_AGE = 5.0


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
    counted: bool = False  # status, steps, duration, failing step and health are known
    path: Path | None = None
    mtime: float = 0.0


def _header_row(summary: RunSummary, tags: list[str], mtime: float) -> RunRow:
    return RunRow(run_id=summary.run_id, created_at=summary.created_at, framework=summary.framework,
                  model=summary.model, title=summary.title, status="", steps=0, duration=0.0, failing_step=None,
                  tags=tags, parent_run_id=summary.parent_run_id, relation=summary.relation, recording=False,
                  path=summary.path, mtime=mtime)


def _count(row: RunRow) -> None:
    """Fill in what the header does not say, from one streaming pass over the run (no rows kept)."""
    from replaykit.core.analysis.inspect_view import inspect_file

    assert row.path is not None
    try:
        view = inspect_file(row.path, with_cost=False, window=(0, 0))
    except (ReplaykitError, OSError, ValueError) as exc:
        row.status, row.error = "unreadable", str(exc)[:200]
    else:
        info = view.summary
        row.model = info["model"]
        row.status, row.steps, row.duration = info["status"], info["steps"], info["duration"]
        # The health score of ``core/analysis/health.py`` (the one ``inspect`` and ``stats`` show); the cost
        # part is left out here: a list of runs must stay quick.
        row.failing_step, row.health = info["failing_step"], float(view.health.score)
    row.counted = True


def _mark_recording(rows: list[RunRow]) -> None:
    """Whether each (counted) run is being recorded now: its file changed in the last minute and it has no
    run_end. A branch is written whole and never gets a run_end: "incomplete" there is not "recording"."""
    now = time.time()
    for row in rows:
        row.recording = (row.status == "incomplete" and row.relation != "branch"
                         and now - row.mtime < RECORDING_WINDOW)


@dataclass
class Listing:
    """One page of the runs list."""

    rows: list[RunRow]  # in display order, each root followed by its branches and plays
    page: int
    pages: int
    limit: int
    roots: int  # matching top-level rows, over all pages
    total: int  # runs in the store
    entries: list[RunRow] = field(default_factory=list)  # every run of the store (header-level at least)


class Catalog:
    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._cache: dict[str, tuple[tuple[int, int], RunRow]] = {}
        self._lock = threading.Lock()
        self._version = 0  # moves whenever a run appears, changes or goes
        self._groups: dict[Any, tuple[int, list[list[RunRow]]]] = {}  # the last orders, while nothing moved
        self._lineage: tuple[int, float, dict[str, list[RunRow]]] | None = None  # (dir mtime, when, by parent)

    def entries(self) -> list[RunRow]:
        """Every readable run of the store as a header-level row (``counted`` False until ``count``)."""
        out = []
        cache = self._cache
        seen: set[str] = set()
        stamp_before, listed_at = self._dir_stamp(), time.monotonic()  # before: a run added meanwhile is seen next time
        for _run_id, path, info in iter_run_files(self.store.root):
            stamp = (info.st_size, info.st_mtime_ns)
            seen.add(path)
            cached = cache.get(path)
            if cached is not None and cached[0] == stamp:
                out.append(cached[1])
                continue
            summary = summary_of(Path(path), info.st_size)
            if summary is None:
                continue
            row = _header_row(summary, list(summary.tags), info.st_mtime)
            with self._lock:
                cache[path] = (stamp, row)
                self._version += 1
            out.append(row)
        if len(seen) != len(cache):
            with self._lock:  # runs deleted since: forget them
                for gone in set(cache) - seen:
                    del cache[gone]
                self._version += 1
        by_parent: dict[str, list[RunRow]] = {}
        for row in out:
            if row.parent_run_id is not None:
                by_parent.setdefault(row.parent_run_id, []).append(row)
        self._lineage = (stamp_before, listed_at, by_parent)
        return out

    def descendants(self, run_id: str) -> list[RunRow]:
        """The runs whose parent is ``run_id`` (its branches and plays), read from header rows.

        Listing the store costs a ``stat`` per run (0.15 s for 10,000), too much for every run page. The
        parent of a run is in its header line, which never changes, so the last listing's lineage (every
        ``entries`` call leaves one) is reused while the store's directory is unchanged (a run created or
        deleted changes it) and for at most ``LINEAGE_MAX_AGE`` seconds (a run file created empty gets its
        header without touching the directory)."""
        cached = self._lineage
        if cached is None or cached[0] != self._dir_stamp() or time.monotonic() - cached[1] > LINEAGE_MAX_AGE:
            self.entries()
            cached = self._lineage
        assert cached is not None
        return list(cached[2].get(run_id, ()))

    def _dir_stamp(self) -> int:
        try:
            return self.store.root.stat().st_mtime_ns
        except OSError:
            return -1

    def _ordered(self, rows: list[RunRow], query: Query) -> list[list[RunRow]]:
        """``lineage_groups``, kept for the last few queries while no run file appeared, changed or went
        (ordering 10,000 rows by lineage costs more than listing them). Counted columns only change when a
        file does, and an order on them counts every row first."""
        key = tuple(sorted(vars(query).items()))
        with self._lock:
            cached = self._groups.get(key)
            version = self._version
        if cached is not None and cached[0] == version:
            return cached[1]
        groups = lineage_groups(rows, query)
        with self._lock:
            if len(self._groups) >= 8:
                self._groups.clear()
            self._groups[key] = (version, groups)
        return groups

    @staticmethod
    def count(rows: list[RunRow]) -> None:
        for row in rows:
            if not row.counted:
                _count(row)
        _mark_recording(rows)

    def rows(self) -> list[RunRow]:
        """Every row, counted (what an order or a filter on the counted columns needs)."""
        rows = self.entries()
        self.count(rows)
        return rows

    def page(self, query: Query, page: int = 1, limit: int = PAGE_SIZE) -> Listing:
        """Page ``page`` (from 1) of the matching runs, ``limit`` top-level runs a page, each with its
        branches and plays; only the rows shown are counted unless the query needs every one."""
        rows = self.entries()
        if query.needs_counts():
            self.count(rows)
        groups = self._ordered(rows, query)
        pages = check_page(page, len(groups), limit, "matching runs")
        shown = [row for group in groups[(page - 1) * limit: page * limit] for row in group]
        self.count(shown)
        return Listing(shown, page, pages, limit, len(groups), len(rows), rows)


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

    def needs_counts(self) -> bool:
        """Whether the order or a filter reads a counted column (status, steps, duration, health)."""
        return self.sort in STATS_SORTS or bool(self.status) or bool(self.min_health)

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
        return SORTS[self.sort](row)


#: The value each order sorts rows by (one function per order, chosen once per listing).
SORTS: dict[str, Callable[[RunRow], Any]] = {
    "created": lambda r: r.created_at, "run": lambda r: r.run_id, "framework": lambda r: r.framework,
    "model": lambda r: r.model or "", "status": lambda r: r.status, "steps": lambda r: r.steps,
    "duration": lambda r: r.duration, "health": lambda r: -1.0 if r.health is None else r.health,
}


def lineage_tree(rows: list[RunRow], query: Query) -> list[RunRow]:
    """Matching rows in display order: each root (sorted), then its branches and plays under it,
    depth-first, siblings sorted the same way. A run whose parent is not shown is a root."""
    return [row for group in lineage_groups(rows, query) for row in group]


def lineage_groups(rows: list[RunRow], query: Query) -> list[list[RunRow]]:
    """``lineage_tree`` as one list per root (the root, then its descendants): the unit of a page."""
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
    groups: list[list[RunRow]] = []
    seen: set[str] = set()
    key, desc = SORTS[query.sort], query.desc

    def visit(row: RunRow, depth: int, ordered: list[RunRow]) -> None:
        if row.run_id in seen:  # a lineage cycle in hand-edited files must not loop
            return
        seen.add(row.run_id)
        row.depth = depth
        ordered.append(row)
        if row.children:
            for child in sorted(row.children, key=key, reverse=desc):
                visit(child, depth + 1, ordered)

    for root in sorted(roots, key=key, reverse=desc):
        group: list[RunRow] = []
        visit(root, 0, group)
        groups.append(group)
    return groups
