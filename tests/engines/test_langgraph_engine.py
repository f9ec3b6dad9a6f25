"""replaykit play --engine langgraph: the graph serves the prefix and goes live at the cut."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("openai")

from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.store import RunStore
from replaykit.engines.langgraph import engine as langgraph_engine
from replaykit.testing.script import Reply, ScriptRequest, ToolCall
from replaykit.testing.scripted_server import ScriptedServer
from tests.exporters.lg_fixtures import BUILDERS, weather_run

ROOT = Path(__file__).resolve().parents[2]


def _echo(req: ScriptRequest) -> Reply:
    last = req.body["messages"][-1]
    return Reply(text=f"live answer after {last['role']}: {last.get('content')}")


def test_play_serves_the_prefix_and_goes_live_at_the_cut(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    run = store.load(weather_run(store))
    db = tmp_path / "play.sqlite"
    with ScriptedServer(_echo) as server:
        options = PlayOptions(base_url=server.base_url, model="m-live", store=store, cut=2,
                              extra={"checkpoint_db": str(db)})
        result = langgraph_engine.play(run, options)
        chat = [r for r in server.requests if r.api == "chat"]
    assert result.status == "completed", result.error
    assert result.engine == "langgraph" and result.cut == 2
    counters = result.counters.to_json()
    assert counters["served_llm_steps"] == 1 and counters["served_tool_steps"] == 1
    assert counters["provider_calls"] == len(chat) == 1 and counters["live_llm_steps"] == 1
    assert result.final_answer == 'live answer after tool: {"temp_c": 21}'
    child = store.load(result.run_id)
    assert child.header.lineage is not None and child.header.lineage.relation == "play"
    assert child.header.source.framework == "langgraph"
    assert [s.event.provenance for s in child.steps] == [Provenance.SERVED, Provenance.SERVED, Provenance.LIVE]
    # The graph really ran: its checkpoints are in the SQLite file, under the play's thread.
    with sqlite3.connect(db) as conn:
        count = conn.execute("select count(*) from checkpoints where thread_id = ?",
                             (f"play-{result.run_id}",)).fetchone()[0]
    assert count >= 4


def test_live_tool_calls_go_through_the_gate(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    run = store.load(weather_run(store))
    script = [Reply(tool_calls=(ToolCall(name="get_weather", arguments={"city": "Paris"}, id="L1"),
                                ToolCall(name="write_file", arguments={"path": "x", "content": "y"}, id="L2"))),
              Reply(text="done live")]
    written: list[object] = []
    impls = {"write_file": lambda **kw: written.append(kw) or "written"}
    with ScriptedServer(script) as server:
        result = langgraph_engine.play(run, PlayOptions(base_url=server.base_url, model="m", store=store, cut=0,
                                                        extra={"tool_impls": impls}))
        second = [r for r in server.requests if r.api == "chat"][1].body["messages"]
    assert result.status == "completed", result.error
    tool_msgs = {m["tool_call_id"]: m["content"] for m in second if m["role"] == "tool"}
    assert tool_msgs["L1"] == '{"temp_c": 21}'  # a recorded result with the same arguments stands in
    assert "NOT executed" in tool_msgs["L2"] and written == []  # write_file is destructive: dry-run
    counters = result.counters.to_json()
    assert counters["tool_executions"] == 0 and counters["provider_calls"] == 2


def test_multi_turn_play_sends_later_user_turns(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    run = store.load(BUILDERS["sample"](store))
    with ScriptedServer(_echo) as server:
        result = langgraph_engine.play(run, PlayOptions(base_url=server.base_url, model="m", store=store, cut=5))
    assert result.status == "completed", result.error
    assert result.final_answer == "live answer after user: What does out.txt contain now?"
    assert result.counters.to_json()["served_llm_steps"] == 2


def test_cli_play_engine_langgraph(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    run_id = weather_run(store)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with ScriptedServer(_echo) as server:
        done = subprocess.run(
            [sys.executable, "-m", "replaykit", "play", run_id, "--engine", "langgraph", "--base-url",
             server.base_url, "--model", "m", "--at", "4", "--store", str(store.root), "--json"],
            capture_output=True, text=True, env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["engine"] == "langgraph" and doc["status"] == "completed" and doc["cut"] == 4
    assert doc["counters"]["served_llm_steps"] == 2 and doc["counters"]["provider_calls"] == 1


def test_branch_then_play_langgraph_then_diff(tmp_path: Path) -> None:
    """The whole CLI loop: branch with an edited result, play the branch live with the graph, diff."""
    store = RunStore(tmp_path / "store")
    run_id = weather_run(store)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "replaykit", *args, "--store", str(store.root), "--json"],
                              capture_output=True, text=True, env=env, timeout=180)

    branch = cli("branch", run_id, "--at", "1", "--result", '{"temp_c": 5}')
    assert branch.returncode == 0, branch.stderr
    branch_id = json.loads(branch.stdout)["run_id"]
    with ScriptedServer(_echo) as server:
        played = cli("play", branch_id, "--engine", "langgraph", "--base-url", server.base_url, "--model", "m")
    assert played.returncode == 0, played.stderr
    result = json.loads(played.stdout)
    assert result["cut"] == 2 and result["final_answer"] == 'live answer after tool: {"temp_c": 5}'
    diff = cli("diff", run_id, result["run_id"])
    assert diff.returncode == 1
    first = json.loads(diff.stdout)["first_divergence"]
    assert first["step"] == 1 and first["cause"] == "edit" and first["b"] == '{"temp_c": 5}'
