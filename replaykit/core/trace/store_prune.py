"""Removing runs from the store: ``replaykit rm`` (named runs) and ``replaykit gc`` (selected runs).

Branches and plays pile up while debugging; these are the two ways to clear them without touching what
was recorded. The rules:

- a run is *derived* when its lineage says it was made from another run here (``DERIVED_RELATIONS``: a
  branch, a play or replay); everything else (a recording, an import, a redacted copy) is an
  *original*, kept by ``gc`` unless asked;
- a run's subagent runs (lineage ``subagent``) belong to it and go with it, never alone;
- ``rm`` refuses to remove a run that other runs derive from, unless those go too (``with_derived``):
  a branch whose parent is gone cannot be diffed against it or played;
- the selection is computed first and returned whole (``Plan``), so the command line can show it (a dry
  run) before anything is removed.

Header lines only (``store_index.iter_summaries``): fast on a store of thousands of runs.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from replaykit.core.errors import BadInput, RunNotFound
from replaykit.core.trace.store_index import DERIVED_RELATIONS, RunSummary, iter_summaries

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "": 86400}


def parse_duration(text: str) -> _dt.timedelta:
    """``30m``, ``12h``, ``7d``, ``2w`` (a bare number is days)."""
    match = _DURATION.match(text)
    if match is None:
        raise BadInput(f"--older-than {text!r}: give a number and a unit: 30m, 12h, 7d, 2w")
    return _dt.timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2)])


def is_derived(summary: RunSummary) -> bool:
    return summary.relation in DERIVED_RELATIONS


@dataclass
class Plan:
    """What a removal will remove (in store order) and, for each run kept back, why."""

    remove: list[RunSummary] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)

    @property
    def bytes(self) -> int:
        return sum(s.size_bytes for s in self.remove)

    def to_json(self) -> dict[str, object]:
        return {"remove": [{"run_id": s.run_id, "relation": s.relation, "parent_run_id": s.parent_run_id,
                            "created_at": s.created_at, "size_bytes": s.size_bytes} for s in self.remove],
                "runs": len(self.remove), "bytes": self.bytes, "kept": self.kept}


class _Store:
    def __init__(self, root: Path) -> None:
        self.runs = {s.run_id: s for s in iter_summaries(root)}
        self.children: dict[str, list[RunSummary]] = {}
        for s in self.runs.values():
            if s.parent_run_id is not None:
                self.children.setdefault(s.parent_run_id, []).append(s)

    def with_subagents(self, ids: Iterable[str]) -> set[str]:
        out: set[str] = set()
        todo = list(ids)
        while todo:
            run_id = todo.pop()
            if run_id in out:
                continue
            out.add(run_id)
            todo.extend(c.run_id for c in self.children.get(run_id, ()) if c.relation == "subagent")
        return out

    def descendants(self, run_id: str) -> set[str]:
        """Every run made from ``run_id``, transitively (branches of its branches, their plays...)."""
        out: set[str] = set()
        todo = [run_id]
        while todo:
            for child in self.children.get(todo.pop(), ()):
                if child.run_id not in out:
                    out.add(child.run_id)
                    todo.append(child.run_id)
        return out

    def plan(self, ids: set[str]) -> Plan:
        return Plan(remove=[self.runs[i] for i in sorted(ids, key=lambda i: (self.runs[i].created_at, i))])


def plan_rm(root: Path, run_ids: list[str], *, with_derived: bool = False) -> Plan:
    """The removal of the named runs (and their subagent runs; with ``with_derived`` every run made from
    them too). A named run others derive from is refused, naming them."""
    store = _Store(root)
    missing = [r for r in run_ids if r not in store.runs]
    if missing:
        raise RunNotFound(f"no run {missing[0]!r} in store {root}")
    chosen = store.with_subagents(run_ids)
    derived = {d for r in run_ids for d in store.descendants(r)} - chosen
    if derived and not with_derived:
        names = ", ".join(sorted(derived)[:3]) + (f" and {len(derived) - 3} more" if len(derived) > 3 else "")
        raise BadInput(f"other runs were made from {', '.join(run_ids)} ({names}); remove them too with "
                       "--with-derived, or name only the runs to remove")
    return store.plan(chosen | derived)


def plan_gc(root: Path, *, older_than: _dt.timedelta | None = None, lineage: str | None = None,
            originals: bool = False, now: _dt.datetime | None = None) -> Plan:
    """The runs ``gc`` removes: derived runs (branches, plays) older than ``older_than`` and, with
    ``lineage``, only those made from that run; with ``originals``, matching original recordings too
    (and then everything made from them, so nothing is left pointing at a removed parent)."""
    store = _Store(root)
    now = now or _dt.datetime.now(_dt.UTC)
    scope: set[str] | None = None
    if lineage is not None:
        if lineage not in store.runs:
            raise RunNotFound(f"no run {lineage!r} in store {root}")
        scope = store.descendants(lineage) | {lineage}
    plan_ids: set[str] = set()
    kept: dict[str, str] = {}
    for s in store.runs.values():
        if s.relation == "subagent" or (scope is not None and s.run_id not in scope):
            continue  # subagent runs go with their parent
        if older_than is not None and not _older(s, now - older_than):
            continue
        if not is_derived(s) and not originals:
            kept[s.run_id] = "original recording (pass --originals to remove originals too)"
            continue
        plan_ids.add(s.run_id)
        if not is_derived(s):
            plan_ids |= store.descendants(s.run_id)
    return Plan(remove=store.plan(store.with_subagents(plan_ids)).remove, kept=kept)


def _older(summary: RunSummary, cutoff: _dt.datetime) -> bool:
    try:
        created = _dt.datetime.fromisoformat(summary.created_at.replace("Z", "+00:00"))
    except ValueError:
        return False  # an unreadable date is never old enough to delete
    if created.tzinfo is None:
        created = created.replace(tzinfo=_dt.UTC)
    return created < cutoff


def remove(plan: Plan) -> int:
    """Remove the planned run files; how many were removed (a file already gone is not an error)."""
    removed = 0
    for s in plan.remove:
        try:
            s.path.unlink()
            removed += 1
        except FileNotFoundError:
            continue
    return removed
