"""One canonical message shape for every comparison (``canonical.message_units``): N tool results in one
Anthropic user message and N OpenAI tool messages are one behaviour, in fingerprints, in `diff` and in
the list of changed messages; a real change still shows."""

from __future__ import annotations

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.analysis.message_diff import message_changes
from replaykit.core.trace.canonical import fingerprint, message_units, normalized_messages
from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    RunHeader,
    Source,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run

ASK = Message(role="user", parts=[TextPart(text="Weather in Oslo and Rome?")])
CALLS = Message(role="assistant", parts=[ToolCallPart(id="a", name="w", arguments={"city": "Oslo"}),
                                         ToolCallPart(id="b", name="w", arguments={"city": "Rome"})])


def _anthropic(second: str = "9 C") -> list[Message]:
    return [ASK, CALLS, Message(role="user", parts=[ToolResultPart(tool_call_id="a", content="3 C"),
                                                    ToolResultPart(tool_call_id="b", content=second)])]


def _openai(second: str = "9 C") -> list[Message]:
    return [ASK, CALLS, Message(role="tool", parts=[ToolResultPart(tool_call_id="a", name="w", content="3 C")]),
            Message(role="tool", parts=[ToolResultPart(tool_call_id="b", name="w", content=second)])]


def _run(run_id: str, request: list[Message]) -> Run:
    header = RunHeader(run_id=run_id, created_at="2026-12-01T00:00:00Z", source=Source(framework="test"))
    recorder = Recorder(header, clock=lambda: 0.0)
    recorder.llm_call([ASK], LLMResponse(message=CALLS, finish_reason="tool_calls"))
    recorder.tool_call("a", "w", {"city": "Oslo"}, result="3 C")
    recorder.tool_call("b", "w", {"city": "Rome"}, result=request[-1].parts[-1].content)  # type: ignore[union-attr]
    recorder.llm_call(request, LLMResponse(message=Message(role="assistant", parts=[TextPart(text="Cold.")]),
                                           finish_reason="stop"))
    return Run(header, recorder.events)


def test_units_split_tool_results_and_keep_the_rest() -> None:
    mixed = Message(role="user", parts=[ToolResultPart(tool_call_id="a", content="x"), TextPart(text="and?")])
    units = message_units(mixed.role, list(mixed.parts))
    assert [(role, [p.type for p in parts]) for role, parts in units] == [("tool", ["tool_result"]),
                                                                           ("user", ["text"])]
    assert message_units("user", [TextPart(text="hi")])[0][0] == "user"
    assert [m["role"] for m in normalized_messages(_anthropic())] == ["user", "assistant", "tool", "tool"]


def test_the_two_wire_shapes_fingerprint_and_diff_alike() -> None:
    assert fingerprint(_anthropic()) == fingerprint(_openai())
    assert message_changes(_anthropic(), _openai()) == []
    result = diff_runs(_run("a", _anthropic()), _run("b", _openai()))
    assert result.equal, result.first.to_json() if result.first else None


def test_a_real_change_still_shows_in_canonical_positions() -> None:
    assert fingerprint(_anthropic()) != fingerprint(_openai("10 C"))
    changes = message_changes(_anthropic(), _openai("10 C"))
    assert [(c["op"], c["index_a"], c["index_b"], c["role"]) for c in changes] == [("changed", 3, 3, "tool")]
    result = diff_runs(_run("a", _anthropic()), _run("b", _openai("10 C")))
    assert not result.equal
    first = result.first
    assert first is not None and first.field in ("result", "request.messages")
