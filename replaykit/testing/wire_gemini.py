"""Render a scripted answer as Google Gemini ``generateContent`` JSON or ``streamGenerateContent`` SSE.

Stdlib only. What the real API does, and clients must cope with:

- SSE (``?alt=sse``): one ``data: <GenerateContentResponse>`` per event, CRLF-separated, no ``[DONE]``;
  text arrives in several chunks; each function call of a parallel batch in its own chunk, with no
  index; the last chunk carries ``finishReason`` and ``usageMetadata``;
- Gemini 3 models (a model name that is not ``gemini-1...`` / ``gemini-2...``): each ``functionCall``
  has an ``id``, and the first call of a turn carries a ``thoughtSignature`` (standard base64, with
  ``+`` and ``/`` in it, which a client must send back byte for byte); older models send neither;
- errors: ``{"error": {"code", "message", "status"}}`` with the gRPC status name
  (``RESOURCE_EXHAUSTED`` with a ``RetryInfo`` detail for 429).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

from replaykit.testing.wire import Answer, pieces

_OLD = re.compile(r"(?:^|/)gemini-(?:1|2)(?:\.|-|$)")
_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS"}
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def modern(model: str) -> bool:
    """Gemini 3 and later: call ids and thought signatures."""
    return not _OLD.search(model)


def signature(rid: str, n: int) -> str:
    """A deterministic thought signature (opaque bytes, standard base64 with ``+`` / ``/``)."""
    digest = hashlib.sha256(f"{rid}:{n}".encode()).digest() + b"\xfb\xff\xfe"
    return base64.b64encode(digest).decode()


def _parts(a: Answer, model: str, rid: str) -> list[dict[str, Any]]:
    new = modern(model)
    out: list[dict[str, Any]] = []
    if a.reasoning:
        part: dict[str, Any] = {"text": a.reasoning, "thought": True}
        if new:
            part["thoughtSignature"] = signature(rid, 0)
        out.append(part)
    if a.text:
        out.append({"text": a.text})
    for n, (cid, name, args) in enumerate(a.tool_calls):
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = {"_raw": args}
        call: dict[str, Any] = {"name": name, "args": parsed}
        if new:
            call["id"] = cid
        part = {"functionCall": call}
        if new and n == 0:
            part["thoughtSignature"] = signature(rid, 1)
        out.append(part)
    return out


def _usage(a: Answer) -> dict[str, int]:
    usage = {"promptTokenCount": a.input_tokens, "candidatesTokenCount": a.output_tokens,
             "totalTokenCount": a.input_tokens + a.output_tokens}
    if a.reasoning:
        usage["thoughtsTokenCount"] = max(1, len(a.reasoning) // 4)
        usage["totalTokenCount"] += usage["thoughtsTokenCount"]
    return usage


def gemini_json(a: Answer, model: str, rid: str) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": _parts(a, model, rid)},
                            "finishReason": _FINISH[a.finish], "index": 0}],
            "usageMetadata": _usage(a), "modelVersion": model, "responseId": rid}


def gemini_sse(a: Answer, model: str, rid: str) -> Iterator[str]:
    def chunk(parts: list[dict[str, Any]], **last: Any) -> str:
        body: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": parts}, **last, "index": 0}]}
        if "finishReason" in last:
            body["usageMetadata"] = _usage(a)
        body.update(modelVersion=model, responseId=rid)
        return f"data: {json.dumps(body, separators=(',', ':'))}\r\n\r\n"

    for part in _parts(a, model, rid):
        text = part.get("text")
        if isinstance(text, str):
            frags = pieces(text)
            for n, frag in enumerate(frags):
                piece = {**part, "text": frag}
                if "thoughtSignature" in part and n < len(frags) - 1:
                    del piece["thoughtSignature"]  # the signature comes with the thought's last chunk
                yield chunk([piece])
        else:
            yield chunk([part])  # one call per chunk, no index
    yield chunk([{"text": ""}], finishReason=_FINISH[a.finish])


def error_body(status: int, message: str, retry_after: float | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": status, "message": message, "status": STATUS.get(status, "UNKNOWN")}
    if status == 429 and retry_after is not None:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after:g}s"}]
    return {"error": error}
