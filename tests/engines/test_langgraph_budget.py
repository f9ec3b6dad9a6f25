"""replaykit play --engine langgraph under a model that never stops asking for tools: the core iteration
budget ends each turn as in the openai engine (grace call, same requests, same status and exit code),
and LangGraph's recursion limit, if ever reached, is a one-line error with the partial run kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("openai")

from replaykit.core.analysis.health import run_health
from replaykit.core.errors import ReplaykitError
from replaykit.core.replay.play import PlayOptions
from replaykit.core.replay.resilience import GRACE_PROMPT
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from replaykit.testing.engine_runs import record_sample_run
from replaykit.testing.script import Reply, ScriptRequest, ToolCall
from replaykit.testing.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]


def _always_a_tool(req: ScriptRequest) -> Reply:
    """A model that asks for a tool on every call, even when no tool is offered (the grace call)."""
    return Reply(text=f"call {req.index}", tool_calls=(ToolCall("read_file", {"path": f"f{req.index}"}),))


def _play(store: RunStore, engine: str, max_iterations: int, **extra: object) -> tuple[object, list[dict]]:
    run = store.load("src")
    with ScriptedServer(_always_a_tool) as srv:
        options = PlayOptions(base_url=srv.base_url, model="m", store=store, cut=0, max_iterations=max_iterations,
                              extra=dict(extra))
        try:
            result = play(run, engine, options)
        finally:
            bodies = [r.body for r in srv.llm_requests]
    return result, bodies


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "store")
    record_sample_run(store, "src")
    return store


@pytest.mark.parametrize("engine", ["openai", "pydantic-ai", "langgraph"])
def test_budget_ends_each_turn_as_every_engine_does(store: RunStore, engine: str) -> None:
    if engine == "pydantic-ai":
        pytest.importorskip("pydantic_ai")
    turns = len(store.load("src").user_turns())
    assert turns >= 2  # each turn gets a fresh budget
    result, bodies = _play(store, engine, 2)
    assert result.status == "completed", result.error  # type: ignore[attr-defined]
    # Per turn: two calls offering tools, then the grace call without tools, with the grace prompt.
    assert [bool(b.get("tools")) for b in bodies] == [True, True, False] * turns
    graces = [b for b in bodies if not b.get("tools")]
    assert all(GRACE_PROMPT in json.dumps(b["messages"][-1]) for b in graces)
    assert result.counters.to_json()["live_tool_steps"] == 2 * turns  # type: ignore[attr-defined]
    played = store.load(result.run_id)  # type: ignore[attr-defined]
    ends = [e for e in played.events if e.kind == "turn_end"]
    assert [e.reason for e in ends] == ["iteration budget of 2 reached: one grace call"] * turns
    # The trace keeps the grace answer as the model gave it (it asked for a tool); the engine ended the turn.
    grace_calls = [e for e in played.llm_calls() if not played.request_tools(e.request)]
    assert len(grace_calls) == turns and all(e.response.message.tool_calls for e in grace_calls)
    assert played.events[-1].kind == "run_end" and played.events[-1].status == "completed"
    # The recorded reason is what the health score reads: the play is flagged as ending on the budget.
    assert "budget_exhausted" in [r.code for r in run_health(played, with_cost=False).reasons]


@pytest.mark.parametrize("engine", ["openai", "pydantic-ai", "langgraph"])
def test_budget_counts_live_calls_only(store: RunStore, engine: str) -> None:
    """A served prefix is the record's: with a budget of 1 and the cut after two recorded model calls of
    the turn, both are still served (no grace call replacing a recorded one, no desync)."""
    if engine == "pydantic-ai":
        pytest.importorskip("pydantic_ai")
    run = store.load("src")
    cut = [i for i, s in enumerate(run.steps) if s.kind == "llm"][1] + 1
    with ScriptedServer(lambda req: Reply(text="live")) as srv:
        result = play(run, engine, PlayOptions(base_url=srv.base_url, model="m", store=store, cut=cut,
                                               max_iterations=1))
        offered = [bool(r.body.get("tools")) for r in srv.llm_requests]
    counters = result.counters.to_json()
    assert result.status == "completed", result.error
    assert counters["served_llm_steps"] == 2 and counters["desyncs"] == 0
    assert offered and offered[0]  # the first live call is within the budget: tools offered


def test_recursion_limit_is_a_one_line_error_and_the_partial_run_is_kept(store: RunStore) -> None:
    with pytest.raises(ReplaykitError) as caught:
        _play(store, "langgraph", 50, recursion_limit=5)
    message = str(caught.value)
    assert "\n" not in message and "recursion limit of 5" in message and "GraphRecursionError" not in message
    run_id = message.rsplit("partial run saved as ", 1)[1]
    partial = store.load(run_id)
    assert partial.events[-1].kind == "run_end" and partial.events[-1].status == "failed"
    assert len(partial.llm_calls()) >= 2  # the live steps before the limit were kept


@pytest.mark.parametrize("engine", ["openai", "langgraph"])
def test_cli_exit_code_under_the_budget(store: RunStore, engine: str) -> None:
    with ScriptedServer(_always_a_tool) as srv:
        done = subprocess.run(
            [sys.executable, "-m", "replaykit", "play", "src", "--engine", engine, "--base-url", srv.base_url,
             "--model", "m", "--store", str(store.root), "--at", "0", "--max-iterations", "3", "--json"],
            capture_output=True, text=True, timeout=120, env={**_env(), "PYTHONPATH": str(ROOT)})
        requests = len(srv.llm_requests)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "completed" and doc["run_id"] and doc["counters"]["provider_calls"] == requests
    assert requests == 4 * len(store.load("src").user_turns())


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)
