"""Render a scripted :class:`Reply` in the wire format of each provider API (JSON body or SSE frames).

Stdlib only. Streams split text and tool-call arguments into several fragments on purpose so clients
exercise their reassembly code (tool-call fragments are keyed by index, as providers do).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from replaykit.testing.script import Api, Reply, ScriptRequest, ToolCall


class Ids:
    """Deterministic, thread-safe ids (unique per server) so recordings are comparable across runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, itertools.count[int]] = {}

    def next(self, prefix: str) -> str:
        with self._lock:
            counter = self._counters.setdefault(prefix, itertools.count(1))
            return f"{prefix}{next(counter):03d}"


@dataclass(frozen=True)
class Answer:
    """A reply resolved for one request: ids filled in, truncation applied, usage computed."""

    text: str
    reasoning: str
    tool_calls: tuple[tuple[str, str, str], ...]  # (id, name, arguments json)
    finish: str  # "stop" | "tool_calls" | "length"
    input_tokens: int
    output_tokens: int


def resolve(reply: Reply, req: ScriptRequest, ids: Ids, api: Api) -> Answer:
    prefix = "toolu_" if api == "anthropic" else "call_"
    tool_calls = tuple((c.id or ids.next(prefix), c.name, c.arguments_json()) for c in reply.tool_calls)
    text = reply.text or ""
    finish = "tool_calls" if tool_calls else "stop"
    if reply.fault == "length":
        # A length-truncated answer: half the text, no tool calls, finish_reason "length".
        full = text or "This answer was going to be much longer but the token limit cut it"
        text, tool_calls, finish = full[: max(1, len(full) // 2)], (), "length"
    usage = dict(reply.usage or {})
    input_tokens = int(usage.get("input_tokens", max(1, len(json.dumps(req.body)) // 4)))
    out_chars = len(text) + len(reply.reasoning or "") + sum(len(a) + len(n) for _, n, a in tool_calls)
    output_tokens = int(usage.get("output_tokens", max(1, out_chars // 4)))
    return Answer(text, reply.reasoning or "", tool_calls, finish, input_tokens, output_tokens)


def pieces(s: str, n: int = 3) -> list[str]:
    """Split ``s`` into up to ``n`` non-empty fragments."""
    if not s:
        return []
    size = max(1, -(-len(s) // n))
    return [s[i : i + size] for i in range(0, len(s), size)]


# ---------------------------------------------------------------- OpenAI Chat Completions

def chat_json(a: Answer, model: str, rid: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": a.text or None}
    if a.reasoning:
        message["reasoning_content"] = a.reasoning
    if a.tool_calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": args}} for i, n, args in a.tool_calls
        ]
    return {
        "id": rid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": a.finish, "logprobs": None}],
        "usage": _chat_usage(a),
    }


def _chat_usage(a: Answer) -> dict[str, int]:
    return {
        "prompt_tokens": a.input_tokens,
        "completion_tokens": a.output_tokens,
        "total_tokens": a.input_tokens + a.output_tokens,
    }


def chat_sse(a: Answer, model: str, rid: str, include_usage: bool) -> Iterator[str]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        return _data(body)

    yield chunk({"role": "assistant", "content": ""})
    for part in pieces(a.reasoning):
        yield chunk({"reasoning_content": part})
    for part in pieces(a.text):
        yield chunk({"content": part})
    for index, (cid, name, args) in enumerate(a.tool_calls):
        head = {"index": index, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
        yield chunk({"tool_calls": [head]})
        for part in pieces(args):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
    yield chunk({}, a.finish)
    if include_usage:
        yield _data({"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                     "choices": [], "usage": _chat_usage(a)})
    yield "data: [DONE]\n\n"


def _data(body: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(body, separators=(',', ':'))}\n\n"


# ---------------------------------------------------------------- OpenAI Responses

def _responses_items(a: Answer, ids: Ids) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if a.reasoning:
        items.append({"type": "reasoning", "id": ids.next("rs_"), "summary": [{"type": "summary_text", "text": a.reasoning}]})
    if a.text:
        items.append({
            "type": "message", "id": ids.next("msg_"), "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": a.text, "annotations": []}],
        })
    for cid, name, args in a.tool_calls:
        items.append({"type": "function_call", "id": ids.next("fc_"), "call_id": cid, "name": name,
                      "arguments": args, "status": "completed"})
    return items


def responses_json(a: Answer, model: str, rid: str, ids: Ids, body: dict[str, Any],
                   items: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    truncated = a.finish == "length"
    return {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if truncated else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "error": None,
        "model": model,
        "output": items if items is not None else _responses_items(a, ids),
        "parallel_tool_calls": True,
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "instructions": body.get("instructions"),
        "usage": {
            "input_tokens": a.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": a.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": a.input_tokens + a.output_tokens,
        },
    }


def responses_sse(a: Answer, model: str, rid: str, ids: Ids, body: dict[str, Any]) -> Iterator[str]:
    seq = itertools.count()
    items = _responses_items(a, ids)
    start = responses_json(a, model, rid, ids, body, items=[])
    start["status"] = "in_progress"
    start["usage"] = None

    def ev(kind: str, **fields: Any) -> str:
        return _data({"type": kind, "sequence_number": next(seq), **fields}, event=kind)

    yield ev("response.created", response=start)
    yield ev("response.in_progress", response=start)
    for index, item in enumerate(items):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield ev("response.output_item.added", output_index=index,
                     item={**item, "status": "in_progress", "content": []})
            part = {"type": "output_text", "text": "", "annotations": []}
            yield ev("response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=part)
            for frag in pieces(text):
                yield ev("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0,
                         delta=frag, logprobs=[])
            yield ev("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                     text=text, logprobs=[])
            yield ev("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                     part={**part, "text": text})
        elif item["type"] == "reasoning":
            summary = item["summary"][0]["text"]
            yield ev("response.output_item.added", output_index=index, item={**item, "summary": []})
            part = {"type": "summary_text", "text": ""}
            yield ev("response.reasoning_summary_part.added", item_id=item["id"], output_index=index,
                     summary_index=0, part=part)
            for frag in pieces(summary):
                yield ev("response.reasoning_summary_text.delta", item_id=item["id"], output_index=index,
                         summary_index=0, delta=frag)
            yield ev("response.reasoning_summary_text.done", item_id=item["id"], output_index=index,
                     summary_index=0, text=summary)
            yield ev("response.reasoning_summary_part.done", item_id=item["id"], output_index=index,
                     summary_index=0, part={**part, "text": summary})
        elif item["type"] == "function_call":
            yield ev("response.output_item.added", output_index=index,
                     item={**item, "arguments": "", "status": "in_progress"})
            for frag in pieces(item["arguments"]):
                yield ev("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=frag)
            yield ev("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                     arguments=item["arguments"], name=item["name"])
        else:
            yield ev("response.output_item.added", output_index=index, item=item)
        yield ev("response.output_item.done", output_index=index, item=item)
    final = responses_json(a, model, rid, ids, body, items=items)
    yield ev("response.incomplete" if a.finish == "length" else "response.completed", response=final)


# ---------------------------------------------------------------- Anthropic Messages

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def _anthropic_blocks(a: Answer) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if a.reasoning:
        blocks.append({"type": "thinking", "thinking": a.reasoning, "signature": "scripted-signature"})
    if a.text:
        blocks.append({"type": "text", "text": a.text})
    for cid, name, args in a.tool_calls:
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = {"_raw": args}
        blocks.append({"type": "tool_use", "id": cid, "name": name, "input": parsed})
    return blocks


def _anthropic_usage(a: Answer) -> dict[str, int]:
    return {"input_tokens": a.input_tokens, "output_tokens": a.output_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def anthropic_json(a: Answer, model: str, rid: str) -> dict[str, Any]:
    return {
        "id": rid, "type": "message", "role": "assistant", "model": model,
        "content": _anthropic_blocks(a), "stop_reason": _STOP[a.finish], "stop_sequence": None,
        "usage": _anthropic_usage(a),
    }


def anthropic_sse(a: Answer, model: str, rid: str) -> Iterator[str]:
    start = anthropic_json(a, model, rid)
    start.update(content=[], stop_reason=None, usage={**_anthropic_usage(a), "output_tokens": 0})
    yield _data({"type": "message_start", "message": start}, event="message_start")
    for index, block in enumerate(_anthropic_blocks(a)):
        kind = block["type"]
        head: dict[str, Any]
        deltas: list[dict[str, Any]]
        if kind == "thinking":
            head, deltas = {"type": "thinking", "thinking": ""}, [
                {"type": "thinking_delta", "thinking": p} for p in pieces(block["thinking"])
            ] + [{"type": "signature_delta", "signature": block["signature"]}]
        elif kind == "text":
            head, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
        else:
            raw = json.dumps(block["input"], separators=(",", ":"))
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(raw)]
        yield _data({"type": "content_block_start", "index": index, "content_block": head}, event="content_block_start")
        for delta in deltas:
            yield _data({"type": "content_block_delta", "index": index, "delta": delta}, event="content_block_delta")
        yield _data({"type": "content_block_stop", "index": index}, event="content_block_stop")
    yield _data({"type": "message_delta", "delta": {"stop_reason": _STOP[a.finish], "stop_sequence": None},
                 "usage": {"output_tokens": a.output_tokens}}, event="message_delta")
    yield _data({"type": "message_stop"}, event="message_stop")


# ---------------------------------------------------------------- errors

def stream_error_frame(api: Api) -> str:
    """The API's error event inside a stream that began with 200 (an overloaded provider mid-answer)."""
    if api == "anthropic":
        return _data({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, event="error")
    if api == "responses":
        return _data({"type": "error", "code": "server_error", "message": "The server is overloaded",
                      "param": None, "sequence_number": 99}, event="error")
    return _data({"error": {"message": "The server is overloaded", "type": "server_error", "param": None,
                            "code": "server_error"}})


def error_body(api: Api, status: int, message: str) -> dict[str, Any]:
    kinds = {429: "rate_limit_error", 500: "api_error", 401: "authentication_error", 529: "overloaded_error",
             400: "invalid_request_error"}
    if api == "anthropic":
        return {"type": "error", "error": {"type": kinds.get(status, "api_error"), "message": message}}
    oa = {429: "rate_limit_exceeded", 500: "server_error", 401: "invalid_api_key", 529: "server_error",
          400: "invalid_request_error"}
    return {"error": {"message": message, "type": oa.get(status, "server_error"), "param": None,
                      "code": oa.get(status)}}


__all__ = ["Answer", "Ids", "ToolCall", "resolve"]
_ = ToolCall  # re-exported for convenience
