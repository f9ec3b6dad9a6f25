"""The store as the MCP server sees it: runs by id only, loaded once while unchanged, and a searchable list.

A client (a coding agent, steered by whatever text it has read) names runs by **id only**: never a path,
so no tool can be pointed at a file outside the store (``store_path`` validates the id and checks that
it resolves inside). Loaded runs are kept while their file's size and modification time are unchanged,
so one debugging session does not re-read the same run at every call; a run being recorded is re-read
when it grows.

The list's facts per run (status, steps, health, failing step, tools used) come from the streaming
``inspect`` pass (``core/analysis/inspect_view.py``), the same facts ``replaykit inspect`` and the viewer show.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaykit.core.errors import ReplaykitError, RunNotFound
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore

#: How many loaded runs are kept (a debugging session touches a handful: a run, a branch, a play).
RUN_CACHE = 8


class IdOnlyStore(RunStore):
    """The store as every MCP tool (and the core and engines they call) sees it: a run reference is an id
    of this store, never a path. A lineage's parent or a subagent's child named in a trace (untrusted
    text) then cannot lead a diff, a cost ledger or an export to a file outside the store."""

    def resolve(self, ref: str) -> Path:
        if not isinstance(ref, str) or not ref:
            raise RunNotFound("give a run id (see list_runs)")
        path = self.path_for(ref)  # InvalidRunId for anything but a plain id
        if not path.is_file():
            raise RunNotFound(f"no run {ref!r} in the store (list_runs shows the run ids)")
        return path


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


@dataclass
class RunFacts:
    """One row of the runs list, plus what a search looks at."""

    run_id: str
    created_at: str
    title: str | None
    framework: str
    model: str | None
    status: str
    steps: int
    duration: float
    health: int | None
    failing_step: int | None
    tags: list[str]
    tools: list[str]
    parent_run_id: str | None
    relation: str | None
    health_reasons: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "health_reasons"} | {
            "health_reasons": list(self.health_reasons)}


def _facts(path: Path, run_id: str) -> RunFacts:
    """``run_id``: the file's name in the store, the id every tool takes (a header may say otherwise)."""
    from replaykit.core.analysis.inspect_view import inspect_file
    from replaykit.core.trace.store_index import summary_of

    try:
        view = inspect_file(path, with_cost=False)
    except (ReplaykitError, OSError, ValueError) as exc:
        return RunFacts(run_id, "", None, "?", None, "unreadable", 0, 0.0, None, None, [], [], None, None,
                        error=" ".join(str(exc).split())[:300])
    info = view.summary
    summary = summary_of(path)
    lineage = info.get("lineage") or {}
    tools = sorted({row["tool"] for row in view.rows if row["kind"] == "tool_call"})
    return RunFacts(
        run_id=run_id, created_at=info["created_at"], title=summary.title if summary else None,
        framework=info["source"]["framework"], model=info["model"], status=info["status"], steps=info["steps"],
        duration=info["duration"], health=view.health.score, failing_step=info["failing_step"],
        tags=list(info["tags"]), tools=tools, parent_run_id=lineage.get("parent_run_id"),
        relation=lineage.get("relation"), health_reasons=[r.detail for r in view.health.reasons],
    )


class RunAccess:
    """Runs of one store, by id, cached while unchanged."""

    def __init__(self, store: RunStore) -> None:
        self.store = store if isinstance(store, IdOnlyStore) else IdOnlyStore(store.root)
        self._runs: OrderedDict[Path, tuple[tuple[int, int], Run]] = OrderedDict()
        self._facts: dict[Path, tuple[tuple[int, int], RunFacts]] = {}
        self._lock = threading.Lock()

    def path(self, run_id: str) -> Path:
        """The run's file; a clear error for an invalid id or a run not in the store."""
        path: Path = self.store.resolve(run_id)
        return path

    def load(self, run_id: str) -> Run:
        path = self.path(run_id)
        stamp = _stamp(path)
        with self._lock:
            cached = self._runs.get(path)
            if cached is not None and cached[0] == stamp:
                self._runs.move_to_end(path)
                return cached[1]
        run = Run.load(path)
        with self._lock:
            self._runs[path] = (stamp, run)
            while len(self._runs) > RUN_CACHE:
                self._runs.popitem(last=False)
        return run

    def load_child(self, run_id: str) -> Run:
        """Subagent runs for the interchange exporters: ids from the trace, so by id only, like the client's."""
        return self.load(run_id)

    def facts(self) -> list[RunFacts]:
        """Every run of the store, oldest first."""
        rows = []
        for summary in self.store.iter_summaries():
            try:
                stamp = _stamp(summary.path)
            except OSError:
                continue
            with self._lock:
                cached = self._facts.get(summary.path)
            if cached is not None and cached[0] == stamp:
                rows.append(cached[1])
                continue
            row = _facts(summary.path, summary.run_id)
            with self._lock:
                self._facts[summary.path] = (stamp, row)
            rows.append(row)
        rows.sort(key=lambda r: (r.created_at, r.run_id))
        return rows
