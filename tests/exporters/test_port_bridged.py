"""A port of a Hermes 0.22 recording with Tool Search on sees the underlying tools, never the bridge.

The recordings' model called ``tool_call({"calls": [{"name": "harness_echo", ...}]})``; the port's
agent has ``harness_echo`` and ``todo_list`` (not ``tool_search`` / ``tool_describe`` / ``tool_call``),
its model, answered from the recording, calls them directly, and its suite compares its calls with the
underlying calls: passes as exported, runs a correct body for real, fails naming the tool after a wrong
one, in both frameworks.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from replaykit.core.trace.bridge import BRIDGE_TOOL_NAMES
from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    RunHeader,
    Source,
    TextPart,
    ToolCallPart,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunWriter
from replaykit.exporters.port.bridged import UNDESCRIBED, schema_from_arguments
from replaykit.exporters.port.spec import AgentSpec, recorded_turns
from tests.exporters.port_support import FIXTURES, export, set_body, suite_failures

NEXT = FIXTURES / "0.22"
ECHO = '    import json\n    return json.dumps({"echo": text.upper()})\n'
ECHO_WRONG = '    import json\n    return json.dumps({"echo": text.lower()})\n'
FRAMEWORKS = ["pydantic-ai", "langgraph"]


def _needs(fmt: str) -> None:
    """Skip where the framework (and, for the LangGraph port, langchain's ``init_chat_model``) is missing."""
    for module in (["pydantic_ai"] if fmt == "pydantic-ai" else ["langgraph", "langchain", "langchain_openai"]):
        pytest.importorskip(module)


def _tool_names(port: Path) -> set[str]:
    tree = ast.parse((port / "agent_tools.py").read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_served_steps_name_the_underlying_tool_and_the_recording_keeps_the_bridge() -> None:
    run = Run.load(NEXT / "tools_sequence.jsonl")
    assert [c.name for c in run.tool_calls()] == ["tool_call", "tool_call"]  # the trace keeps the call as made
    steps = [s for t in recorded_turns(run) for s in t.steps]
    served = [(p.name, p.arguments) for s in steps for p in s.llm.message.tool_calls]
    assert served == [("harness_echo", {"text": "hello replaykit"}),
                      ("todo_list", {"todos": [{"id": "1", "content": "record the run", "status": "completed"}]})]
    assert [(c.name, c.arguments) for s in steps for c in s.tool_calls] == served
    assert all(p.raw_arguments is None for s in steps for p in s.response.tool_calls)  # no stale bridge text
    # the original run is untouched (a replay still serves the bridge call)
    assert [p.name for c in run.llm_calls() for p in c.response.message.tool_calls] == ["tool_call", "tool_call"]


def test_later_turns_start_from_a_conversation_with_underlying_calls() -> None:
    turns = recorded_turns(Run.load(NEXT / "two_turns.jsonl"))
    assert len(turns) == 2
    names = {p.name for m in turns[1].before for p in m.tool_calls}
    results = {p.name for m in turns[1].before for p in m.tool_results if p.name}
    assert names and not names & BRIDGE_TOOL_NAMES
    assert not results & BRIDGE_TOOL_NAMES


def test_spec_tools_are_the_underlying_tools_typed_from_the_recording() -> None:
    spec = AgentSpec.from_runs([Run.load(NEXT / "tools_sequence.jsonl")])
    tools = {t.name: t for t in spec.tools}
    assert set(tools) == {"harness_echo", "todo_list"}
    assert spec.called == {"harness_echo", "todo_list"}
    # descriptions from the tool_search catalog, schemas typed from the recorded arguments
    assert tools["harness_echo"].description == "Echo the given text in upper case."
    assert tools["harness_echo"].parameters == {"type": "object", "properties": {"text": {"type": "string"}},
                                                "required": ["text"]}
    todos = tools["todo_list"].parameters["properties"]["todos"]  # type: ignore[index]
    assert todos["type"] == "array" and todos["items"]["properties"]["status"] == {"type": "string"}


def test_a_declaration_from_another_run_of_the_agent_wins_over_the_typed_fallback() -> None:
    # the same agent recorded on 0.19.0 (Tool Search off) declares harness_echo with its real schema
    old = Run.load(FIXTURES / "tools_sequence.jsonl")
    declared = {t.name: t for ts in old.tool_sets.values() for t in ts}["harness_echo"]
    spec = AgentSpec.from_runs([Run.load(NEXT / "tools_sequence.jsonl"), old])
    tools = {t.name: t for t in spec.tools}
    assert tools["harness_echo"].parameters == declared.parameters
    assert not set(tools) & BRIDGE_TOOL_NAMES


def test_schema_from_arguments() -> None:
    schema = schema_from_arguments([{"id": 3, "verbose": True, "tags": ["a"]}, {"id": 4, "note": None},
                                    {"id": 5.5, "verbose": "yes"}])
    assert schema["required"] == ["id"]
    props = schema["properties"]
    assert props["id"] == {"type": "number"} and props["verbose"] == {}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}} and props["note"] == {}
    assert schema_from_arguments([]) == {"type": "object", "properties": {}}


@pytest.mark.parametrize("fmt", FRAMEWORKS)
@pytest.mark.parametrize("name", ["tools_sequence", "two_turns", "anthropic_messages", "codex_responses",
                                  "retry_500", "tool_batch"])
def test_0_22_port_has_underlying_tools_and_conforms(tmp_path: Path, fmt: str, name: str) -> None:
    _needs(fmt)
    port = tmp_path / "port"
    export([NEXT / f"{name}.jsonl"], port, fmt)
    names = _tool_names(port)
    assert "harness_echo" in names and not names & BRIDGE_TOOL_NAMES
    failures, drivers = suite_failures(port, fmt)
    assert failures == []
    assert any("harness_echo" in d.stubbed for d in drivers)


@pytest.mark.parametrize("fmt", FRAMEWORKS)
def test_0_22_port_correct_body_runs_for_real_wrong_body_fails(tmp_path: Path, fmt: str) -> None:
    _needs(fmt)
    port = tmp_path / "port"
    export([NEXT / "tools_sequence.jsonl"], port, fmt)
    set_body(port, "harness_echo", ECHO)
    failures, drivers = suite_failures(port, fmt)
    assert failures == []
    assert any("harness_echo" in d.ran for d in drivers)

    text = (port / "agent_tools.py").read_text(encoding="utf-8").replace(ECHO, ECHO_WRONG)
    (port / "agent_tools.py").write_text(text, encoding="utf-8")
    failures, _ = suite_failures(port, fmt)
    assert len(failures) == 1
    assert "tool harness_echo" in failures[0] and "HELLO REPLAYKIT" in failures[0]
    assert "tool_call" not in failures[0] and "Traceback" not in failures[0]


@pytest.mark.parametrize("fmt", FRAMEWORKS)
def test_0_22_subagent_port_sees_underlying_tools_and_conforms(tmp_path: Path, fmt: str) -> None:
    _needs(fmt)
    port = tmp_path / "port"
    export([NEXT / "subagent.jsonl"], port, fmt)
    names = _tool_names(port)
    # the child called todo_list through the bridge: the nested agent has it, no agent has a bridge tool
    assert "todo_list" in names and not names & BRIDGE_TOOL_NAMES
    # the recorded delegate_task call passes the legacy ``goal`` that 0.22's declared schema (``tasks``)
    # does not hold: the signature takes it as an optional parameter, saying why, so the call is accepted
    agent = (port / "agent.py").read_text(encoding="utf-8")
    signature = agent[agent.index("async def delegate_task("):agent.index(") -> str:", agent.index("async def delegate_task("))]
    assert "tasks: list[DelegateTaskTasksItem] | None = None" in signature and "goal: str | None = None" in signature
    assert "# goal: not in the declared schema, but recorded calls pass it" in agent
    schemas = json.loads((port / "tool_schemas.json").read_text(encoding="utf-8"))
    assert "goal" not in schemas["delegate_task"]["parameters"]["properties"]  # the model is told the declared schema
    failures, drivers = suite_failures(port, fmt)
    assert failures == [] and [d.case.agent for d in drivers] == ["agent", "subagent"]
    if fmt == "pydantic-ai":  # a live call in 0.22's declared form: the subagent gets each entry's text
        assert _delegated_task(port, tasks=[{"goal": "Write one todo.", "context": "In /srv/a."}]) == \
            "Write one todo.\n\nIn /srv/a."
        assert _delegated_task(port, goal="Legacy goal.") == "Legacy goal."


def _delegated_task(port: Path, **arguments: Any) -> str:
    """The user prompt the port's subagent receives when its delegate_task tool is called with ``arguments``."""
    import asyncio
    import importlib.util

    from pydantic_ai.messages import ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models.function import FunctionModel

    sys.path.insert(0, str(port))
    try:
        spec = importlib.util.spec_from_file_location("port_agent_0_22_under_test", port / "agent.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # as an import registers it (PydanticAI reads the TypedDict's source)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(port))
        sys.modules.pop("agent_tools", None)
    seen: list[str] = []

    def answer(messages: list[Any], info: Any) -> ModelResponse:
        seen.extend(str(p.content) for m in messages for p in m.parts if isinstance(p, UserPromptPart))
        return ModelResponse(parts=[TextPart(content="done")])

    try:
        with module.subagent.override(model=FunctionModel(answer)):
            assert asyncio.run(module.delegate_task(**arguments)) == "done"
    finally:
        sys.modules.pop("port_agent_0_22_under_test", None)
    return seen[0]


# ------------------------------------------------------------------ generated: describe, batch

BRIDGES = {t.name: t for ts in Run.load(NEXT / "tools_sequence.jsonl").tool_sets.values() for t in ts}
LOOKUP = {"type": "object", "properties": {"id": {"type": "integer", "description": "Ticket id"},
                                           "verbose": {"type": "boolean", "default": False}}, "required": ["id"]}


def _bridged_run(path: Path) -> Path:
    """A Tool Search run: tool_describe(lookup), tool_call(lookup), a batch of two tool_call entries."""
    header = RunHeader(run_id="bridged", created_at="2026-12-07T09:00:00Z", model="m",
                       source=Source(framework="hermes", adapter="tests"))
    writer = RunWriter(path, header)
    recorder = Recorder(header, writer)
    messages = [Message(role="system", parts=[TextPart(text="You are a desk bot.")]),
                Message(role="user", parts=[TextPart(text="Look up ticket 3, then 4 and 5.")])]
    recorder.turn_start(messages[-1], turn=0)
    lookup = lambda i: json.dumps({"id": i, "status": "open"})  # noqa: E731
    steps: list[tuple[str, Any, str]] = [
        ("tool_describe", {"names": ["lookup"]},
         json.dumps({"tools": {"lookup": {"description": "Look a ticket up.", "parameters": LOOKUP}}})),
        ("tool_call", {"calls": [{"name": "lookup", "arguments": {"id": 3}}]}, lookup(3)),
        ("tool_call", {"calls": [{"name": "lookup", "arguments": {"id": 4}},
                                 {"name": "lookup", "arguments": {"id": 5}}]}, json.dumps([lookup(4), lookup(5)])),
    ]
    for n, (name, args, result) in enumerate(steps):
        part = ToolCallPart(id=f"c{n}", name=name, arguments=args, raw_arguments=json.dumps(args))
        event = recorder.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=[part]),
                                                        finish_reason="tool_calls", usage=Usage(input_tokens=1)),
                                  tools=list(BRIDGES.values()), model="m")
        messages.append(event.response.message)
        recorder.tool_call(part.id, name, args, raw_arguments=part.raw_arguments, result=result, llm_call_id=event.id)
        messages.append(Message(role="tool", parts=[{"type": "tool_result", "tool_call_id": part.id,  # type: ignore[list-item]
                                                      "name": name, "content": result}]))
    recorder.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=[TextPart(text="All open.")]),
                                            finish_reason="stop"), tools=list(BRIDGES.values()), model="m")
    recorder.turn_end("All open.")
    recorder.run_end("All open.")
    writer.close()
    return path


def test_described_schema_is_used_and_unmappable_bridge_calls_keep_their_tool(tmp_path: Path) -> None:
    run = Run.load(_bridged_run(tmp_path / "bridged.jsonl"))
    spec = AgentSpec.from_runs([run])
    tools = {t.name: t for t in spec.tools}
    assert tools["lookup"].parameters == LOOKUP and tools["lookup"].description == "Look a ticket up."
    # the discovery call and the batch of two are served as the model made them: those tools stay
    assert {"tool_describe", "tool_call"} <= set(tools) and "tool_search" not in tools
    assert UNDESCRIBED not in {t.description for t in spec.tools}
    served = [p.name for t in recorded_turns(run) for s in t.steps for p in s.llm.message.tool_calls]
    assert served == ["tool_describe", "lookup", "tool_call"]


def test_generated_bridged_run_port_conforms(tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai")
    port = tmp_path / "port"
    export([_bridged_run(tmp_path / "bridged.jsonl")], port)
    assert {"lookup", "tool_call", "tool_describe"} <= _tool_names(port)
    set_body(port, "lookup", '    import json\n    return json.dumps({"id": id, "status": "open"})\n')
    failures, drivers = suite_failures(port)
    assert failures == [] and drivers[0].ran == ["lookup"]


def test_a_batch_run_entry_by_entry_stays_as_made(tmp_path: Path) -> None:
    """Hermes runs a batched tool_call's entries one by one: several tool events share the call id, each
    with its own ``underlying``; no single one stands for the call, so the port serves the batch as made."""
    from replaykit.core.trace.bridge_view import recorded_underlying
    from replaykit.core.trace.ir import ToolCallEvent, UnderlyingCall

    run = Run.load(_bridged_run(tmp_path / "bridged.jsonl"))
    events = []
    for event in run.events:
        if isinstance(event, ToolCallEvent) and event.call_id == "c2":  # the batch of lookup 4 and 5
            events += [event.model_copy(update={"underlying": UnderlyingCall(name="lookup", arguments={"id": i})})
                       for i in (4, 5)]
        else:
            events.append(event)
    batched = Run(run.header, events)
    assert recorded_underlying(batched)["c2"] is None
    served = [p.name for t in recorded_turns(batched) for s in t.steps for p in s.llm.message.tool_calls]
    assert served == ["tool_describe", "lookup", "tool_call"]
