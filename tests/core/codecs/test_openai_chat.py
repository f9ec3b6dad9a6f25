"""Chat Completions codec: exact round trips on real-world-shaped bodies, streams, and losses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaykit.core.errors import CodecError
from replaykit.core.trace import codecs
from replaykit.core.trace.canonical import canonical_json
from replaykit.core.trace.codecs import openai_chat
from replaykit.core.trace.ir import Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"


def roundtrip(body: dict[str, Any]) -> dict[str, Any]:
    decoded = codecs.decode_request("openai-chat", body)
    encoded = codecs.encode_request("openai-chat", decoded.messages, decoded.tools, decoded.params)
    assert encoded.losses == []
    return encoded.body


def bodies() -> list[dict[str, Any]]:
    out = [json.loads((FIXTURES / "openai_chat_weather.json").read_text())]
    out += [json.loads(line) for line in (FIXTURES / "openai_chat_multi.jsonl").read_text().splitlines()]
    return out


@pytest.mark.parametrize("body", bodies())
def test_fixture_request_round_trip(body: dict[str, Any]) -> None:
    assert canonical_json(roundtrip(body)) == canonical_json(body)


def test_weather_request_decodes_to_meaningful_ir() -> None:
    decoded = openai_chat.decode_request(bodies()[0])
    assert decoded.model == "gpt-4o-2024-08-06"
    assert [m.role for m in decoded.messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    calls = decoded.messages[2].tool_calls
    assert [c.id for c in calls] == ["call_9pQ2xL1Tz0", "call_Kd83mZq7Yc"]
    assert calls[0].raw_arguments == '{"city": "Paris", "unit": "celsius"}'
    assert calls[0].arguments == {"city": "Paris", "unit": "celsius"}
    result = decoded.messages[3].tool_results[0]
    assert (result.tool_call_id, result.name) == ("call_9pQ2xL1Tz0", "get_weather")
    assert decoded.tools is not None and decoded.tools[0].name == "get_weather"
    assert decoded.tools[0].parameters is not None and decoded.tools[0].parameters["required"] == ["city"]
    assert decoded.params["stream_options"] == {"include_usage": True}
    assert "messages" not in decoded.params and "tools" not in decoded.params


def test_invalid_json_arguments_kept_raw_and_reasoning_content_decoded() -> None:
    first, second = bodies()[1:]
    reasoning = openai_chat.decode_request(first).messages[2].parts[0]
    assert isinstance(reasoning, ReasoningPart) and "tracking pixel" in reasoning.text
    media = openai_chat.decode_request(first).messages[1].parts[1]
    assert media.type == "media" and media.media_type == "image/png" and media.data is not None
    call = openai_chat.decode_request(second).messages[1].tool_calls[0]
    assert call.raw_arguments == '{"cmd": "ls /tmp"' and call.arguments is None


@pytest.mark.parametrize("content", ["__missing__", None, "", "text"])
def test_assistant_tool_call_content_variants_survive(content: Any) -> None:
    message: dict[str, Any] = {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    if content != "__missing__":
        message["content"] = content
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}, message]}
    assert canonical_json(roundtrip(body)) == canonical_json(body)


def test_response_round_trip_and_fields() -> None:
    body = json.loads((FIXTURES / "openai_chat_response.json").read_text())
    response = codecs.decode_response("openai-chat", body)
    assert response.response_id == "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT"
    assert response.finish_reason == "tool_calls"
    assert response.usage is not None and (response.usage.input_tokens, response.usage.output_tokens) == (82, 51)
    assert response.usage.cache_read_tokens == 0 and response.usage.reasoning_tokens == 0
    assert len(response.message.tool_calls) == 2
    encoded = codecs.encode_response("openai-chat", response)
    assert encoded.losses == []
    assert canonical_json(encoded.body) == canonical_json(body)


def test_stream_assembles_to_the_same_response() -> None:
    chunks = json.loads((FIXTURES / "openai_chat_stream.json").read_text())
    whole = json.loads((FIXTURES / "openai_chat_response.json").read_text())
    streamed = codecs.assemble_stream("openai-chat", chunks)
    direct = codecs.decode_response("openai-chat", whole)
    assert streamed.message.parts == direct.message.parts  # annotations: [] only in the non-streamed body
    assert streamed.usage == direct.usage
    assert (streamed.finish_reason, streamed.response_id, streamed.model) == (
        direct.finish_reason, direct.response_id, direct.model)
    assembled = openai_chat.assemble_chunks(chunks)
    assert assembled["system_fingerprint"] == "fp_fc9f1d7035"


def test_stream_of_text_deltas() -> None:
    chunks = [
        {"id": "x", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]},
        {"id": "x", "choices": [{"index": 0, "delta": {"content": "lo ☃"}, "finish_reason": None}]},
        {"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    response = openai_chat.decode_stream(chunks)
    assert response.message.text == "Hello ☃" and response.finish_reason == "stop"
    with pytest.raises(CodecError):
        openai_chat.decode_stream([])


def test_cross_format_losses_are_reported() -> None:
    messages = [
        Message(role="user", parts=[TextPart(text="go")]),
        Message(role="assistant", parts=[
            ReasoningPart(text="thinking...", signature="sig=="),
            ToolCallPart(id="t1", name="f", arguments={"a": 1}),
        ]),
        Message(role="user", parts=[ToolResultPart(tool_call_id="t1", content="boom", is_error=True),
                                    TextPart(text="and now?")]),
    ]
    encoded = codecs.encode_request("openai-chat", messages, None, {"model": "m"})
    roles = [m["role"] for m in encoded.body["messages"]]
    assert roles == ["user", "assistant", "tool", "user"]
    assert encoded.body["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"a":1}'
    assert encoded.body["messages"][1]["content"] is None
    joined = " | ".join(encoded.losses)
    assert "signature" in joined and "reasoning text" in joined and "is_error" in joined


@pytest.mark.parametrize("bad", [[], "x", {"messages": "no"}, {"messages": [{"role": "wizard"}]},
                                 {"messages": [{"role": "tool", "content": "x"}]},
                                 {"messages": [{"role": "assistant", "tool_calls": [{"id": "a"}]}]}])
def test_bad_bodies_raise_codec_error(bad: Any) -> None:
    with pytest.raises(CodecError) as info:
        openai_chat.decode_request(bad)
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------------------------- properties

# Any text JSON can carry: includes NUL and lone surrogates (json.loads accepts "\ud800").
text = st.text(alphabet=st.characters(exclude_categories=()), max_size=30)
json_scalars = st.none() | st.booleans() | st.integers() | text
json_values = st.recursive(json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(text, c, max_size=3),
                           max_leaves=6)
maybe = st.sampled_from(["__missing__", None])


@st.composite
def tool_call(draw: st.DrawFn) -> dict[str, Any]:
    args = draw(st.one_of(text, json_values.map(json.dumps)))
    call: dict[str, Any] = {"id": draw(text), "type": "function",
                            "function": {"name": draw(text), "arguments": args}}
    if draw(st.booleans()):
        call["extra_" + draw(text)] = draw(json_values)
    return call


@st.composite
def content(draw: st.DrawFn) -> Any:
    return draw(st.one_of(
        text, st.none(),
        st.lists(st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, text),
            st.builds(lambda u, d: {"type": "image_url", "image_url": {"url": u, "detail": d}},
                      st.one_of(text, st.just("data:image/png;base64,AAAA")), st.sampled_from(["low", "auto"])),
            st.builds(lambda t: {"type": "input_audio", "input_audio": {"data": t, "format": "wav"}}, text),
        ), max_size=3),
    ))


@st.composite
def message(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from(["system", "developer", "user", "assistant", "tool"]))
    out: dict[str, Any] = {"role": role}
    value = draw(st.one_of(st.just("__missing__"), content()))
    if value != "__missing__":
        out["content"] = value
    if draw(st.booleans()):
        out["name"] = draw(text)
    if role == "tool":
        out["tool_call_id"] = draw(text)
    if role == "assistant":
        calls = draw(st.one_of(st.just("__missing__"), st.none(), st.lists(tool_call(), max_size=3)))
        if calls != "__missing__":
            out["tool_calls"] = calls
        for key in ("reasoning_content", "refusal"):
            if draw(st.booleans()):
                out[key] = draw(st.one_of(text, st.none()))
    if draw(st.booleans()):
        out["x_" + draw(text)] = draw(json_values)
    return out


@st.composite
def request_body(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {"model": draw(text), "messages": draw(st.lists(message(), max_size=6))}
    if draw(st.booleans()):
        body["tools"] = [{"type": "function", "function": {"name": draw(text), "description": draw(text),
                                                           "parameters": {"type": "object"}}},
                         {"type": "web_search"}]
    body.update(draw(st.dictionaries(text.filter(lambda k: k not in ("messages", "tools")), json_values,
                                     max_size=3)))
    return body


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request_body())
def test_property_chat_request_round_trip(body: dict[str, Any]) -> None:
    assert canonical_json(roundtrip(body)) == canonical_json(body)


@settings(max_examples=150, deadline=None)
@given(st.lists(tool_call(), min_size=1, max_size=3), st.one_of(text, st.none()),
       st.sampled_from(["stop", "tool_calls", "length"]))
def test_property_chat_response_round_trip(calls: list[dict[str, Any]], text_value: str | None,
                                           finish: str) -> None:
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text_value, "tool_calls": calls},
                         "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}
    encoded = openai_chat.encode_response(openai_chat.decode_response(body))
    assert canonical_json(encoded.body) == canonical_json(body)


def test_openai_sdk_dumps_round_trip() -> None:
    """Bodies as the real openai SDK dumps them (every optional field present as null) survive exactly."""
    chat_types = pytest.importorskip("openai.types.chat")
    raw = json.loads((FIXTURES / "openai_chat_response.json").read_text())
    dumped = chat_types.ChatCompletion.model_validate(raw).model_dump(mode="json")
    assert dumped["choices"][0]["message"]["function_call"] is None  # the SDK really added null fields
    encoded = openai_chat.encode_response(openai_chat.decode_response(dumped))
    assert canonical_json(encoded.body) == canonical_json(dumped)
    chunk_type = pytest.importorskip("openai.types.chat").ChatCompletionChunk
    chunks = [chunk_type.model_validate(c).model_dump(mode="json")
              for c in json.loads((FIXTURES / "openai_chat_stream.json").read_text())]
    streamed = openai_chat.decode_stream(chunks)
    assert [c.raw_arguments for c in streamed.message.tool_calls] == [
        '{"city": "Paris", "unit": "celsius"}', '{"city":"Tokyo","unit":"celsius"}']
    assert streamed.usage is not None and streamed.usage.total_tokens == 133
