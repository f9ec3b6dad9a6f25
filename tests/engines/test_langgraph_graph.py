"""The in-memory LangGraph graph: deterministic replay, SQLite checkpoints, forks, Mermaid."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langgraph.checkpoint.sqlite")

from replaykit.core.trace.ir import Provenance, ToolCallEvent
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines.langgraph import graph as lg
from replaykit.testing.script import Reply, ScriptRequest, ToolCall
from replaykit.testing.scripted_server import ScriptedServer
from tests.exporters.lg_fixtures import BUILDERS, hermes_traces, weather_run


def _dump(messages: list[Any]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json", exclude_none=True) for m in messages]


def _runs(tmp_path: Path) -> list[Run]:
    store = RunStore(tmp_path / "store")
    runs = [store.load(build(store)) for build in BUILDERS.values()]
    runs += [Run.load(path) for path in hermes_traces()]
    return runs


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "store")


def test_replay_equals_the_original_on_every_fixture(tmp_path: Path) -> None:
    for run in _runs(tmp_path):
        result = lg.replay(run)
        assert result.messages == _dump(run.conversation()), run.run_id
        steps = run.steps
        assert result.counters["provider_calls"] == 0
        assert result.counters["tool_executions"] == 0
        assert result.counters["served_llm_steps"] == sum(1 for s in steps if s.kind == "llm")
        assert result.counters["served_tool_steps"] == sum(1 for s in steps if s.kind == "tool")
        served = sorted(e["step"] for e in result.log if e["provenance"] == "served")
        assert served == list(range(len(steps))), run.run_id


@pytest.mark.xfail(strict=True, reason="KNOWN GAP: the LangGraph graph serves a Hermes 0.22 batch as made and "
                   "never asks for the tool steps of its later entries (docs/hermes.md)")
def test_a_hermes_batch_recording_replays_whole() -> None:
    (path,) = hermes_traces(batches=True)
    run = Run.load(path)
    result = lg.replay(run)
    assert result.counters["served_tool_steps"] == sum(1 for s in run.steps if s.kind == "tool")


def test_graph_is_real_and_ids_are_deterministic(store: RunStore) -> None:
    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.graph.state import CompiledStateGraph

    run = store.load(BUILDERS["sample"](store))
    first = lg.build_replay_graph(run)
    assert isinstance(first.graph, CompiledStateGraph)
    assert set(first.graph.get_graph().nodes) == {"__start__", "model", "tools", "__end__"}
    a = first.drive()
    b = lg.build_replay_graph(run).drive()
    assert [m.id for m in a] == [f"rk-{i}" for i in range(len(a))]
    assert [(m.id, m.content, type(m)) for m in a] == [(m.id, m.content, type(m)) for m in b]
    assert any(isinstance(m, ToolMessage) and m.status == "error" for m in a)  # the recorded tool error
    assert sum(1 for m in a if isinstance(m, AIMessage) and m.tool_calls) == 3


def test_checkpoints_survive_a_reopen(store: RunStore, tmp_path: Path) -> None:
    run = store.load(BUILDERS["sample"](store))
    db = tmp_path / "cp.sqlite"
    result = lg.replay(run, checkpoint_db=db, thread_id="t1")
    assert oct(db.stat().st_mode & 0o777) == "0o600"
    # Every node run is a checkpoint: 5 model steps + 3 tool supersteps, plus the input checkpoints.
    assert result.checkpoints >= len(run.llm_calls()) + 3
    with sqlite3.connect(db) as conn:  # really on disk, in LangGraph's own tables
        rows = conn.execute("select count(*) from checkpoints where thread_id = 't1'").fetchone()[0]
    assert rows == result.checkpoints
    reopened = lg.checkpoint_messages(run, db, "t1")
    assert reopened == result.messages == _dump(run.conversation())
    with pytest.raises(lg.BadInput, match="already has checkpoints"):
        lg.replay(run, checkpoint_db=db, thread_id="t1")


def _edited_policy(req: ScriptRequest) -> Reply:
    """A model that reads the last tool result: it answers from what the tools said."""
    tool_results = [m for m in req.body["messages"] if m.get("role") == "tool"]
    return Reply(text="model saw: " + " | ".join(str(m.get("content")) for m in tool_results))


def test_fork_with_edited_tool_result_goes_live_and_is_recorded(store: RunStore, tmp_path: Path) -> None:
    run = store.load(weather_run(store))
    db = tmp_path / "fork.sqlite"
    with ScriptedServer(_edited_policy) as server:
        fork = lg.fork_run(run, step=1, target="result", value='{"temp_c": 5}', checkpoint_db=db,
                           store=store, live=lg.LiveEndpoint(base_url=server.base_url, model="m-live"))
        requests = [r for r in server.requests if r.api == "chat"]
    # One live model call, which saw the edited result (and not the recorded second round).
    assert len(requests) == 1
    sent = requests[0].body["messages"]
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 5}'} or \
        sent[-1]["content"] == '{"temp_c": 5}'
    assert fork.final_answer == 'model saw: {"temp_c": 5}'
    assert fork.counters["provider_calls"] == 1 and fork.counters["tool_executions"] == 0
    assert fork.fork_checkpoint_id and fork.parent_checkpoint_id and fork.fork_checkpoint_id != fork.parent_checkpoint_id
    # The fork is a new run with lineage; the parent file is untouched by it.
    assert fork.run_id is not None
    child = store.load(fork.run_id)
    lineage = child.header.lineage
    assert lineage is not None and lineage.relation == "branch" and lineage.parent_run_id == run.run_id
    assert lineage.parent_step == 1 and lineage.edit is not None and lineage.edit.target == "result"
    assert lineage.engine == "langgraph"
    kinds = [(s.kind, s.event.provenance) for s in child.steps]
    assert kinds == [("llm", Provenance.RECORDED), ("tool", Provenance.EDITED), ("llm", Provenance.LIVE)]
    edited = child.steps[1].event
    assert isinstance(edited, ToolCallEvent) and edited.result == '{"temp_c": 5}'
    assert child.final_answer == fork.final_answer
    # The recorded request of the live step is the fork's conversation, reconstructable exactly.
    assert _dump(child.request_messages(child.steps[2].event)) == fork.messages[:-1]
    # The original thread history still holds the recorded branch.
    assert lg.checkpoint_messages(run, db, fork.thread_id) == fork.messages


def test_fork_diff_names_the_edited_step(store: RunStore, tmp_path: Path) -> None:
    from replaykit.core.analysis.diff import diff_runs

    run = store.load(weather_run(store))
    with ScriptedServer(_edited_policy) as server:
        fork = lg.fork_run(run, step=1, target="result", value="sensor offline", checkpoint_db=tmp_path / "d.sqlite",
                           store=store, live=lg.LiveEndpoint(base_url=server.base_url, model="m-live"))
    assert fork.run_id is not None
    report = diff_runs(run, store.load(fork.run_id)).to_json()
    assert report["equal"] is False
    first = report["first_divergence"]
    assert first["step"] == 1 and first["cause"] == "edit", first
    # The same diff from the command line exits 1 (they differ).
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "replaykit", "diff", run.run_id, fork.run_id, "--store",
                           str(store.root), "--json"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["first_divergence"]["step"] == 1


def test_fork_with_edited_args_runs_the_tool_through_the_guard(store: RunStore, tmp_path: Path) -> None:
    run = store.load(weather_run(store))
    calls: list[dict[str, Any]] = []

    def get_weather(city: str) -> str:
        calls.append({"city": city})
        return json.dumps({"temp_c": 30, "city": city})

    with ScriptedServer(_edited_policy) as server:
        fork = lg.fork_run(run, step=1, target="args", value='{"city": "Madrid"}', checkpoint_db=tmp_path / "a.sqlite",
                           store=store, live=lg.LiveEndpoint(base_url=server.base_url, model="m-live"),
                           tool_impls={"get_weather": get_weather})
    assert calls == [{"city": "Madrid"}]
    assert fork.counters["tool_executions"] == 1
    assert fork.final_answer == 'model saw: {"temp_c": 30, "city": "Madrid"}'
    child = store.load(fork.run_id or "")
    tool_steps = [s.event for s in child.steps if isinstance(s.event, ToolCallEvent)]
    assert tool_steps[0].provenance == Provenance.EDITED and tool_steps[0].arguments == {"city": "Madrid"}


def test_destructive_edit_is_dry_run_without_allow(store: RunStore, tmp_path: Path) -> None:
    run = store.load(BUILDERS["interrupted"](store))
    executed: list[Any] = []
    # Step 2 is the write_file call (recorded second, parallel with get_weather).
    step = next(s.index for s in run.steps if isinstance(s.event, ToolCallEvent) and s.event.name == "write_file")
    with ScriptedServer(lambda req: Reply(text="ok")) as server:
        fork = lg.fork_run(run, step=step, target="args", value={"path": "/etc/passwd", "content": "x"},
                           checkpoint_db=tmp_path / "g.sqlite", store=store,
                           live=lg.LiveEndpoint(base_url=server.base_url, model="m"),
                           tool_impls={"write_file": lambda **kw: executed.append(kw) or "written"})
    assert executed == []
    entry = next(e for e in fork.log if e["kind"] == "tool" and e["name"] == "write_file")
    assert entry["status"] == "dry_run" and "NOT executed" in entry["result"]


def test_offline_fork_fails_with_a_clear_error(store: RunStore, tmp_path: Path) -> None:
    run = store.load(weather_run(store))
    with pytest.raises(lg.LangGraphDesync, match="no live model"):
        lg.fork_run(run, step=1, target="result", value="x", checkpoint_db=tmp_path / "o.sqlite")
    with pytest.raises(lg.BadInput, match="LLM call"):
        lg.fork_run(run, step=0, target="result", value="x", checkpoint_db=tmp_path / "o.sqlite")
    with pytest.raises(lg.BadInput, match="out of range"):
        lg.fork_run(run, step=99, target="result", value="x", checkpoint_db=tmp_path / "o.sqlite")


def test_live_model_makes_tool_calls_served_from_the_record(store: RunStore, tmp_path: Path) -> None:
    """After an edited answer, a live model asking a recorded call gets the recorded result."""
    run = store.load(weather_run(store))
    script = [Reply(tool_calls=(ToolCall(name="get_weather", arguments={"city": "London"}, id="live_1"),)),
              Reply(text="final")]
    with ScriptedServer(script) as server:
        fork = lg.fork_run(run, step=0, target="response", value="Let me think again.",
                           checkpoint_db=tmp_path / "r.sqlite", store=store,
                           live=lg.LiveEndpoint(base_url=server.base_url, model="m"))
        assert fork.final_answer == "Let me think again."  # an edited final answer ends the turn
    assert fork.counters["provider_calls"] == 0


def test_mermaid_is_offline_and_safe(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("network used")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    run = store.load(BUILDERS["sample"](store))
    text = lg.mermaid_for_run(run)
    assert "model" in text and "tools" in text and "read_file, web_search, write_file" in text
    assert "-.-> tools" in text and "tools --> model" in text
    plain = store.load(BUILDERS["plain"](store))
    assert "tools" not in lg.mermaid_for_run(plain)


def test_tool_identifiers_are_safe() -> None:
    names = ["read_file", "read-file", "class", "__import__('os')", "1abc", "", "ü名", "read_file"]
    idents = lg.tool_identifiers(names)
    assert len(set(idents)) == len(idents)
    for ident in idents:
        assert ident.isidentifier() and ident.isascii() and not ident.startswith("__")
    import keyword

    assert not any(keyword.iskeyword(i) for i in idents)


def test_inspect_graph_json_carries_the_drawing(store: RunStore, tmp_path: Path) -> None:
    import subprocess
    import sys

    run_id = BUILDERS["sample"](store)
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "replaykit", "inspect", run_id, "--graph", "--store", str(store.root), "--json"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "tools --> model" in json.loads(done.stdout)["graph_mermaid"]
