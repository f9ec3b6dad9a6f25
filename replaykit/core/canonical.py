"""Canonical JSON and request fingerprints.

Canonical JSON (used for hashing and for comparing content, never for storage formatting):

- Unicode strings (keys and values) are normalized to NFC;
- object keys sorted, no insignificant whitespace (``,`` and ``:`` separators), UTF-8, no ASCII escaping;
- integers as integers; floats by Python's shortest repr; ``-0.0`` as ``0.0``; NaN and the infinities,
  which JSON cannot carry, as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``;
- tuples as arrays.

A request fingerprint is the SHA-256 of the canonical JSON of the request's *semantic* content: the
messages and the tools. Declared-volatile content is normalized first so two runs of the same agent on
different days, machines or sessions fingerprint the same:

- tool-call ids are replaced by their position (``call#0``, ``call#1``...) in both the assistant calls
  and the tool results that answer them (providers mint random ids);
- tool-call arguments are compared parsed (``{"a": 1}`` and ``{"a":1}`` are the same request);
- in system and developer messages: ISO dates and times, ``Conversation started: ...`` lines, absolute
  POSIX and home paths, UUIDs and long hex ids are masked;
- request parameters (model, stream, max_tokens, ...) are *not* part of the fingerprint: replaying
  against another model or provider must still match the record. Compare them separately.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from replaykit.core import jsonsafe
from replaykit.core.ir import Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart, ToolSpec


def _normalize(value: Any) -> Any:
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return 0.0 if value == 0 else value
    if isinstance(value, dict):
        return {unicodedata.normalize("NFC", str(k)): _normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalize(v) for v in value]
    if hasattr(value, "model_dump"):
        return _normalize(jsonsafe.model_data(value, exclude_none=True))
    raise TypeError(f"not JSON-serializable: {type(value).__name__}")


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value`` (see module docstring)."""
    return json.dumps(_normalize(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_hash(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()


def dumps_compact(value: Any) -> str:
    """Compact JSON in insertion order (how OpenAI clients serialize tool arguments)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# ------------------------------------------------------------------------------------- volatility

_VOLATILE_TEXT = [
    (re.compile(r"(?im)^(conversation started|current (date|time)|today is|date)\s*:.*$"), r"\1: <volatile>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?\b"), "<datetime>"),
    (re.compile(r"\b\d{1,2}:\d{2}(:\d{2})?\s*(AM|PM|am|pm)?\b"), "<time>"),
    (
        re.compile(
            r"\b(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?\s+(\w+\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+\w+\s+\d{4})"
        ),
        "<date>",
    ),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"\b[0-9a-f]{16,}\b"), "<hex>"),
    (re.compile(r"(?<![\w.])(~|/(home|Users|root|tmp|var|private|opt|srv|mnt|run))(/[^\s'\"`,;:)]*)?"), "<path>"),
]


def mask_volatile_text(text: str) -> str:
    """Mask the declared-volatile content of a system prompt (dates, times, paths, random ids)."""
    for pattern, replacement in _VOLATILE_TEXT:
        text = pattern.sub(replacement, text)
    return text


def _parse_args(part: ToolCallPart) -> Any:
    if part.raw_arguments is not None:
        try:
            return json.loads(part.raw_arguments)
        except ValueError:
            return {"<unparsed>": part.raw_arguments}
    return part.arguments


def normalized_messages(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Messages reduced to what a fingerprint compares (see module docstring)."""
    call_ids: dict[str, str] = {}

    def call_ref(call_id: str) -> str:
        return call_ids.setdefault(call_id, f"call#{len(call_ids)}")

    out: list[dict[str, Any]] = []
    for message in messages:
        parts: list[Any] = []
        for part in message.parts:
            if isinstance(part, TextPart):
                text = part.text
                if message.role in ("system", "developer"):
                    text = mask_volatile_text(text)
                parts.append(["text", text])
            elif isinstance(part, ToolCallPart):
                parts.append(["tool_call", call_ref(part.id), part.name, _parse_args(part)])
            elif isinstance(part, ToolResultPart):
                parts.append(["tool_result", call_ref(part.tool_call_id), part.content, part.is_error])
            elif isinstance(part, ReasoningPart):
                # Reasoning text is the model's, and providers often drop it from history: not compared.
                continue
            else:
                parts.append(jsonsafe.model_data(part, exclude_none=True))
        # Consecutive text parts and a single text part fingerprint alike.
        merged: list[Any] = []
        for p in parts:
            if merged and p[0] == "text" and merged[-1][0] == "text":
                merged[-1] = ["text", merged[-1][1] + p[1]]
            else:
                merged.append(p)
        merged = [p for p in merged if p != ["text", ""]] if message.role == "assistant" else merged
        # A tool result is the same request content whether the provider carries it in a user message
        # (Anthropic) or in a tool message of its own (OpenAI): each fingerprints as its own tool message.
        results = [p for p in merged if p[0] == "tool_result"]
        out.extend({"role": "tool", "parts": [p]} for p in results)
        rest = [p for p in merged if p[0] != "tool_result"]
        if rest or not results:
            out.append({"role": "system" if message.role == "developer" else message.role, "parts": rest})
    return out


def fingerprint(messages: Iterable[Message], tools: Iterable[ToolSpec] | None = None) -> str:
    """A stable id of a request's semantic content (messages and tools), ignoring volatile fields."""
    tool_list: list[list[Any]] = sorted(
        ([t.name, t.description or "", t.parameters or {}] for t in (tools or [])), key=lambda t: str(t[0])
    )
    return canonical_hash({"messages": normalized_messages(messages), "tools": tool_list})[:32]


def tools_hash(tools: Iterable[ToolSpec]) -> str:
    """Content address of a tool declaration set (exact, order-sensitive: it is what was sent)."""
    return canonical_hash([jsonsafe.model_data(t, exclude_none=True) for t in tools])[:32]
