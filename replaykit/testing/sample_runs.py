"""Small, realistic IR runs built with the Recorder, for tests, docs and benchmarks."""

from __future__ import annotations

import json

from replaykit.core.trace.ir import (
    Correlation,
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
from replaykit.core.trace.store import RunWriter, new_run_id, utc_now_iso

WEATHER_TOOLS = [
    ToolSpec(
        name="get_weather",
        description="Current weather for a city.",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    ToolSpec(
        name="write_file",
        description="Write text to a file.",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    ),
]


def sample_header(run_id: str | None = None, **fields: object) -> RunHeader:
    return RunHeader(
        run_id=run_id or new_run_id("sample"),
        created_at=utc_now_iso(),
        source=Source(framework="sample", adapter="replaykit.testing"),
        model="gpt-4o-mini",
        provider="openai",
        base_url="http://127.0.0.1:9/v1",
        **fields,  # type: ignore[arg-type]
    )


def _user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def record_weather_run(recorder: Recorder, *, cities: tuple[str, ...] = ("Paris", "London")) -> str:
    """System + user, one LLM call asking for parallel tool calls, the tools, a final answer."""
    system = Message(role="system", parts=[TextPart(text="You are a weather bot. Today is 2026-11-30.")])
    user = _user("Compare the weather in " + " and ".join(cities) + ".")
    recorder.turn_start(user, corr=Correlation(session_id="s1", turn_id="s1:t1"))
    messages = [system, user]
    calls = [
        ToolCallPart(id=f"call_{i}", name="get_weather", arguments={"city": c},
                     raw_arguments=json.dumps({"city": c}))
        for i, c in enumerate(cities)
    ]
    first = recorder.llm_call(
        messages,
        LLMResponse(message=Message(role="assistant", parts=[ReasoningPart(text="Need both cities."), *calls]),
                    finish_reason="tool_calls", usage=Usage(input_tokens=120, output_tokens=30), model="gpt-4o-mini"),
        tools=WEATHER_TOOLS, model="gpt-4o-mini", params={"temperature": 0}, duration=0.4,
    )
    results = []
    for i, (call, city) in enumerate(zip(calls, cities, strict=True)):
        result = json.dumps({"city": city, "temp_c": 12 + 3 * i})
        recorder.tool_call(call.id, call.name, call.arguments, raw_arguments=call.raw_arguments, result=result,
                           llm_call_id=first.id, duration=0.05)
        results.append(Message(role="tool", parts=[ToolResultPart(tool_call_id=call.id, name=call.name,
                                                                   content=result)]))
    messages = [*messages, first.response.message, *results]
    answer = f"{cities[-1]} is warmer." if len(cities) > 1 else f"It is 12 C in {cities[0]}."
    recorder.llm_call(
        messages,
        LLMResponse(message=Message(role="assistant", parts=[TextPart(text=answer)]), finish_reason="stop",
                    usage=Usage(input_tokens=200, output_tokens=12), model="gpt-4o-mini"),
        tools=WEATHER_TOOLS, model="gpt-4o-mini", params={"temperature": 0}, duration=0.3,
    )
    recorder.turn_end(answer)
    return answer


def write_weather_run(writer: RunWriter) -> Recorder:
    recorder = Recorder(writer.header, writer)
    recorder.run_end(record_weather_run(recorder))
    return recorder


def long_run(recorder: Recorder, steps: int, *, result_size: int = 200) -> None:
    """A single-turn run with ``steps`` tool round trips (2 steps each), for scale tests."""
    messages = [Message(role="system", parts=[TextPart(text="You are a bot.")]), _user("Go.")]
    recorder.turn_start(messages[-1])
    for i in range(steps // 2):
        call = ToolCallPart(id=f"call_{i}", name="get_weather", arguments={"city": f"c{i}"})
        event = recorder.llm_call(
            messages,
            LLMResponse(message=Message(role="assistant", parts=[call]), finish_reason="tool_calls",
                        usage=Usage(input_tokens=100 + i, output_tokens=10)),
            tools=WEATHER_TOOLS, model="gpt-4o-mini", duration=0.01,
        )
        result = ("x" * result_size)[:result_size]
        recorder.tool_call(call.id, call.name, call.arguments, result=result, llm_call_id=event.id, duration=0.001)
        messages = [*messages, event.response.message,
                    Message(role="tool", parts=[ToolResultPart(tool_call_id=call.id, content=result)])]
    final = recorder.llm_call(
        messages,
        LLMResponse(message=Message(role="assistant", parts=[TextPart(text="done")]), finish_reason="stop"),
        tools=WEATHER_TOOLS, model="gpt-4o-mini",
    )
    recorder.turn_end(final.response.message.text)
