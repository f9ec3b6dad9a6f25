"""Render a scripted answer as AWS Bedrock Converse JSON or ConverseStream event-stream frames.

Stdlib only. The stream is ``messageStart``, per content block its deltas (a ``toolUse`` block opens
with ``contentBlockStart`` and streams its input as JSON fragments) and ``contentBlockStop``, then
``messageStop`` and ``metadata``; each payload carries the ``p`` padding field the service adds. Errors
are HTTP statuses with ``x-amzn-ErrorType`` (``ThrottlingException``...) or, inside a stream, exception
messages (``throttlingException``, ``modelStreamErrorException``...).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from replaykit.testing import eventstream
from replaykit.testing.wire import Answer, pieces

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
ERRORS = {400: "ValidationException", 401: "UnrecognizedClientException", 403: "AccessDeniedException",
          404: "ResourceNotFoundException", 408: "ModelTimeoutException", 429: "ThrottlingException",
          500: "InternalServerException", 503: "ServiceUnavailableException"}
_PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"


def _blocks(a: Answer) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if a.reasoning:
        out.append({"reasoningContent": {"reasoningText": {"text": a.reasoning, "signature": "EqQBCkYIBxgCKkDscripted"}}})
    if a.text:
        out.append({"text": a.text})
    for cid, name, args in a.tool_calls:
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = {"_raw": args}
        out.append({"toolUse": {"toolUseId": cid, "name": name, "input": parsed}})
    return out


def _usage(a: Answer) -> dict[str, int]:
    return {"inputTokens": a.input_tokens, "outputTokens": a.output_tokens,
            "totalTokens": a.input_tokens + a.output_tokens}


def converse_json(a: Answer) -> dict[str, Any]:
    return {"output": {"message": {"role": "assistant", "content": _blocks(a)}}, "stopReason": _STOP[a.finish],
            "usage": _usage(a), "metrics": {"latencyMs": 42}}


def converse_events(a: Answer) -> list[tuple[str, dict[str, Any]]]:
    """The stream as (event type, payload) pairs, before framing."""
    out: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
    for index, block in enumerate(_blocks(a)):
        if "toolUse" in block:
            use = block["toolUse"]
            out.append(("contentBlockStart", {"contentBlockIndex": index, "start": {
                "toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}}))
            raw = json.dumps(use["input"], separators=(",", ":"))
            out += [("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": p}}})
                    for p in pieces(raw)]
        elif "text" in block:
            out += [("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": p}})
                    for p in pieces(block["text"])]
        else:
            reasoning = block["reasoningContent"]["reasoningText"]
            out += [("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": p}}})
                    for p in pieces(reasoning["text"])]
            out.append(("contentBlockDelta", {"contentBlockIndex": index, "delta": {
                "reasoningContent": {"signature": reasoning["signature"]}}}))
        out.append(("contentBlockStop", {"contentBlockIndex": index}))
    out.append(("messageStop", {"stopReason": _STOP[a.finish]}))
    out.append(("metadata", {"usage": _usage(a), "metrics": {"latencyMs": 42}}))
    return out


def converse_stream(a: Answer, *, corrupt_at: int | None = None) -> Iterator[bytes]:
    """The framed stream; ``corrupt_at`` spoils that frame's CRC (a damaged stream)."""
    for n, (kind, payload) in enumerate(converse_events(a)):
        yield eventstream.event(kind, {**payload, "p": _PAD[: 4 + n % 20]}, corrupt=n == corrupt_at)


def error_headers(status: int) -> dict[str, str]:
    return {"x-amzn-ErrorType": f"{ERRORS.get(status, 'InternalServerException')}:http://internal.amazon.com/coral/"
                                "com.amazon.bedrock/"}


def error_body(message: str) -> dict[str, Any]:
    return {"message": message}
