"""The OpenAI wire, as the transport sees it: which requests are model calls, SSE in and out.

Pure functions over bytes and dicts (no httpx import), shared by recording and serving.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from replaykit.core.trace import codecs
from replaykit.core.trace.ir import LLMResponse

#: URL path suffix -> IR api name. Anything else passes through untouched (not a model call).
_LLM_PATHS = (("/chat/completions", "openai-chat"), ("/responses", "openai-responses"))


def llm_api(method: str, path: str) -> str | None:
    """The API a request addresses (``openai-chat`` / ``openai-responses``), or None."""
    if method.upper() != "POST":
        return None
    path = path.rstrip("/")
    for suffix, api in _LLM_PATHS:
        if path.endswith(suffix):
            return api
    return None


def parse_sse(data: bytes) -> list[dict[str, Any]]:
    """The JSON ``data`` payloads of an SSE body, in order (``[DONE]`` and comments skipped)."""
    text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    out: list[dict[str, Any]] = []
    for block in text.split("\n\n"):
        lines = [line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")]
        if not lines:
            continue
        payload = "\n".join(lines)
        if payload.strip() == "[DONE]":
            continue
        try:
            value = json.loads(payload)
        except ValueError:
            continue  # a torn last frame (client closed early): the rest is still assembled
        if isinstance(value, dict):
            out.append(value)
    return out


_TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


def stream_finished(api: str, raw: bytes, events: list[dict[str, Any]]) -> bool:
    """Did the provider finish the stream? (Clients stop reading at ``[DONE]`` without draining it.)"""
    if api == "openai-chat":
        return b"[DONE]" in raw or any(
            c.get("finish_reason") for e in events for c in (e.get("choices") or []) if isinstance(c, dict))
    return any(e.get("type") in _TERMINAL_EVENTS for e in events)


def _frame(body: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(body, separators=(',', ':'), ensure_ascii=False)}\n\n".encode()


def render_sse(api: str, response: LLMResponse, request_body: dict[str, Any]) -> bytes:
    """A recorded response as the SSE stream the provider would have sent (whole text per delta)."""
    body = codecs.encode_response(api, response).body
    frames = _chat_frames(body, request_body) if api == "openai-chat" else _responses_frames(body)
    return b"".join(frames)


def _chat_frames(body: dict[str, Any], request_body: dict[str, Any]) -> Iterator[bytes]:
    head: dict[str, Any] = {k: body[k] for k in ("id", "created", "model", "system_fingerprint", "service_tier")
                            if k in body}
    head["object"] = "chat.completion.chunk"
    for choice in body.get("choices") or []:
        message = dict(choice.get("message") or {})
        index = choice.get("index", 0)
        delta: dict[str, Any] = {"role": message.pop("role", "assistant")}
        calls = message.pop("tool_calls", None) or []
        delta.update({k: v for k, v in message.items() if v is not None})
        delta.setdefault("content", "" if not calls else None)
        yield _frame({**head, "choices": [{"index": index, "delta": delta, "finish_reason": None}]})
        for n, call in enumerate(calls):
            frag = {"index": n, **call}
            yield _frame({**head, "choices": [{"index": index, "delta": {"tool_calls": [frag]},
                                               "finish_reason": None}]})
        finish = {"index": index, "delta": {}, "finish_reason": choice.get("finish_reason")}
        if choice.get("logprobs") is not None:
            finish["logprobs"] = choice["logprobs"]
        yield _frame({**head, "choices": [finish]})
    options = request_body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage") and body.get("usage") is not None:
        yield _frame({**head, "choices": [], "usage": body["usage"]})
    yield b"data: [DONE]\n\n"


def _responses_frames(body: dict[str, Any]) -> Iterator[bytes]:
    seq = iter(range(1_000_000))

    def ev(kind: str, **fields: Any) -> bytes:
        return _frame({"type": kind, "sequence_number": next(seq), **fields}, event=kind)

    start = {**body, "status": "in_progress", "output": [], "usage": None}
    yield ev("response.created", response=start)
    yield ev("response.in_progress", response=start)
    for index, item in enumerate(body.get("output") or []):
        kind = item.get("type")
        item_id = item.get("id", f"item_{index}")
        if kind == "message":
            yield ev("response.output_item.added", output_index=index,
                     item={**item, "status": "in_progress", "content": []})
            for c, part in enumerate(item.get("content") or []):
                empty = {**part, "text": ""} if "text" in part else part
                yield ev("response.content_part.added", item_id=item_id, output_index=index, content_index=c,
                         part=empty)
                if part.get("type") == "output_text":
                    yield ev("response.output_text.delta", item_id=item_id, output_index=index,
                             content_index=c, delta=part.get("text", ""), logprobs=[])
                    yield ev("response.output_text.done", item_id=item_id, output_index=index,
                             content_index=c, text=part.get("text", ""), logprobs=[])
                yield ev("response.content_part.done", item_id=item_id, output_index=index, content_index=c,
                         part=part)
        elif kind == "function_call":
            yield ev("response.output_item.added", output_index=index,
                     item={**item, "arguments": "", "status": "in_progress"})
            yield ev("response.function_call_arguments.delta", item_id=item_id, output_index=index,
                     delta=item.get("arguments", ""))
            yield ev("response.function_call_arguments.done", item_id=item_id, output_index=index,
                     arguments=item.get("arguments", ""), name=item.get("name"))
        else:
            yield ev("response.output_item.added", output_index=index, item=item)
        yield ev("response.output_item.done", output_index=index, item=item)
    final = body.get("status") or "completed"
    yield ev("response.incomplete" if final == "incomplete" else "response.completed", response=body)
