"""Anthropic Messages and OpenAI Responses codecs: exact round trips, streams, cross-format losses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.core.errors import CodecError
from replaykit.core.trace import codecs
from replaykit.core.trace.canonical import canonical_json
from replaykit.core.trace.codecs import anthropic, openai_responses
from replaykit.core.trace.ir import ReasoningPart, ToolResultPart

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def request_roundtrip(api: str, body: dict[str, Any]) -> dict[str, Any]:
    decoded = codecs.decode_request(api, body)
    encoded = codecs.encode_request(api, decoded.messages, decoded.tools, decoded.params)
    assert encoded.losses == []
    return encoded.body


def test_anthropic_request_round_trip_and_ir() -> None:
    body = load("anthropic_thinking_tools.json")
    assert canonical_json(request_roundtrip("anthropic-messages", body)) == canonical_json(body)
    decoded = anthropic.decode_request(body)
    assert [m.role for m in decoded.messages] == ["system", "user", "assistant", "user", "assistant", "user",
                                                  "assistant"]
    thinking = decoded.messages[2].parts[0]
    assert isinstance(thinking, ReasoningPart) and thinking.signature and thinking.provider == "anthropic"
    assert decoded.messages[2].tool_calls[0].arguments["query"].startswith("SELECT count(*) FROM order ")
    failed = decoded.messages[3].parts[0]
    assert isinstance(failed, ToolResultPart) and failed.is_error and "does not exist" in failed.content
    redacted = decoded.messages[4].parts[0]
    assert isinstance(redacted, ReasoningPart) and redacted.redacted
    ok = decoded.messages[5].parts[0]
    assert isinstance(ok, ToolResultPart) and not ok.is_error and ok.content == '[{"count": 1284}]'
    assert decoded.tools is not None and [t.name for t in decoded.tools] == ["run_sql", "web_search"]
    assert decoded.params["thinking"] == {"type": "enabled", "budget_tokens": 10000}


def test_anthropic_response_and_stream() -> None:
    body = load("anthropic_response.json")
    response = anthropic.decode_response(body)
    assert response.finish_reason == "tool_use" and response.usage is not None
    assert (response.usage.cache_read_tokens, response.usage.cache_write_tokens) == (2048, 0)
    assert canonical_json(anthropic.encode_response(response).body) == canonical_json(body)
    streamed = codecs.assemble_stream("anthropic-messages", load("anthropic_stream.json"))
    assert streamed.message.parts == response.message.parts
    assert streamed.usage is not None and streamed.usage.output_tokens == 89
    assert streamed.finish_reason == "tool_use"
    with pytest.raises(CodecError):
        anthropic.decode_stream([{"type": "ping"}])


def test_responses_request_round_trip_and_ir() -> None:
    body = load("openai_responses_reasoning.json")
    request = {k: v for k, v in body.items() if k != "output"}
    assert canonical_json(request_roundtrip("openai-responses", request)) == canonical_json(request)
    decoded = openai_responses.decode_request(request)
    assert [m.role for m in decoded.messages] == ["system", "user", "assistant", "tool", "tool"]
    turn = decoded.messages[2]  # reasoning + two function calls merged into one assistant turn
    assert isinstance(turn.parts[0], ReasoningPart) and turn.parts[0].encrypted
    assert [c.id for c in turn.tool_calls] == ["call_LsB0aX8yQmWz", "call_MdR1bY9zRnXa"]
    assert turn.tool_calls[1].arguments == {"city": "Madrid"}
    items = openai_responses.decode_items(body["output"], "output")
    assert len(items) == 1 and "Madrid is warmer" in items[0].text


def test_responses_string_input_and_response_and_stream() -> None:
    body = {"model": "gpt-4.1", "input": "Say hi", "instructions": "", "temperature": 0}
    assert canonical_json(request_roundtrip("openai-responses", body)) == canonical_json(body)
    response_body = load("openai_responses_response.json")
    response = codecs.decode_response("openai-responses", response_body)
    assert response.finish_reason == "completed" and response.usage is not None
    assert response.usage.reasoning_tokens == 64
    assert canonical_json(codecs.encode_response("openai-responses", response).body) == canonical_json(response_body)
    events = load("openai_responses_stream.json")
    assert codecs.assemble_stream("openai-responses", events).message == response.message
    # Without the terminal event, the items are rebuilt from output_item.done events.
    partial = codecs.assemble_stream("openai-responses", events[:-1])
    assert partial.message.parts == response.message.parts


CROSS = [
    ("anthropic_thinking_tools.json", "anthropic-messages", "openai-chat", ["signature", "redacted", "is_error"]),
    ("anthropic_thinking_tools.json", "anthropic-messages", "openai-responses", ["signature", "redacted"]),
    ("openai_responses_reasoning.json", "openai-responses", "anthropic-messages", ["encrypted reasoning"]),
    ("openai_responses_reasoning.json", "openai-responses", "openai-chat", ["encrypted reasoning"]),
]


@pytest.mark.parametrize(("fixture", "source", "target", "expected"), CROSS)
def test_cross_format_conversion_reports_losses(fixture: str, source: str, target: str,
                                                expected: list[str]) -> None:
    body = {k: v for k, v in load(fixture).items() if k != "output"}
    decoded = codecs.decode_request(source, body)
    encoded = codecs.encode_request(target, decoded.messages, decoded.tools, decoded.params)
    joined = " | ".join(encoded.losses)
    for word in expected:
        assert word in joined, (word, encoded.losses)
    # Tool calls and results still cross, with the same ids and arguments.
    again = codecs.decode_request(target, encoded.body)
    calls = [c for m in again.messages for c in m.tool_calls]
    results = [r for m in again.messages for r in m.tool_results]
    assert [c.id for c in calls] == [c.id for m in decoded.messages for c in m.tool_calls]
    assert [c.arguments for c in calls] == [c.arguments for m in decoded.messages for c in m.tool_calls]
    assert [r.tool_call_id for r in results] == [r.tool_call_id for m in decoded.messages for r in m.tool_results]
    # Encoding the target's decode again is stable (no further losses compound).
    assert codecs.encode_request(target, again.messages, again.tools, again.params).body == encoded.body


def test_chat_to_anthropic_merges_tool_results_into_one_user_turn() -> None:
    chat = load("openai_chat_weather.json")
    decoded = codecs.decode_request("openai-chat", chat)
    encoded = codecs.encode_request("anthropic-messages", decoded.messages, decoded.tools, decoded.params)
    roles = [m["role"] for m in encoded.body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert [b["type"] for b in encoded.body["messages"][2]["content"]] == ["tool_result", "tool_result"]
    assert encoded.body["system"].startswith("You are a helpful weather assistant")
    assert encoded.body["tools"][0]["input_schema"]["required"] == ["city"]


@pytest.mark.parametrize("bad", [{"messages": [{"role": "system", "content": "x"}]},
                                 {"messages": [{"role": "user", "content": 5}]},
                                 {"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}])
def test_anthropic_bad_bodies(bad: Any) -> None:
    with pytest.raises(CodecError):
        anthropic.decode_request(bad)


@pytest.mark.parametrize("bad", [{"model": "x"}, {"input": [{"type": "function_call", "name": "f"}]},
                                 {"input": [{"type": "function_call_output", "output": "x"}]}, {"input": 3}])
def test_responses_bad_bodies(bad: Any) -> None:
    with pytest.raises(CodecError):
        openai_responses.decode_request(bad)


def test_unknown_api() -> None:
    with pytest.raises(CodecError):
        codecs.decode_request("gemini", {})
