"""Shared checks for recordings of real Hermes runs."""

from __future__ import annotations

from pathlib import Path

from replaykit.adapters.hermes.reconstruct import attempt_bodies
from replaykit.core.trace.run import Run


def runs_in(store: Path) -> list[Run]:
    return [Run.load(p) for p in sorted(store.glob("*.jsonl"))]


def only_run(store: Path) -> Run:
    runs = runs_in(store)
    assert len(runs) == 1, [r.run_id for r in runs]
    return runs[0]


def assert_requests_match(run: Run, server_bodies: list[dict]) -> None:
    """Every request the server received equals the request replaykit reconstructs for that call."""
    rebuilt = attempt_bodies(run)
    assert len(rebuilt) == len(server_bodies), (len(rebuilt), len(server_bodies))
    for i, (mine, theirs) in enumerate(zip(rebuilt, server_bodies, strict=True)):
        assert mine == theirs, f"request {i} differs in keys {[k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k)]}"


def assert_tool_calls_match(run: Run, server_replies: list) -> None:
    """Tool calls recorded (ids, names, order) equal those the server's replies asked for, and each
    was answered by a tool_call event carrying the same id."""
    asked = [c for llm in run.llm_calls() for c in llm.response.message.tool_calls]
    served = [(tc.name) for r in server_replies if r is not None for tc in r.tool_calls]
    assert [c.name for c in asked] == served
    executed = {e.call_id: e for e in run.tool_calls()}
    assert set(executed) == {c.id for c in asked}
    for c in asked:
        assert executed[c.id].name == c.name
        assert executed[c.id].llm_call_id is not None
