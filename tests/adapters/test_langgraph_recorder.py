"""A real LangGraph graph (model node on the openai client, ToolNode, a subgraph, a checkpointer) recorded
against the scripted server, then replayed with the server stopped; positions and checkpoint ids kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.cassette import Cassette
from replaykit.adapters.langgraph import record_graph
from replaykit.core.trace.ir import LLMCallEvent, SubagentEvent
from replaykit.core.trace.run import Run
from replaykit.testing.scripted_server import ScriptedServer
from tests.adapters.recorder_support import CLOSED_URL, FINAL, TOOLS, cli, weather, weather_policy

pytest.importorskip("langgraph")
pytest.importorskip("openai")


def build_graph(base_url: str, *, failing: bool = False) -> Any:
    import openai
    from langchain_core.messages import AIMessage, convert_to_openai_messages
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)

    def ask(messages: list[Any], tools: list[dict[str, Any]] | None) -> AIMessage:
        kwargs: dict[str, Any] = {"tools": tools} if tools else {}
        reply = client.chat.completions.create(model="gpt-test", messages=convert_to_openai_messages(messages),
                                               **kwargs).choices[0].message
        calls = [{"name": c.function.name, "args": json.loads(c.function.arguments), "id": c.id}
                 for c in reply.tool_calls or []]
        return AIMessage(content=reply.content or "", tool_calls=calls)

    @tool("weather")
    def weather_tool(city: str) -> str:
        """Current weather of a city."""
        if failing:
            raise ValueError(f"no station in {city}")
        return weather(city)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [ask(state["messages"], TOOLS)]}

    def summarize(state: MessagesState) -> dict[str, Any]:
        return {"messages": [ask([("user", "Summarize: " + str(state["messages"][-1].content))], None)]}

    sub = StateGraph(MessagesState)
    sub.add_node("summarize", summarize)
    sub.add_edge(START, "summarize")
    sub.add_edge("summarize", END)

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([weather_tool], handle_tool_errors=True))
    graph.add_node("summary", sub.compile())
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "summary"})
    graph.add_edge("tools", "agent")
    graph.add_edge("summary", END)
    return graph.compile(checkpointer=InMemorySaver())


def run_graph(app: Any, prompt: str = "Weather in Paris?") -> tuple[list[str], list[str]]:
    config = {"configurable": {"thread_id": "t1"}}
    out = app.invoke({"messages": [("system", "You answer weather questions."), ("user", prompt)]}, config)
    checkpoints = [s.config["configurable"]["checkpoint_id"] for s in app.get_state_history(config)]
    return [str(m.content) for m in out["messages"]], checkpoints


def test_graph_recorded_with_positions_then_replayed_offline(tmp_path: Path) -> None:
    path = tmp_path / "lg.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once", framework="langgraph"):
        contents, checkpoints = run_graph(build_graph(srv.base_url))
        sent = len(srv.llm_requests)
    assert contents[-1] == FINAL and sent == 3
    run = Run.load(path)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm"]  # the subgraph's call is in a linked run
    starts = [e for e in run.events if isinstance(e, SubagentEvent)]
    assert [(e.phase, e.role, e.goal) for e in starts] == [("start", "subgraph", "summary"),
                                                           ("stop", None, None)]
    child = Run.load(path.parent / f"{starts[0].child_run_id}.jsonl")
    assert child.header.lineage is not None and child.header.lineage.relation == "subagent"
    assert child.header.lineage.parent_run_id == run.run_id and child.header.lineage.parent_event_id == starts[0].id
    assert [s.kind for s in child.steps] == ["llm"] and child.final_answer == FINAL
    first, tool, _ = (s.event for s in run.steps)
    summary = child.steps[0].event
    assert isinstance(first, LLMCallEvent) and first.corr and first.corr.extra
    assert first.corr.extra["langgraph_node"] == "agent" and first.corr.extra["thread_id"] == "t1"
    assert first.corr.extra["checkpoint_id"] in checkpoints
    assert tool.corr and tool.corr.extra and tool.corr.extra["langgraph_node"] == "tools"
    assert tool.duration is not None and tool.status == "ok" and tool.name == "weather"
    assert tool.provider_details is None  # from the tool callback, not inferred from the next request
    assert summary.corr and summary.corr.extra and summary.corr.extra["subgraph"] == "summary"
    assert summary.corr.extra["checkpoint_ns"].startswith("summary:")

    with Cassette(path, "none") as served:
        assert run_graph(build_graph(CLOSED_URL))[0] == contents
    assert served.counters.served == 3 and served.counters.provider_calls == 0

    cassette = Cassette(path, "none", label="test_graph")
    session = cassette.start()
    try:
        with pytest.raises(Exception, match="not in cassette"):
            run_graph(build_graph(CLOSED_URL), prompt="Weather in Oslo?")
    finally:
        cassette.stop()
    assert "recorded 'Weather in Paris?' vs actual 'Weather in Oslo?'" in session.misses[0]


def test_record_graph_api_validates_and_replays(tmp_path: Path, store_dir: Path) -> None:
    path = tmp_path / "lg-run.jsonl"
    with ScriptedServer(weather_policy()) as srv, record_graph(path=path) as session:
        run_graph(build_graph(srv.base_url))
    assert session.counters.recorded == 3
    run = Run.load(path)
    assert len(run.llm_calls()) == 2
    assert run.header.source.framework == "langgraph" and run.meta["framework_version"]
    children = [p for p in tmp_path.iterdir() if p.name.startswith("lg-run.summary-")]
    assert len(children) == 1
    for trace in (path, children[0]):
        code, out, _ = cli("validate", str(trace), "--json")
        assert code == 0 and json.loads(out)["valid"]
        code, out, _ = cli("replay", str(trace), "--json")
        assert code == 0 and json.loads(out)["counters"]["provider_calls"] == 0


def test_tool_node_error_recorded_with_status(tmp_path: Path) -> None:
    path = tmp_path / "lg-error.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once"):
        run_graph(build_graph(srv.base_url, failing=True))
    tool = Run.load(path).tool_calls()
    assert len(tool) == 1 and tool[0].status == "error" and "no station in Paris" in (tool[0].error or "")
    assert tool[0].duration is not None
