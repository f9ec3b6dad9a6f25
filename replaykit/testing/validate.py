"""What each provider API refuses, checked on a request body the way the provider checks it.

Stdlib only. ``check_request(api, body)`` lists the rules a body breaks (empty: the provider would take
it); the scripted server records the list on every request (``RecordedRequest.violations``) and, when
``strict``, answers 400 with it, as the provider would. The rules are the ones the providers document
and enforce (docs/codecs.md, "Cross-API translation"; the sources are in the guide of the project):

- OpenAI Chat: tool-call ids at most 40 characters, every call answered by a ``tool`` message before the
  conversation goes on, every ``tool`` message answering a call of the assistant message before it.
- OpenAI Responses: every ``function_call_output`` answers an earlier ``function_call`` (without
  ``previous_response_id``), every ``function_call`` followed by its output before the next message,
  a ``reasoning`` item followed by the item it came with.
- Anthropic Messages: ``max_tokens`` set; only user and assistant roles, alternating, the first a user;
  no empty content and no empty text block; tool ids ``^[a-zA-Z0-9_-]+$``; each ``tool_use`` answered
  by a ``tool_result`` in the very next (user) message, results first in it, each result answering a
  ``tool_use`` of the assistant message before; thinking blocks carry a signature; images as base64
  (png, jpeg, gif, webp) or URL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")
_ANTHROPIC_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
CHAT_ID_MAX = 40


def check_request(api: str, body: Any) -> list[str]:
    """The rules ``body`` breaks for ``api`` ("chat", "responses", "anthropic", or the wire API names)."""
    if not isinstance(body, Mapping):
        return ["the body is not a JSON object"]
    name = {"openai-chat": "chat", "openai-responses": "responses", "anthropic-messages": "anthropic"}.get(api, api)
    checker = _CHECKERS.get(name)
    return checker(body) if checker is not None else []


def _chat(body: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages: must be a non-empty list"]
    open_calls: set[str] = set()
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            out.append(f"messages[{i}]: not an object")
            continue
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                out.append(f"messages[{i}]: tool message {call_id!r} does not answer a tool call of the preceding "
                           "assistant message")
            open_calls.discard(call_id)  # type: ignore[arg-type]
            continue
        if open_calls:
            out.append(f"messages[{i}]: tool calls {sorted(open_calls)} were not answered by tool messages")
            open_calls = set()
        if role == "assistant":
            for n, call in enumerate(message.get("tool_calls") or []):
                call_id = call.get("id") if isinstance(call, Mapping) else None
                if not isinstance(call_id, str) or not call_id:
                    out.append(f"messages[{i}].tool_calls[{n}]: id missing")
                    continue
                if len(call_id) > CHAT_ID_MAX:
                    out.append(f"messages[{i}].tool_calls[{n}].id: longer than {CHAT_ID_MAX} characters")
                open_calls.add(call_id)
        elif role not in ("system", "developer", "user"):
            out.append(f"messages[{i}]: unknown role {role!r}")
    return out


def _responses(body: Mapping[str, Any]) -> list[str]:
    items = body.get("input")
    if isinstance(items, str):
        return []
    if not isinstance(items, list):
        return ["input: must be a string or a list of items"]
    out: list[str] = []
    chained = body.get("previous_response_id") is not None
    calls: set[str] = set()
    open_calls: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            out.append(f"input[{i}]: not an object")
            continue
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "function_call":
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                out.append(f"input[{i}]: function_call without a call_id")
            else:
                calls.add(call_id)
                open_calls.add(call_id)
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if call_id not in calls and not chained:
                out.append(f"input[{i}]: no function_call found for call_id {call_id!r}")
            open_calls.discard(call_id)  # type: ignore[arg-type]
        elif kind == "reasoning":
            if i == len(items) - 1:
                out.append(f"input[{i}]: reasoning item without the item that followed it")
        elif kind == "message":
            if open_calls and item.get("role") != "assistant":
                out.append(f"input[{i}]: no tool output found for function calls {sorted(open_calls)}")
                open_calls = set()
    return out


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def _anthropic(body: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    if not isinstance(body.get("max_tokens"), int):
        out.append("max_tokens: required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*out, "messages: must be a non-empty list"]
    previous_role: str | None = None
    pending: set[str] = set()  # tool_use ids of the previous assistant message
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            out.append(f"messages[{i}]: not an object")
            continue
        role = message.get("role")
        content = message.get("content")
        if role not in ("user", "assistant"):
            out.append(f"messages[{i}]: role must be user or assistant, got {role!r}")
        if i == 0 and role != "user":
            out.append("messages[0]: the first message must use the user role")
        if role == previous_role:
            out.append(f"messages[{i}]: roles must alternate (two {role} messages in a row)")
        if content in ("", []) or content is None:
            out.append(f"messages[{i}]: all messages must have non-empty content")
        blocks = _blocks(content)
        for n, block in enumerate(blocks):
            kind = block.get("type")
            where = f"messages[{i}].content[{n}]"
            if kind == "text" and not block.get("text"):
                out.append(f"{where}: text content blocks must be non-empty")
            elif kind == "tool_use":
                if role != "assistant":
                    out.append(f"{where}: tool_use outside an assistant message")
                if not isinstance(block.get("id"), str) or not _ANTHROPIC_ID.fullmatch(block["id"]):
                    out.append(f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
            elif kind == "thinking" and not block.get("signature"):
                out.append(f"{where}: thinking block without a signature")
            elif kind == "image":
                source: Mapping[str, Any] = block["source"] if isinstance(block.get("source"), Mapping) else {}
                if source.get("type") == "base64" and source.get("media_type") not in _ANTHROPIC_IMAGES:
                    out.append(f"{where}: image media_type {source.get('media_type')!r} is not supported")
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if pending:
            missing = pending - set(results)
            if missing:
                out.append(f"messages[{i}]: tool_use ids were found without tool_result blocks immediately after: "
                           f"{', '.join(sorted(missing))}")
        for call_id in results:
            if call_id not in pending:
                out.append(f"messages[{i}]: unexpected tool_use_id {call_id!r} in tool_result blocks: each "
                           "tool_result must answer a tool_use in the previous message")
        if results:
            kinds = [b.get("type") for b in blocks]
            if kinds[: len(results)] != ["tool_result"] * len(results):
                out.append(f"messages[{i}]: tool_result blocks must come first in the message content")
        pending = {b["id"] for b in blocks if b.get("type") == "tool_use" and isinstance(b.get("id"), str)} \
            if role == "assistant" else set()
        previous_role = role if isinstance(role, str) else None
    system = body.get("system")
    if system is not None and not isinstance(system, str | list):
        out.append("system: must be a string or a list of text blocks")
    return out


_CHECKERS = {"chat": _chat, "responses": _responses, "anthropic": _anthropic}

__all__ = ["check_request"]
