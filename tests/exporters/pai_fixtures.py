"""Runs recorded with the real Recorder for the PydanticAI exporter tests (chat and Responses API,
parallel tool calls, a tool error, reasoning, two user turns, IR-only details)."""

from __future__ import annotations

from collections.abc import Callable

from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    ReasoningPart,
    RunHeader,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run

WEATHER = ToolSpec(name="get_weather", description="Weather for a city.",
                   parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
WRITE = ToolSpec(name="write_file", description="Write a file.",
                 parameters={"type": "object", "properties": {"path": {"type": "string"},
                                                              "content": {"type": "string"}},
                             "required": ["path", "content"]})
TOOLS = [WEATHER, WRITE]


def _user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def _assistant(*parts: object) -> Message:
    return Message(role="assistant", parts=list(parts))  # type: ignore[arg-type]


def _tool(call_id: str, content: str, name: str | None = "get_weather", error: bool = False) -> Message:
    return Message(role="tool", parts=[ToolResultPart(tool_call_id=call_id, name=name, content=content,
                                                      is_error=error)])


def _resp(message: Message, finish: str, i: int, o: int) -> LLMResponse:
    return LLMResponse(message=message, finish_reason=finish, usage=Usage(input_tokens=i, output_tokens=o,
                                                                          total_tokens=i + o),
                       model="gpt-test", response_id=f"resp-{i}-{o}")


def weather_run(api: str = "openai-chat", run_id: str = "weather") -> Run:
    """One turn: parallel tool calls (one fails), then a write, then a final answer."""
    rec = Recorder(RunHeader(run_id=run_id, created_at="2026-01-01T00:00:00Z", model="gpt-test",
                             api_mode=api))
    msgs = [Message(role="system", parts=[TextPart(text="You are a weather bot.")]),
            _user("Weather in Paris and Oslo? Save it to w.txt")]
    rec.turn_start(msgs[1])
    a1 = _assistant(ReasoningPart(text="two cities, call both"),
                    ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Paris"},
                                 raw_arguments='{"city": "Paris"}'),
                    ToolCallPart(id="call_2", name="get_weather", arguments={"city": "Oslo"},
                                 raw_arguments='{"city": "Oslo"}'))
    e1 = rec.llm_call(msgs, _resp(a1, "tool_calls", 50, 20), api=api, model="gpt-test", tools=TOOLS)
    rec.tool_call("call_1", "get_weather", {"city": "Paris"}, raw_arguments='{"city": "Paris"}',
                  result="Sunny, 21C", llm_call_id=e1.id)
    rec.tool_call("call_2", "get_weather", {"city": "Oslo"}, raw_arguments='{"city": "Oslo"}',
                  result="Error: station offline", status="error", llm_call_id=e1.id)
    msgs = [*msgs, a1, _tool("call_1", "Sunny, 21C"), _tool("call_2", "Error: station offline", error=True)]
    a2 = _assistant(TextPart(text="Saving."),
                    ToolCallPart(id="call_3", name="write_file",
                                 arguments={"path": "w.txt", "content": "Paris: Sunny"},
                                 raw_arguments='{"path": "w.txt", "content": "Paris: Sunny"}'))
    e2 = rec.llm_call(msgs, _resp(a2, "tool_calls", 90, 15), api=api, model="gpt-test", tools=TOOLS)
    rec.tool_call("call_3", "write_file", {"path": "w.txt", "content": "Paris: Sunny"},
                  raw_arguments='{"path": "w.txt", "content": "Paris: Sunny"}', result="wrote 12 bytes",
                  llm_call_id=e2.id)
    msgs = [*msgs, a2, _tool("call_3", "wrote 12 bytes", name="write_file")]
    a3 = _assistant(TextPart(text="Paris is sunny (21C); Oslo's station is offline. Saved to w.txt."))
    rec.llm_call(msgs, _resp(a3, "stop", 120, 18), api=api, model="gpt-test", tools=TOOLS)
    rec.turn_end(a3.text, sync=False)
    rec.run_end(a3.text)
    return Run(rec.header, rec.events)


def two_turn_run() -> Run:
    """Two user turns, IR-only details (a developer message, a tool result without a name)."""
    rec = Recorder(RunHeader(run_id="two-turns", created_at="2026-01-01T00:00:00Z", model="gpt-test"))
    msgs = [Message(role="system", parts=[TextPart(text="sys")]),
            Message(role="developer", parts=[TextPart(text="be brief")]), _user("Weather in Rome?")]
    rec.turn_start(msgs[-1])
    a1 = _assistant(ToolCallPart(id="c1", name="get_weather", arguments={"city": "Rome"}))
    e1 = rec.llm_call(msgs, _resp(a1, "tool_calls", 30, 9), model="gpt-test", tools=[WEATHER])
    rec.tool_call("c1", "get_weather", {"city": "Rome"}, result="Rain", llm_call_id=e1.id)
    msgs = [*msgs, a1, _tool("c1", "Rain", name=None)]
    a2 = _assistant(TextPart(text="Rain in Rome."))
    rec.llm_call(msgs, _resp(a2, "stop", 40, 5), model="gpt-test", tools=[WEATHER])
    rec.turn_end(a2.text, sync=False)
    msgs = [*msgs, a2, _user("And tomorrow?")]
    rec.turn_start(msgs[-1], turn=1)
    a3 = _assistant(TextPart(text="Probably rain again."))
    rec.llm_call(msgs, _resp(a3, "stop", 50, 6), model="gpt-test", tools=[WEATHER])
    rec.turn_end(a3.text, sync=False)
    rec.run_end(a3.text)
    return Run(rec.header, rec.events)


def responses_run() -> Run:
    return weather_run(api="openai-responses", run_id="weather-responses")


FIXTURES: dict[str, Callable[[], Run]] = {
    "weather": weather_run,
    "two_turns": two_turn_run,
    "responses": responses_run,
}


def long_run(n_tools: int) -> Run:
    """One turn with ``n_tools`` sequential tool calls (n + 1 LLM calls)."""
    rec = Recorder(RunHeader(run_id="long", created_at="2026-01-01T00:00:00Z", model="gpt-test"))
    msgs = [_user("count")]
    rec.turn_start(msgs[0])
    for i in range(n_tools):
        a = _assistant(ToolCallPart(id=f"c{i}", name="get_weather", arguments={"city": str(i)}))
        e = rec.llm_call(msgs, _resp(a, "tool_calls", 10 + i, 1), model="gpt-test", tools=[WEATHER])
        rec.tool_call(f"c{i}", "get_weather", {"city": str(i)}, result=f"r{i}", llm_call_id=e.id)
        msgs = [*msgs, a, _tool(f"c{i}", f"r{i}")]
    final = _assistant(TextPart(text="finished"))
    rec.llm_call(msgs, _resp(final, "stop", 99, 1), model="gpt-test", tools=[WEATHER])
    rec.run_end("finished")
    return Run(rec.header, rec.events)
