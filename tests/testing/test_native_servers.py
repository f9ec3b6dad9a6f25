"""The scripted Gemini and Bedrock routes against the real SDKs (google-genai, boto3): streams, framing
CRCs, request validation, faults."""

from __future__ import annotations

import base64
import json
import struct

import pytest

from replaykit.testing import eventstream
from replaykit.testing.scripted_server import Reply, ScriptedServer, ToolCall, calls, fault, text
from replaykit.testing.validate import check_request

genai = pytest.importorskip("google.genai")
boto3 = pytest.importorskip("boto3")
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError, EventStreamError  # noqa: E402
from google.genai import errors as genai_errors  # noqa: E402

GEMINI_TOOLS = [{"functionDeclarations": [{"name": "lookup", "parametersJsonSchema": {
    "type": "object", "properties": {"q": {"type": "string"}}}}]}]
BEDROCK_TOOLS = {"tools": [{"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object"}}}}]}
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


def gemini_client(srv: ScriptedServer) -> object:
    return genai.Client(api_key="g-test-secret", http_options={"base_url": srv.root_url, "api_version": "v1beta",
                                                               "retry_options": {"attempts": 1}})


def bedrock_client(srv: ScriptedServer) -> object:
    return boto3.session.Session().client(
        "bedrock-runtime", endpoint_url=srv.root_url, region_name="us-east-1", aws_access_key_id="AKIDTEST",
        aws_secret_access_key="aws-test-secret", config=Config(retries={"total_max_attempts": 1}))


# ------------------------------------------------------------------------------------------ Gemini


def test_gemini_stream_through_the_sdk_parallel_calls_ids_and_signatures() -> None:
    reply = calls(ToolCall("lookup", {"q": "alpha"}), ToolCall("lookup", {"q": "beta"}))
    with ScriptedServer([Reply(text="Looking up both.", tool_calls=reply.tool_calls), text("done")]) as srv:
        client = gemini_client(srv)
        chunks = list(client.models.generate_content_stream(  # type: ignore[attr-defined]
            model="gemini-3-pro-preview", contents="find alpha and beta", config={"tools": GEMINI_TOOLS}))
        old = client.models.generate_content(  # type: ignore[attr-defined]
            model="gemini-2.5-flash", contents="again", config={"tools": GEMINI_TOOLS})
        requests = srv.llm_requests
    calls_seen = [p.function_call for c in chunks for p in (c.candidates[0].content.parts or []) if p.function_call]
    assert [(c.name, c.args, c.id) for c in calls_seen] == [("lookup", {"q": "alpha"}, "call_001"),
                                                            ("lookup", {"q": "beta"}, "call_002")]
    # Each call in its own chunk; text in several; the last chunk has finishReason and usage.
    assert sum(1 for c in chunks if any(p.function_call for p in c.candidates[0].content.parts or [])) == 2
    assert chunks[-1].candidates[0].finish_reason == "STOP" and chunks[-1].usage_metadata.total_token_count > 0
    first_call_part = next(p for c in chunks for p in c.candidates[0].content.parts or [] if p.function_call)
    assert first_call_part.thought_signature  # Gemini 3: a signature on the first call
    assert old.text == "done"
    assert [r.path for r in requests] == ["/v1beta/models/gemini-3-pro-preview:streamGenerateContent",
                                          "/v1beta/models/gemini-2.5-flash:generateContent"]
    assert all(r.violations == () for r in requests)
    assert "x-goog-api-key" not in requests[0].headers
    assert "g-test-secret" not in json.dumps([dict(r.headers) for r in requests])


def test_gemini_violations_are_answered_with_400_and_recorded() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "go"}]},
                         {"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {}, "id": "c1"}}]},
                         {"role": "user", "parts": [{"text": "no answer to the call"}]}]}
    with ScriptedServer([text("unused")], strict=True) as srv:
        client = gemini_client(srv)
        with pytest.raises(genai_errors.ClientError) as caught:
            client.models.generate_content(model="gemini-3-pro", contents=body["contents"])  # type: ignore[attr-defined]
        recorded = srv.llm_requests[0]
    assert caught.value.code == 400 and caught.value.status == "INVALID_ARGUMENT"
    assert any("thoughtSignature" in v for v in recorded.violations)
    assert any("0 functionResponse part(s) for 1 function call(s)" in v for v in recorded.violations)


def test_gemini_rules() -> None:
    ok = {"contents": [{"role": "user", "parts": [{"text": "go"}]},
                       {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}},
                                                    "thoughtSignature": "skip_thought_signature_validator"},
                                                   {"functionCall": {"name": "g", "args": {}}}]},
                       {"role": "user", "parts": [{"functionResponse": {"name": "g", "response": {"output": "1"}}},
                                                  {"functionResponse": {"name": "f", "response": {"output": "2"}}}]}]}
    assert check_request("gemini", ok, "gemini-3-pro") == []
    assert check_request("gemini", ok, "gemini-2.0-flash") == []
    with_ids = json.loads(json.dumps(ok))
    with_ids["contents"][1]["parts"][0]["functionCall"]["id"] = "x"
    assert any("older Gemini model" in v for v in check_request("gemini", with_ids, "gemini-2.5-pro"))
    bad = {"contents": [{"role": "system", "parts": [{"text": "s"}]}], "generationConfig": {"max_tokens": 5},
           "temperature": 1}
    found = check_request("gemini", bad, "gemini-3-pro")
    assert any("role 'system'" in v for v in found) and any("max_tokens" in v for v in found)
    assert any("unknown request field 'temperature'" in v for v in found)


# ----------------------------------------------------------------------------------------- Bedrock


def test_eventstream_frames_have_the_prelude_and_message_crcs_botocore_checks() -> None:
    frame = eventstream.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hé"}})
    total, _head_len = struct.unpack(">II", frame[:8])
    assert total == len(frame)
    [(headers, payload)] = list(eventstream.decode(frame))
    assert headers == {":event-type": "contentBlockDelta", ":content-type": "application/json",
                       ":message-type": "event"}
    assert json.loads(payload)["delta"]["text"] == "hé"
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(frame)
    [parsed] = list(buffer)
    assert parsed.headers[":event-type"] == "contentBlockDelta"
    bad = EventStreamBuffer()
    bad.add_data(eventstream.event("messageStop", {"stopReason": "end_turn"}, corrupt=True))
    with pytest.raises(Exception, match=r"(?i)checksum"):
        list(bad)
    with pytest.raises(ValueError, match="message CRC"):
        list(eventstream.decode(eventstream.event("x", {}, corrupt=True)))


def test_bedrock_converse_stream_through_boto3() -> None:
    reply = Reply(text="Checking.", reasoning="Two lookups.", tool_calls=(ToolCall("lookup", {"q": "a"}),
                                                                          ToolCall("lookup", {"q": "b"})))
    with ScriptedServer([reply, text("Both found.")]) as srv:
        client = bedrock_client(srv)
        response = client.converse_stream(  # type: ignore[attr-defined]
            modelId=MODEL, messages=[{"role": "user", "content": [{"text": "look up a and b"}]}],
            toolConfig=BEDROCK_TOOLS, inferenceConfig={"maxTokens": 256})
        events = list(response["stream"])
        second = client.converse(  # type: ignore[attr-defined]
            modelId=MODEL, toolConfig=BEDROCK_TOOLS, messages=[
                {"role": "user", "content": [{"text": "look up a"}]},
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_001", "name": "lookup",
                                                               "input": {"q": "a"}}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_001", "content": [{"text": "A"}]}},
                                             {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}]}])
        requests = srv.llm_requests
    kinds = [next(iter(e)) for e in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    from replaykit.core.trace import codecs

    assembled = codecs.assemble_stream("bedrock-converse", events)
    assert [c.arguments for c in assembled.message.tool_calls] == [{"q": "a"}, {"q": "b"}]
    assert assembled.message.parts[0].type == "reasoning" and assembled.finish_reason == "tool_use"
    assert second["output"]["message"]["content"] == [{"text": "Both found."}] and second["stopReason"] == "end_turn"
    assert [r.path for r in requests] == ["/model/anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream",
                                          "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/converse"]
    assert all(r.violations == () for r in requests)
    image = requests[1].body["messages"][2]["content"][1]["image"]
    assert base64.b64decode(image["source"]["bytes"]) == b"\x89PNG"  # bytes travel base64 in the JSON
    assert "aws-test-secret" not in json.dumps([dict(r.headers) for r in requests])


def test_bedrock_violations_faults_and_stream_errors() -> None:
    script = [fault("429", retry_after=3), fault("stream_error", stall_after_chunks=2),
              fault("malformed"), fault("503")]
    with ScriptedServer(script, strict=True) as srv:
        client = bedrock_client(srv)
        same_role = [{"role": "user", "content": [{"text": "a"}]}, {"role": "user", "content": [{"text": "b"}]}]
        with pytest.raises(ClientError) as caught:
            client.converse(modelId=MODEL, messages=same_role)  # type: ignore[attr-defined]
        assert caught.value.response["Error"]["Code"] == "ValidationException"
        assert any("two user messages in a row" in v for v in srv.llm_requests[0].violations)
        assert srv.llm_requests[0].reply is None  # a refused request takes no reply from the script
        hello = [{"role": "user", "content": [{"text": "hi"}]}]
        with pytest.raises(ClientError) as throttled:
            client.converse(modelId=MODEL, messages=hello)  # type: ignore[attr-defined]
        assert throttled.value.response["Error"]["Code"] == "ThrottlingException"
        assert throttled.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429
        assert throttled.value.response["ResponseMetadata"]["HTTPHeaders"]["retry-after"] == "3"
        stream = client.converse_stream(modelId=MODEL, messages=hello)["stream"]  # type: ignore[attr-defined]
        with pytest.raises(EventStreamError) as in_stream:
            list(stream)
        assert in_stream.value.response["Error"]["Code"] == "modelStreamErrorException"
        damaged = client.converse_stream(modelId=MODEL, messages=hello)["stream"]  # type: ignore[attr-defined]
        with pytest.raises(Exception, match=r"(?i)checksum"):
            list(damaged)
        with pytest.raises(ClientError) as unavailable:
            client.converse(modelId=MODEL, messages=hello)  # type: ignore[attr-defined]
        assert unavailable.value.response["Error"]["Code"] == "ServiceUnavailableException"


def test_bedrock_rules() -> None:
    ok = {"messages": [{"role": "user", "content": [{"text": "go"}]},
                       {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t-1", "name": "f", "input": {}}}]},
                       {"role": "user", "content": [{"toolResult": {"toolUseId": "t-1", "content": [{"text": "x"}]}}]}],
          "toolConfig": BEDROCK_TOOLS}
    assert check_request("bedrock", ok) == []
    no_config = {k: v for k, v in ok.items() if k != "toolConfig"}
    assert any("toolConfig must be given" in v for v in check_request("bedrock", no_config))
    bad_id = json.loads(json.dumps(ok).replace("t-1", "functions.lookup:0"))
    assert any("not 1-64 of" in v for v in check_request("bedrock", bad_id))
    twice = json.loads(json.dumps(ok))
    twice["messages"][2]["content"].append(twice["messages"][2]["content"][0])
    assert any("a second toolResult" in v for v in check_request("bedrock", twice))
    unanswered = json.loads(json.dumps(ok))
    unanswered["messages"][2]["content"] = [{"text": "moving on"}]
    found = check_request("bedrock", unanswered)
    assert any("is not answered here" in v for v in found)
    url_image = {"messages": [{"role": "user", "content": [{"image": {"format": "png", "source": {
        "s3Location": {"uri": "s3://b/k"}}}}]}]}
    assert any("image source must be bytes" in v for v in check_request("bedrock", url_image))
    assert any("blank" in v for v in check_request("bedrock", {"messages": [{"role": "user",
                                                                                   "content": [{"text": " "}]}]}))
