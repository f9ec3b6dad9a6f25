"""Runs for the LangGraph tests, recorded with the real Recorder, plus any Hermes recordings present."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    ReasoningPart,
    RunHeader,
    Source,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import RunStore, utc_now_iso
from replaykit.testing.engine_runs import record_sample_run

ROOT = Path(__file__).resolve().parents[2]
HERMES_FIXTURES = ROOT / "tests" / "fixtures" / "hermes"

TOOLS = [
    ToolSpec(name="get_weather", description="Weather in a city.",
             parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    ToolSpec(name="write_file", description="Write a file.",
             parameters={"type": "object", "properties": {"path": {"type": "string"},
                                                          "content": {"type": "string"}}}),
]


def _user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def _system(text: str) -> Message:
    return Message(role="system", parts=[TextPart(text=text)])


def _calls(*calls: tuple[str, str, Any], text: str = "") -> Message:
    parts: list[Any] = [TextPart(text=text)] if text else []
    parts += [ToolCallPart(id=i, name=n, arguments=a, raw_arguments=json.dumps(a)) for i, n, a in calls]
    return Message(role="assistant", parts=parts)


def _result(call_id: str, name: str, content: str, is_error: bool = False) -> Message:
    return Message(role="tool", parts=[ToolResultPart(tool_call_id=call_id, name=name, content=content,
                                                      is_error=is_error)])


def _answer(text: str) -> Message:
    return Message(role="assistant", parts=[TextPart(text=text)])


def _recorder(store: RunStore, run_id: str) -> Recorder:
    header = RunHeader(run_id=run_id, created_at=utc_now_iso(), source=Source(framework="openai-chat"),
                       model="rec-model")
    return Recorder(header, store.create(header))


def _llm(rec: Recorder, messages: list[Message], answer: Message, tools: list[ToolSpec] | None = TOOLS,
         **kw: Any) -> None:
    finish = "tool_calls" if answer.tool_calls else "stop"
    rec.llm_call(messages, LLMResponse(message=answer, finish_reason=finish, model="rec-model",
                                       usage=Usage(input_tokens=10, output_tokens=5), **kw),
                 model="rec-model", tools=tools)


def weather_run(store: RunStore, run_id: str = "weather") -> str:
    """Two sequential tool rounds, then the answer: the fork tests edit the first result."""
    rec = _recorder(store, run_id)
    msgs = [_system("You compare weather."), _user("Is Paris warmer than London?")]
    rec.turn_start(msgs[1])
    a0 = _calls(("call_1", "get_weather", {"city": "Paris"}))
    _llm(rec, msgs, a0)
    rec.tool_call("call_1", "get_weather", {"city": "Paris"}, result='{"temp_c": 21}')
    msgs += [a0, _result("call_1", "get_weather", '{"temp_c": 21}')]
    a1 = _calls(("call_2", "get_weather", {"city": "London"}))
    _llm(rec, msgs, a1)
    rec.tool_call("call_2", "get_weather", {"city": "London"}, result='{"temp_c": 12}')
    msgs += [a1, _result("call_2", "get_weather", '{"temp_c": 12}')]
    _llm(rec, msgs, _answer("Yes: Paris is warmer (21 C vs 12 C)."))
    rec.turn_end("Yes: Paris is warmer (21 C vs 12 C).")
    rec.run_end("Yes: Paris is warmer (21 C vs 12 C).")
    rec.close()
    return run_id


def no_tools_run(store: RunStore, run_id: str = "plain") -> str:
    """One answer, no tools offered: the graph is model -> END."""
    rec = _recorder(store, run_id)
    msgs = [_user("Say hi.")]
    rec.turn_start(msgs[0])
    _llm(rec, msgs, _answer("Hi!"), tools=None)
    rec.run_end("Hi!")
    rec.close()
    return run_id


def rich_parts_run(store: RunStore, run_id: str = "rich") -> str:
    """Reasoning parts, provider details, hostile text, a harness-injected note between calls and a
    compressed context (the next request is not an extension of the previous one)."""
    rec = _recorder(store, run_id)
    hostile = 'x"""\n\'\'\'); import os; os.system("echo pwned") #\u2028\\u0000 ${{}} </script>'
    msgs = [_system("sys " + hostile), _user("Use the tool. " + hostile)]
    rec.turn_start(msgs[1])
    a0 = Message(role="assistant", parts=[
        ReasoningPart(text="thinking...", signature="sig-abc", provider="anthropic"),
        TextPart(text="Checking."),
        ToolCallPart(id="c1", name="get_weather", arguments={"city": hostile}, raw_arguments=None),
    ], provider_details={"refusal": None, "weird": [1, 2.5, hostile]})
    _llm(rec, msgs, a0, response_id="resp-1")
    rec.tool_call("c1", "get_weather", {"city": hostile}, result="cloudy " + hostile)
    msgs += [a0, _result("c1", "get_weather", "cloudy " + hostile),
             _user("[harness note] budget: 3 calls left")]
    a1 = _calls(("c2", "get_weather", {"city": "Oslo"}))
    _llm(rec, msgs, a1)
    rec.tool_call("c2", "get_weather", {"city": "Oslo"}, result="snow")
    # Context compression: the harness replaces the history with a summary.
    msgs = [msgs[0], _user("[summary of earlier turns] cloudy, then Oslo"), a1, _result("c2", "get_weather", "snow")]
    _llm(rec, msgs, _answer("Done " + hostile))
    rec.run_end("Done " + hostile)
    rec.close()
    return run_id


def interrupted_run(store: RunStore, run_id: str = "interrupted") -> str:
    """The run stopped after a tool result, before the model answered (no final LLM call)."""
    rec = _recorder(store, run_id)
    msgs = [_user("Write the report.")]
    rec.turn_start(msgs[0])
    a0 = _calls(("w1", "write_file", {"path": "r.txt", "content": "report"}),
                ("w2", "get_weather", {"city": "Rome"}))
    _llm(rec, msgs, a0)
    rec.tool_call("w2", "get_weather", {"city": "Rome"}, result="sunny")  # parallel: recorded out of order
    rec.tool_call("w1", "write_file", {"path": "r.txt", "content": "report"}, result="ok")
    rec.run_end(None, status="interrupted", reason="killed")
    rec.close()
    return run_id


def sample_run(store: RunStore, run_id: str = "sample") -> str:
    """The engine's two-turn sample (parallel calls, a tool error, two user turns)."""
    return record_sample_run(store, run_id)


BUILDERS: dict[str, Callable[[RunStore], str]] = {
    "weather": weather_run,
    "plain": no_tools_run,
    "rich": rich_parts_run,
    "interrupted": interrupted_run,
    "sample": sample_run,
}


#: KNOWN GAP (docs/hermes.md, "Known gaps"): a Hermes 0.22 batch (``tool_call({"calls": [a, b]})``) ran entry by
#: entry under ids the model's call does not hold; the LangGraph graph and module serve the call as made, so
#: they never ask for the later entries' tool steps. Left out of the every-fixture replays, and pinned by a
#: strict xfail (tests/engines/test_langgraph_graph.py::test_a_hermes_batch_recording_replays_whole).
BATCH_TRACES = ("tool_batch.jsonl",)


def hermes_traces(*, batches: bool = False) -> list[Path]:
    """Real Hermes recordings, once they are committed (tests/fixtures/hermes/*.jsonl); ``batches``: only
    the recordings of a bridged batch (``BATCH_TRACES``), else all the others."""
    if not HERMES_FIXTURES.is_dir():
        return []
    return sorted(p for p in HERMES_FIXTURES.rglob("*.jsonl") if (p.name in BATCH_TRACES) == batches)
