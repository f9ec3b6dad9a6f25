"""Which runs an eval plays: RUN arguments or ``--all`` (original recordings only), narrowed by ``--filter``.

``--all`` reads the store through the corpus sources (``core.corpus``: one fixed order, redacted copies of
a present original dropped) and keeps the runs that are recordings: no lineage, or a subagent's run,
an import, a redacted copy (``RECORDED_RELATIONS``). A branch, a play, a replay and an earlier eval's candidate plays (lineage ``play``, tag ``CANDIDATE_TAG``)
are derived runs and are left out.

``--filter EXPR``: conditions joined by ``,`` (all must hold), each ``KEY OP VALUE``:

- ``model``, ``framework``, ``tag``, ``status``: ``=`` / ``!=`` with shell-style wildcards (``model=gpt-4o*``);
  ``tag`` holds when any tag matches.
- ``health``: ``= != < <= > >=`` against the health score (0-100, ``core.health``).
- ``date``: ``= != < <= > >=`` against the run's creation date (``YYYY-MM-DD``, or a longer ISO prefix).
"""

from __future__ import annotations

import fnmatch
import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaykit.core.corpus import corpus_sources
from replaykit.core.errors import BadInput
from replaykit.core.trace.store import MAX_LINE_BYTES, RunStore

#: The tag every candidate play of an eval carries (``--all`` and training exports can leave them out).
CANDIDATE_TAG = "replaykit:eval-candidate"

#: Lineages that are still recordings: a subagent's own run, an import, a redacted copy. Branches, replays,
#: plays and copies are runs replaykit derived from another.
RECORDED_RELATIONS = ("subagent", "import", "redaction")

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "<=": operator.le, ">=": operator.ge, "!=": operator.ne, "=": operator.eq, "<": operator.lt, ">": operator.gt,
}
_TEXT_KEYS = ("model", "framework", "tag", "status")
_ORDERED_KEYS = ("health", "date")
_CONDITION = re.compile(r"^\s*([a-z]+)\s*(<=|>=|!=|=|<|>)\s*(.*?)\s*$")


@dataclass(frozen=True)
class Condition:
    key: str
    op: str
    value: str

    def holds(self, facts: dict[str, Any]) -> bool:
        if self.key in _TEXT_KEYS:
            values = facts["tags"] if self.key == "tag" else [facts[self.key] or ""]
            hit = any(fnmatch.fnmatchcase(str(v), self.value) for v in values)
            return hit if self.op == "=" else not hit
        if self.key == "health":
            return _OPS[self.op](facts["health"](), float(self.value))
        created = str(facts["date"] or "")[: len(self.value)]
        return _OPS[self.op](created, self.value)


def parse_filter(expr: str | None) -> list[Condition]:
    """``--filter`` text -> conditions; a malformed one is bad input (exit 2)."""
    if expr is None:
        return []
    conditions = []
    for piece in expr.split(","):
        if not piece.strip():
            continue
        match = _CONDITION.match(piece)
        if match is None:
            raise BadInput(f"--filter: cannot read {piece.strip()!r}; write KEY=VALUE, KEY!=VALUE or KEY<VALUE, "
                           f"KEY one of {', '.join(_TEXT_KEYS + _ORDERED_KEYS)}")
        key, op, value = match.groups()
        if key not in _TEXT_KEYS + _ORDERED_KEYS:
            raise BadInput(f"--filter: unknown key {key!r}; use one of {', '.join(_TEXT_KEYS + _ORDERED_KEYS)}")
        if key in _TEXT_KEYS and op not in ("=", "!="):
            raise BadInput(f"--filter: {key} takes = or !=, not {op}")
        if not value:
            raise BadInput(f"--filter: {key}{op} needs a value")
        if key == "health":
            try:
                float(value)
            except ValueError:
                raise BadInput(f"--filter: health compares with a number, not {value!r}") from None
        conditions.append(Condition(key, op, value))
    if not conditions:
        raise BadInput("--filter is empty")
    return conditions


def _header(path: Path) -> dict[str, Any]:
    with open(path, "rb") as handle:
        header = json.loads(handle.readline(MAX_LINE_BYTES))
    return header if isinstance(header, dict) else {}


def is_original(header: dict[str, Any]) -> bool:
    """A recording (no lineage, or a redacted copy of one), not a run replaykit derived from another."""
    lineage = header.get("lineage")
    if CANDIDATE_TAG in (header.get("tags") or []):
        return False
    return not isinstance(lineage, dict) or lineage.get("relation") in RECORDED_RELATIONS


def _facts(path: Path, header: dict[str, Any]) -> dict[str, Any]:
    cache: list[int] = []

    def health() -> int:
        if not cache:
            from replaykit.core.analysis.health import run_health
            from replaykit.core.trace.run import Run

            cache.append(run_health(Run.load(path), with_cost=False).score)
        return cache[0]

    source = header.get("source") if isinstance(header.get("source"), dict) else {}
    return {"model": header.get("model"), "framework": (source or {}).get("framework"),
            "tags": list(header.get("tags") or []), "status": None, "date": header.get("created_at"),
            "health": health, "path": path}


def _status(path: Path) -> str:
    from replaykit.core.trace.run import Run

    return str(Run.load(path).status)


def select_runs(store: RunStore, refs: list[str], *, all_runs: bool, filter_expr: str | None = None) -> list[Path]:
    """The ordered trace files an eval plays; a selection that ends empty is bad input (exit 2)."""
    conditions = parse_filter(filter_expr)
    paths = corpus_sources(store, refs, all_runs=all_runs)
    chosen: list[Path] = []
    for path in paths:
        try:
            header = _header(path)
        except (OSError, ValueError):
            chosen.append(path)  # unreadable: the worker reports it damaged rather than it vanishing here
            continue
        if all_runs and not is_original(header):
            continue
        facts = _facts(path, header)
        if any(c.key == "status" for c in conditions):
            facts["status"] = _status(path)
        if all(c.holds(facts) for c in conditions):
            chosen.append(path)
    if not chosen:
        what = f"--filter {filter_expr!r}" if filter_expr else "--all (no original recordings in the store)"
        raise BadInput(f"no runs to evaluate: {what} selects nothing")
    return chosen
