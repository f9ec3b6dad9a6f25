"""Provider failures classified by the one core classifier, from the real SDKs' exception objects: an
Anthropic ``overloaded_error`` event inside a 200 stream, Anthropic's 529, OpenAI error chunks, Gemini's
RESOURCE_EXHAUSTED, Bedrock's ThrottlingException (HTTP and event stream), a transport's StreamFailure."""

from __future__ import annotations

import pytest

from replaykit.core.replay.resilience import StreamFailure, classify


def _response(status: int, headers: dict[str, str] | None = None) -> object:
    import httpx

    return httpx.Response(status, headers=headers or {}, request=httpx.Request("POST", "http://127.0.0.1/v1/x"))


def test_anthropic_overloaded_inside_a_stream_and_529() -> None:
    anthropic = pytest.importorskip("anthropic")
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    in_stream = anthropic.APIStatusError("Overloaded", response=_response(200), body=body)
    assert classify(in_stream).kind == "server" and classify(in_stream).retryable
    http_529 = anthropic.APIStatusError("Overloaded", response=_response(529, {"retry-after": "2"}), body=body)
    got = classify(http_529)
    assert (got.kind, got.status_code, got.retry_after) == ("server", 529, 2.0)
    bad = anthropic.BadRequestError("bad", response=_response(400),
                                     body={"type": "error", "error": {"type": "invalid_request_error",
                                                                      "message": "prompt is too long"}})
    assert classify(bad).kind == "context_overflow"


def test_openai_error_chunk_in_a_stream() -> None:
    openai = pytest.importorskip("openai")
    import httpx

    error = openai.APIError("The server is overloaded", request=httpx.Request("POST", "http://127.0.0.1"),
                            body={"message": "overloaded", "type": "server_error", "code": "server_error"})
    assert classify(error).kind == "server"
    limited = openai.APIError("slow down", request=httpx.Request("POST", "http://127.0.0.1"),
                              body={"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"})
    assert classify(limited).kind == "rate_limit"


def test_gemini_resource_exhausted() -> None:
    errors = pytest.importorskip("google.genai.errors")
    exhausted = errors.ClientError(429, {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}})
    assert classify(exhausted).kind == "rate_limit"
    unavailable = errors.ServerError(503, {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}})
    assert classify(unavailable).kind == "server"


def test_bedrock_throttling_over_http_and_in_the_event_stream() -> None:
    exceptions = pytest.importorskip("botocore.exceptions")
    response = {"Error": {"Code": "ThrottlingException", "Message": "Too many requests"},
                "ResponseMetadata": {"HTTPStatusCode": 429, "HTTPHeaders": {"retry-after": "3"}}}
    throttled = exceptions.ClientError(response, "ConverseStream")
    got = classify(throttled)
    assert (got.kind, got.status_code, got.retry_after) == ("rate_limit", 429, 3.0)
    streamed = exceptions.EventStreamError({"Error": {"Code": "throttlingException", "Message": "slow"}},
                                           "ConverseStream")
    assert classify(streamed).kind == "rate_limit"
    model_error = exceptions.EventStreamError({"Error": {"Code": "modelStreamErrorException", "Message": "x"}},
                                              "ConverseStream")
    assert classify(model_error).kind == "server"
    denied = exceptions.ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"},
                                     "ResponseMetadata": {"HTTPStatusCode": 403}}, "ConverseStream")
    assert classify(denied).kind == "auth"


def test_a_transports_stream_failure() -> None:
    assert classify(StreamFailure("overloaded_error", "Overloaded")).kind == "server"
    assert classify(StreamFailure("rate_limit_exceeded")).kind == "rate_limit"
    assert classify(StreamFailure("invalid_request_error", "bad")).kind == "bad_request"
