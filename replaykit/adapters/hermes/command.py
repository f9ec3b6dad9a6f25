"""The in-session ``/replaykit`` slash command: see recorded runs without leaving Hermes."""

from __future__ import annotations

import shlex
from typing import Any

USAGE = "usage: /replaykit runs | /replaykit inspect RUN (run id; 'last' for the newest)"


def _store() -> Any:
    from replaykit.adapters.hermes.home import hermes_home, resolve_store_root
    from replaykit.core.trace.store import RunStore

    return RunStore(resolve_store_root(hermes_home()))


def handle_command(raw_args: str = "", store: Any = None) -> str:
    """Handler for ``/replaykit ...``; returns text for Hermes to show. Never raises."""
    try:
        args = shlex.split(raw_args or "")
    except ValueError as exc:
        return f"replaykit: {exc}. {USAGE}"
    store = store if store is not None else _store()
    try:
        if not args or args[0] in ("runs", "list"):
            return _runs(store)
        if args[0] == "inspect" and len(args) == 2:
            return _inspect(store, args[1])
        return USAGE
    except Exception as exc:  # a bad run id or a torn file must not break the session
        return f"replaykit: error: {exc}"


def _runs(store: Any) -> str:
    rows = sorted(store.iter_summaries(), key=lambda s: s.created_at)
    if not rows:
        return f"replaykit: no recorded runs in {store.root}"
    lines = [f"replaykit runs in {store.root}:"]
    for s in rows[-30:]:
        parent = f"  <- {s.relation} of {s.parent_run_id}" if s.parent_run_id else ""
        lines.append(f"  {s.run_id}  {s.created_at[:19]}  {s.model or '?'}  {s.size_bytes} B{parent}")
    return "\n".join(lines)


def _inspect(store: Any, ref: str) -> str:
    from replaykit.core.analysis.timeline import timeline_rows

    if ref == "last":
        rows = sorted(store.iter_summaries(), key=lambda s: s.created_at)
        if not rows:
            return "replaykit: no recorded runs"
        ref = rows[-1].run_id
    run = store.load(ref)
    lines = [f"run {run.run_id}  model {run.model or '?'}  status {run.status}  steps {len(run.steps)}"]
    for row in timeline_rows(run, include_bookkeeping=False):
        mark = "!" if row["failing"] else " "
        step = "" if row["step"] is None else row["step"]
        lines.append(f"{mark} {step!s:>4} {row['kind']:<10} {str(row['summary'])[:100]}")
    return "\n".join(lines)
