"""The LangGraph graph on the long-session workload: the paths that keep a replay linear and fast
(served tool calls answered inside the tools node, checkpoints read back without decoding) give
exactly what the slow paths gave, and the real paths (a real tool body, a reopened database) still run."""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langgraph.checkpoint.sqlite")

from replaykit.core.trace.run import Run
from replaykit.engines.langgraph import graph as lg

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import long_session

STEPS = 40  # four user turns: single-call, two-call and final-answer supersteps


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    path = long_session.write_long_session_run(tmp_path_factory.mktemp("ls") / "run.jsonl", STEPS)
    return Run.load(path)


def _conversation(run: Run) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json", exclude_none=True) for m in run.conversation()]


def _tool_steps(run: Run) -> int:
    return sum(1 for s in run.steps if s.kind == "tool")


def test_served_tool_calls_are_answered_in_the_tools_node(run: Run) -> None:
    """A tool's function is called only while it is new (through LangGraph's ToolNode, which shows it is
    a recorded one, with every other call of that message); later served calls are answered by the
    tools node itself, with the same result."""
    built = lg.build_replay_graph(run)
    called: list[str] = []
    answer = built.router.answer

    def counting(name: str, args: dict[str, Any]) -> str:
        called.append(name)
        return answer(name, args)

    built.router.answer = counting  # type: ignore[method-assign]
    messages = [lg.runtime().lc_to_ir(m) for m in built.drive()]
    assert messages == _conversation(run)
    counters = built.log.counters()
    assert counters["tool_executions"] == 0 and counters["provider_calls"] == 0
    assert counters["served_tool_steps"] == _tool_steps(run) > 2 * len(called)
    assert max(Counter(called).values()) <= 2
    served = sorted(e["step"] for e in built.log.entries if e["provenance"] == "served")
    assert served == list(range(len(run.steps)))


def test_a_real_tool_body_runs_for_every_call_in_the_tool_node(run: Run) -> None:
    """A tool function that does not answer through the router (a ported body) is never skipped: it
    runs for every call, on the ToolNode's worker threads (two calls of one message in parallel)."""
    rt = lg.runtime()
    record = lg.record_of(run)
    log = rt.ReplayLog()
    router = rt.ToolRouter(record, log)
    threads: list[int] = []

    def real(name: str) -> Any:
        def body(**arguments: Any) -> str:
            threads.append(threading.get_ident())
            return f"ran {name} {json.dumps(arguments, sort_keys=True)}"

        return body

    def model(messages: list[dict[str, Any]], specs: list[dict[str, Any]]) -> dict[str, Any]:
        # Live tool results leave the record; this model answers what the recorded one did next.
        response: dict[str, Any] = record.llm[sum(1 for m in messages if m["role"] == "assistant")]["response"]
        return response

    tools = rt.make_tools(record.tool_specs, [real(s["name"]) for s in record.tool_specs])
    graph = rt.build_graph(rt.ModelNode(record, log, model), tools, router)
    messages = [rt.lc_to_ir(m) for m in rt.drive(graph, record)]
    assert len(threads) == _tool_steps(run)
    assert threading.get_ident() not in threads
    assert log.counters()["tool_executions"] == _tool_steps(run)
    assert sorted(m["parts"][0]["content"] for m in messages if m["role"] == "tool") == sorted(
        f"ran {e.name} {json.dumps(e.arguments, sort_keys=True)}" for e in run.tool_calls())


def test_checkpointed_replay_reads_back_from_disk_and_stores_each_message_once(run: Run, tmp_path: Path) -> None:
    db = tmp_path / "cp.sqlite"
    result = lg.replay(run, checkpoint_db=db, thread_id="t")
    conversation = _conversation(run)
    assert result.messages == conversation
    assert result.counters["tool_executions"] == 0 and result.counters["provider_calls"] == 0
    # A new saver decodes everything from the file (nothing remembered from the writing one).
    assert lg.checkpoint_messages(run, db, "t") == conversation
    # A LangGraph user sees the conversation as LangChain messages in the state.
    built = lg.build_replay_graph(run)
    with lg.sqlite_checkpointer(db) as saver:
        built = lg.build_replay_graph(run, checkpointer=saver)
        values = built.graph.get_state(lg.thread_config("t")).values["messages"]
    texts = ["".join(p.get("text", p.get("content", "")) for p in m["parts"]) for m in conversation]
    assert [m.content for m in values] == texts
    # No checkpoint holds the conversation again (fewer than 100 updates: no snapshot at all), and the
    # messages channel's writes hold each message about once (new messages, and the assistant messages
    # the next recorded request re-serialised), each with its IR (content twice): a constant times the
    # content, where the whole conversation at every node would be about STEPS / 2 times it.
    with sqlite3.connect(db) as conn:
        biggest = conn.execute("select max(length(checkpoint)) from checkpoints").fetchone()[0]
        written, size = conn.execute(
            "select count(*), sum(length(value)) from writes where channel = 'messages'").fetchone()
    content = sum(len(t) for t in texts)
    assert biggest < content / 2
    assert written <= len(run.steps) + len(run.llm_calls()) + 1
    assert size < 5 * content
