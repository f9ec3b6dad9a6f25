"""Google Gemini and AWS Bedrock Converse codecs: exact round trips, streams, translation losses."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.core.errors import CodecError
from replaykit.core.trace import codecs
from replaykit.core.trace.canonical import canonical_json
from replaykit.core.trace.codecs import bedrock, gemini
from replaykit.core.trace.ir import (
    MediaPart,
    Message,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"
OTHER_APIS = ("openai-chat", "openai-responses", "anthropic-messages")


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def round_trip(api: str, body: dict[str, Any]) -> codecs.Encoded:
    decoded = codecs.decode_request(api, copy.deepcopy(body))
    return codecs.encode_request(api, decoded.messages, decoded.tools, decoded.params)


@pytest.mark.parametrize(("api", "name"), [("google-gemini", "gemini_tools.json"),
                                           ("bedrock-converse", "bedrock_tools.json")])
def test_request_round_trip_is_exact(api: str, name: str) -> None:
    body = load(name)
    encoded = round_trip(api, body)
    assert encoded.losses == []
    assert canonical_json(encoded.body) == canonical_json(body)
    # decode(encode(x)) re-encodes to the same body again (the live model records what it sent this way)
    again = round_trip(api, encoded.body)
    assert canonical_json(again.body) == canonical_json(body)


def test_gemini_request_ir() -> None:
    decoded = gemini.decode_request(load("gemini_tools.json"))
    assert [m.role for m in decoded.messages] == ["system", "user", "assistant", "user", "assistant", "user",
                                                  "assistant", "user"]
    thought, signature, first_call, second_call = decoded.messages[2].parts
    assert isinstance(thought, ReasoningPart) and thought.text == "Let me check both cities."
    assert thought.signature == "c2lnLXRob3VnaHQ=" and thought.provider == "google-gemini"
    # A signature on a functionCall becomes a reasoning part right before the call it belongs to.
    assert isinstance(signature, ReasoningPart) and signature.signature == "c2lnLWNhbGwtMQ==" and not signature.text
    assert isinstance(first_call, ToolCallPart) and (first_call.id, first_call.arguments) == ("fc-1", {"city": "Paris"})
    assert isinstance(second_call, ToolCallPart) and second_call.id == "fc-2"
    ok, structured = decoded.messages[3].parts
    assert isinstance(ok, ToolResultPart) and (ok.tool_call_id, ok.content) == ("fc-1", "sunny, 21 C")
    assert isinstance(structured, ToolResultPart) and json.loads(structured.content) == {"temp_c": 14, "sky": "rain"}
    assert isinstance(decoded.messages[1].parts[1], MediaPart)
    # Calls without ids (older models) get derived ids; their results pair by name and order.
    old_calls = decoded.messages[6].tool_calls
    results = [p for p in decoded.messages[7].parts if isinstance(p, ToolResultPart)]
    assert [r.tool_call_id for r in results] == [c.id for c in old_calls]
    assert len({c.id for c in old_calls}) == 2 and all(c.id.startswith("gcall_") for c in old_calls)
    assert results[1].is_error and results[1].content == "not found"
    assert decoded.tools is not None and [t.name for t in decoded.tools] == ["get_weather", "lookup", "googleSearch"]


def test_gemini_derived_ids_are_the_same_in_a_response_and_in_the_next_request() -> None:
    call = {"functionCall": {"name": "lookup", "args": {"q": "Rome"}}}
    response = gemini.decode_response({"candidates": [{"content": {"role": "model", "parts": [call]},
                                                       "finishReason": "STOP"}]})
    request = gemini.decode_request({"contents": [{"role": "user", "parts": [{"text": "go"}]},
                                                  {"role": "model", "parts": [call]}]})
    assert response.message.tool_calls[0].id == request.messages[1].tool_calls[0].id


def test_bedrock_request_ir() -> None:
    decoded = bedrock.decode_request(load("bedrock_tools.json"))
    assert [m.role for m in decoded.messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    system = decoded.messages[0]
    assert isinstance(system.parts[1], OpaquePart) and system.parts[1].data == {"cachePoint": {"type": "default"}}
    image = decoded.messages[1].parts[1]
    assert isinstance(image, MediaPart) and (image.media_type, image.data) == ("image/png", "iVBORw0KGgo=")
    reasoning = decoded.messages[2].parts[0]
    assert isinstance(reasoning, ReasoningPart) and reasoning.signature == "EqQBCkYIARgCKkB"
    assert reasoning.provider == "bedrock-converse"
    ok, failed, cache = decoded.messages[3].parts
    assert isinstance(ok, ToolResultPart) and ok.content == "sunny, 21 C" and not ok.is_error
    assert isinstance(failed, ToolResultPart) and failed.is_error and json.loads(failed.content) == {"temp_c": 14}
    assert isinstance(cache, OpaquePart)
    redacted = decoded.messages[4].parts[0]
    assert isinstance(redacted, ReasoningPart) and redacted.redacted
    assert decoded.tools is not None and [t.name for t in decoded.tools] == ["get_weather", "cachePoint"]
    assert decoded.params["toolConfig"] == {"toolChoice": {"auto": {}}}


def test_gemini_stream_assembles_parallel_calls_without_index_and_keeps_signatures() -> None:
    chunks = load("gemini_stream.json")
    response = codecs.assemble_stream("google-gemini", chunks)
    parts = response.message.parts
    assert isinstance(parts[0], ReasoningPart) and parts[0].text == "Checking two cities."
    assert parts[0].signature == "c2lnLXQ="
    assert isinstance(parts[1], TextPart) and parts[1].text == "On it: "
    assert [c.id for c in response.message.tool_calls] == ["a1", "a2"]
    assert response.finish_reason == "STOP" and response.model == "gemini-3-pro-preview"
    assert response.usage is not None and (response.usage.input_tokens, response.usage.output_tokens,
                                           response.usage.reasoning_tokens) == (120, 42, 12)
    assert gemini.stream_complete(chunks) and not gemini.stream_complete(chunks[:-1])
    # The answer goes back to Gemini with the call's signature attached to the call, byte for byte.
    body = codecs.encode_request("google-gemini", [Message(role="user", parts=[TextPart(text="go")]),
                                                   response.message], None, {}).body
    model_parts = body["contents"][1]["parts"]
    assert model_parts[2] == {"functionCall": {"id": "a1", "name": "get_weather", "args": {"city": "Paris"}},
                              "thoughtSignature": "c2lnLWM="}
    assert "thoughtSignature" not in model_parts[3]
    # A synthesized stream assembles to the same answer.
    again = codecs.assemble_stream("google-gemini", gemini.synthesize_stream(response))
    assert again.message.parts == response.message.parts and again.finish_reason == "STOP"


def test_gemini_stream_error_chunk_is_a_codec_error() -> None:
    with pytest.raises(CodecError, match="provider error"):
        codecs.assemble_stream("google-gemini", [{"error": {"code": 503, "status": "UNAVAILABLE"}}])


def test_bedrock_stream_and_response() -> None:
    events = load("bedrock_stream.json")
    response = codecs.assemble_stream("bedrock-converse", events)
    reasoning, said, use = response.message.parts
    assert isinstance(reasoning, ReasoningPart) and (reasoning.text, reasoning.signature) == ("Need the weather.",
                                                                                            "EqQBCkYI")
    assert isinstance(said, TextPart) and said.text == "Checking now."
    assert isinstance(use, ToolCallPart) and (use.id, use.arguments) == ("tooluse_a", {"city": "Paris"})
    assert response.finish_reason == "tool_use"
    assert response.usage is not None and (response.usage.input_tokens, response.usage.output_tokens) == (100, 40)
    assert bedrock.stream_complete(events) and not bedrock.stream_complete(events[:-2])
    body = bedrock.encode_response(response).body
    assert canonical_json(codecs.encode_response("bedrock-converse", bedrock.decode_response(body)).body) == \
        canonical_json(body)
    again = codecs.assemble_stream("bedrock-converse", bedrock.synthesize_stream(response))
    assert again.message.parts == response.message.parts and again.finish_reason == "tool_use"
    with pytest.raises(CodecError, match="throttlingException"):
        codecs.assemble_stream("bedrock-converse", [*events[:3], {"throttlingException": {"message": "slow down"}}])


def test_gemini_response_round_trip() -> None:
    body = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi", "thoughtSignature": "c2ln"}]},
                            "finishReason": "MAX_TOKENS", "index": 0, "safetyRatings": []}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
            "modelVersion": "gemini-3-flash", "responseId": "r1"}
    response = gemini.decode_response(body)
    assert response.finish_reason == "MAX_TOKENS"  # resilience.LENGTH_REASONS continues it
    assert canonical_json(gemini.encode_response(response).body) == canonical_json(body)


@pytest.mark.parametrize("target", OTHER_APIS)
@pytest.mark.parametrize(("api", "name"), [("google-gemini", "gemini_tools.json"),
                                           ("bedrock-converse", "bedrock_tools.json")])
def test_what_cannot_leave_gemini_or_bedrock_is_listed(api: str, name: str, target: str) -> None:
    decoded = codecs.decode_request(api, load(name))
    encoded = codecs.translate_request(target, decoded.messages, decoded.tools,
                                       {**decoded.params, "model": "m"}, api)
    text = "\n".join(encoded.losses)
    owner = "Gemini" if api == "google-gemini" else "Bedrock"
    assert f"signature dropped (only valid for {owner})" in text
    assert "reasoning text dropped" in text
    if api == "bedrock-converse":
        assert "'cachePoint' dropped" in text and "redacted thinking dropped" in text
    else:
        assert "googleSearch" in text


@pytest.mark.parametrize("target", ["google-gemini", "bedrock-converse"])
def test_translation_into_gemini_and_bedrock_from_other_apis(target: str) -> None:
    body = load("anthropic_thinking_tools.json")
    decoded = codecs.decode_request("anthropic-messages", body)
    encoded = codecs.translate_request(target, decoded.messages, decoded.tools, {**decoded.params, "model": "m"},
                                       "anthropic-messages")
    assert any("only valid for Anthropic" in loss for loss in encoded.losses)
    out = encoded.body
    if target == "google-gemini":
        assert "systemInstruction" in out and out["contents"][0]["role"] == "user"
        model_turns = [c for c in out["contents"] if c["role"] == "model" and
                       any("functionCall" in p for p in c["parts"])]
        assert model_turns and all(next(p for p in c["parts"] if "functionCall" in p)["thoughtSignature"] ==
                                   gemini.SKIP_SIGNATURE for c in model_turns)
        assert out["generationConfig"]["maxOutputTokens"] == body["max_tokens"]
    else:
        assert isinstance(out["system"], list) and out["messages"][0]["role"] == "user"
        roles = [m["role"] for m in out["messages"]]
        assert all(a != b for a, b in itertools.pairwise(roles))
        assert out["toolConfig"]["tools"][0]["toolSpec"]["name"] == "run_sql"
        assert out["inferenceConfig"]["maxTokens"] == body["max_tokens"]


def test_gemini_function_response_takes_the_name_of_its_call() -> None:
    history = [Message(role="user", parts=[TextPart(text="go")]),
               Message(role="assistant", parts=[ToolCallPart(id="call_1", name="lookup", arguments={"q": 1})]),
               Message(role="tool", parts=[ToolResultPart(tool_call_id="call_1", content="found")])]
    body = codecs.translate_request("google-gemini", history, [ToolSpec(name="lookup", parameters={})],
                                    {"model": "gemini-3-pro"}, "openai-chat").body
    assert body["contents"][2]["parts"] == [{"functionResponse": {"name": "lookup", "response": {"output": "found"},
                                                                  "id": "call_1"}}]
    assert body["tools"] == [{"functionDeclarations": [{"name": "lookup", "parametersJsonSchema": {}}]}]
    older = codecs.translate_request("google-gemini", history, None, {"model": "gemini-2.5-flash"}, "openai-chat").body
    assert "id" not in older["contents"][1]["parts"][0]["functionCall"]
    assert "id" not in older["contents"][2]["parts"][0]["functionResponse"]


def test_gemini_result_for_an_unknown_call_is_one_line() -> None:
    history = [Message(role="user", parts=[ToolResultPart(tool_call_id="ghost", content="x")])]
    with pytest.raises(CodecError, match="answers no earlier tool call"):
        codecs.encode_request("google-gemini", history, None, {})


def test_bedrock_media_by_url_is_a_loss() -> None:
    history = [Message(role="user", parts=[TextPart(text="look"),
                                           MediaPart(media_type="image/png", url="https://example.com/a.png")])]
    encoded = codecs.translate_request("bedrock-converse", history, None, {"model": "m"}, "openai-chat")
    assert encoded.body["messages"] == [{"role": "user", "content": [{"text": "look"}]}]
    assert any("by URL dropped" in loss for loss in encoded.losses)


def test_bedrock_json_result_crosses_as_text() -> None:
    decoded = bedrock.decode_request(load("bedrock_tools.json"))
    chat = codecs.translate_request("openai-chat", decoded.messages, decoded.tools, {"model": "m"},
                                    "bedrock-converse").body
    tool_messages = [m for m in chat["messages"] if m["role"] == "tool"]
    assert json.loads(tool_messages[1]["content"]) == {"temp_c": 14}


def test_usage_is_priced_with_each_api_token_convention() -> None:
    """Gemini's prompt count includes cached tokens and thinking is billed as output; Bedrock's inputTokens
    leaves cache reads out (Anthropic's convention): each priced at its provider's rates."""
    pytest.importorskip("genai_prices")
    from decimal import Decimal

    from replaykit.core.analysis.cost import price_usage

    g = gemini.decode_usage({"promptTokenCount": 1000, "candidatesTokenCount": 200, "thoughtsTokenCount": 300,
                             "cachedContentTokenCount": 400, "totalTokenCount": 1500})
    assert (g.input_tokens, g.output_tokens, g.reasoning_tokens, g.cache_read_tokens) == (1000, 500, 300, 400)
    price = price_usage("gemini-2.5-flash", g, provider="google", api="google-gemini")
    assert price.total is not None and price.output == Decimal("0.00125")  # 500 output tokens at $2.50/M
    b = bedrock.decode_usage({"inputTokens": 100, "outputTokens": 200, "cacheReadInputTokens": 900,
                              "totalTokens": 1200})
    priced = price_usage("anthropic.claude-3-5-sonnet-20240620-v1:0", b, provider="aws", api="bedrock-converse")
    # 100 uncached input tokens at $3/M plus 900 cache reads at $0.30/M (the reads added back to the input)
    assert priced.input == Decimal("0.00057") and priced.output == Decimal("0.003")
    assert price_usage("no-such-model", b, provider="aws", api="bedrock-converse").total is None


def test_finish_reasons_in_shared_words() -> None:
    from replaykit.core.trace.codecs import neutral_finish_reason

    assert {neutral_finish_reason(r, True) for r in ("tool_calls", "tool_use", "STOP")} == {"tool_calls"}
    assert {neutral_finish_reason(r, False) for r in ("stop", "end_turn", "STOP", "completed")} == {"stop"}
    assert {neutral_finish_reason(r, False) for r in ("length", "max_tokens", "MAX_TOKENS")} == {"length"}
    assert neutral_finish_reason("SAFETY", False) == "content_filter"
    assert neutral_finish_reason("RECITATION", False) == "recitation" and neutral_finish_reason(None, True) is None


def test_gemini_closing_signature_and_uppercase_schema_types() -> None:
    body = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Paris is sunny."}, {"text": "", "thoughtSignature": "c2lnLWVuZA=="}]}, "finishReason": "STOP"}]}
    response = gemini.decode_response(body)
    assert canonical_json(gemini.encode_response(response).body) == canonical_json(body)
    history = [Message(role="user", parts=[TextPart(text="weather?")]), response.message]
    sent = codecs.encode_request("google-gemini", history, None, {}).body["contents"][1]["parts"]
    assert sent[-1] == {"text": "", "thoughtSignature": "c2lnLWVuZA=="}  # the signature goes back
    decoded = gemini.decode_request(load("gemini_tools.json"))
    assert decoded.tools is not None
    weather = decoded.tools[0]
    assert weather.parameters == {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    chat = codecs.translate_request("openai-chat", decoded.messages, decoded.tools, {"model": "m"}, "google-gemini")
    assert chat.body["tools"][0]["function"]["parameters"]["properties"]["city"] == {"type": "string"}


@pytest.mark.parametrize("body", [
    {"output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}}, "stopReason": "end_turn",
     "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}},
    {"output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}}, "stopReason": "max_tokens",
     "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 9},
     "additionalModelResponseFields": {"x": 1}},
])
def test_bedrock_response_round_trip(body: dict[str, Any]) -> None:
    assert canonical_json(bedrock.encode_response(bedrock.decode_response(body)).body) == canonical_json(body)
