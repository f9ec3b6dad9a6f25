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

Standard library only, and nothing from replaykit: messages, parts and tools may be IR models or their
plain JSON form (``model_dump(mode="json", exclude_none=True)``, a trace line's content), and both give
the same fingerprint. That is what lets generated code (the standalone script, the LangGraph module)
embed this module verbatim next to ``replaykit.core.replay.serve`` and match requests by the very same rule.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

# One encoder each for every call: ``json.dumps`` with options builds a new JSONEncoder each time, which
# costs more than encoding a small argument dict (a replay or an inspect encodes thousands of them).
_CANONICAL_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_COMPACT_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _one_shot(encoder: json.JSONEncoder) -> Any:
    """``encoder.encode`` without its per-call set-up (a closure, an encoder object configured from the
    attributes): json's C encoder made with the same arguments ``JSONEncoder.iterencode`` gives it, a
    fresh circular-reference memo per call as there. ``encoder.encode`` itself where json has no C
    encoder (or the encoder is indented)."""
    from json import encoder as module

    make = getattr(module, "c_make_encoder", None)
    escape = module.encode_basestring_ascii if encoder.ensure_ascii else module.encode_basestring
    if make is None or encoder.indent is not None:
        return encoder.encode
    args = (encoder.default, escape, None, encoder.key_separator, encoder.item_separator, encoder.sort_keys,
            encoder.skipkeys, encoder.allow_nan)

    def encode(value: Any) -> str:
        if isinstance(value, str):
            return escape(value)  # type: ignore[no-any-return]
        return "".join(make({} if encoder.check_circular else None, *args)(value, 0))

    return encode


_COMPACT = _one_shot(_COMPACT_ENCODER)


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
        return _normalize(_plain(value))
    raise TypeError(f"not JSON-serializable: {type(value).__name__}")


_encode_as_is = _one_shot(_CANONICAL_ENCODER)  # canonical_json's first try (see there)

# Spellings the plain encoder writes where ``_normalize`` would change the value: non-finite and
# negative-zero floats; bool/None keys (``str(True)`` is ``True``, the encoder's key is ``true``); and keys
# that may have been numbers (the encoder sorts int keys as numbers, ``_normalize`` as strings). Inside a
# JSON string a quote is escaped, so ``{"`` / ``,"`` only ever start a key or a string list item.
_NOT_CANONICAL_AS_IS = re.compile(r'NaN|Infinity|-0\.0|"(?:true|false|null)":|[{,]"[-0-9]')


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value`` (see module docstring)."""
    # Most values (tool arguments parsed from JSON) are already canonical: ASCII text is its own NFC form,
    # so one C-level encode is the answer unless the text holds a spelling ``_normalize`` would change.
    # Anything doubtful (a substring match inside a string value included) takes the exact path.
    try:
        text = _encode_as_is(value)
    except (TypeError, ValueError, RecursionError):
        text = None
    if text is not None and text.isascii() and _NOT_CANONICAL_AS_IS.search(text) is None:
        return text
    return _CANONICAL_ENCODER.encode(_normalize(value))


def canonical_hash(value: Any) -> str:
    import hashlib  # here: a generated script that never fingerprints a request does not load OpenSSL

    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()




def dumps_compact(value: Any) -> str:
    """Compact JSON in insertion order (how OpenAI clients serialize tool arguments)."""
    return _COMPACT(value)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------- volatility

_VOLATILE_TEXT = [
    (r"(?im)^(conversation started|current (date|time)|today is|date)\s*:.*$", r"\1: <volatile>"),
    (r"\b\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?\b", "<datetime>"),
    (r"\b\d{1,2}:\d{2}(:\d{2})?\s*(AM|PM|am|pm)?\b", "<time>"),
    (r"\b(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?\s+(\w+\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+\w+\s+\d{4})", "<date>"),
    (r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", "<uuid>"),
    (r"\b[0-9a-f]{16,}\b", "<hex>"),
    (r"(?<![\w.])(~|/(home|Users|root|tmp|var|private|opt|srv|mnt|run))(/[^\s'\"`,;:)]*)?", "<path>"),
]
# Compiled on first use: a generated script that never fingerprints a request never pays for them.
_VOLATILE_COMPILED: list[tuple[re.Pattern[str], str]] = []


def mask_volatile_text(text: str) -> str:
    """Mask the declared-volatile content of a system prompt (dates, times, paths, random ids)."""
    if not _VOLATILE_COMPILED:
        _VOLATILE_COMPILED.extend((re.compile(pattern), replacement) for pattern, replacement in _VOLATILE_TEXT)
    for pattern, replacement in _VOLATILE_COMPILED:
        text = pattern.sub(replacement, text)
    return text


def _fields(item: Any) -> Any:
    """The fields of an IR model (its attribute dict) or of its plain JSON form (the dict itself)."""
    return item if isinstance(item, dict) else item.__dict__


def _plain(item: Any) -> Any:
    if isinstance(item, dict):
        return item
    # An IR model: only ever inside replaykit (generated code passes plain JSON, and must not name a
    # replaykit import), so this never runs where the module is embedded. jsonsafe also dumps dict keys
    # holding lone surrogates.
    import importlib

    return importlib.import_module("replaykit.core.trace.jsonsafe").model_data(item, exclude_none=True)


def parsed_arguments(arguments: Any, raw: str | None = None) -> Any:
    """A tool call's arguments as data: the one reading behind every comparison of two tool calls
    (fingerprints, the serve decision, diff, plans, cassettes). The raw string the provider sent,
    parsed, when it is JSON (else the raw string itself); without one, ``arguments``, parsed when it is a
    JSON string. ``{"city": "Paris"}`` and ``{"city":"Paris"}`` read the same."""
    if raw is not None:
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def arguments_key(arguments: Any, raw: str | None = None) -> str:
    """Tool arguments as compared: the canonical JSON of ``parsed_arguments``. Two tool calls are the
    same call when their names and these keys are equal."""
    try:
        return canonical_json(parsed_arguments(arguments, raw))
    except TypeError:
        return repr(arguments)


def same_message(a: Any, b: Any) -> bool:
    """Whether two messages (IR models or their JSON form) say the same thing as a request fingerprint
    compares them: tool-call argument whitespace, call ids and volatile system text do not count."""
    return a == b or normalized_messages([a]) == normalized_messages([b])


def _parse_args(part: Any) -> Any:
    return parsed_arguments(part.get("arguments"), part.get("raw_arguments"))


def normalized_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Messages (IR models or their JSON form) reduced to what a fingerprint compares (see module
    docstring)."""
    call_ids: dict[str, str] = {}

    def call_ref(call_id: str) -> str:
        return call_ids.setdefault(call_id, f"call#{len(call_ids)}")

    out: list[dict[str, Any]] = []
    for message in messages:
        fields = _fields(message)
        role = fields["role"]
        parts: list[Any] = []
        for part in fields.get("parts") or ():
            p = _fields(part)
            kind = p.get("type")
            if kind == "text":
                text = p.get("text", "")
                if role in ("system", "developer"):
                    text = mask_volatile_text(text)
                parts.append(["text", text])
            elif kind == "tool_call":
                parts.append(["tool_call", call_ref(p["id"]), p["name"], _parse_args(p)])
            elif kind == "tool_result":
                parts.append(["tool_result", call_ref(p["tool_call_id"]), p.get("content", ""),
                              bool(p.get("is_error", False))])
            elif kind == "reasoning":
                # Reasoning text is the model's, and providers often drop it from history: not compared.
                continue
            else:  # media, opaque: compared whole (as a list like the others: the merge below reads p[0])
                parts.append([kind, _plain(part)])
        # Consecutive text parts and a single text part fingerprint alike.
        merged: list[Any] = []
        for p in parts:
            if merged and p[0] == "text" and merged[-1][0] == "text":
                merged[-1] = ["text", merged[-1][1] + p[1]]
            else:
                merged.append(p)
        merged = [p for p in merged if p != ["text", ""]] if role == "assistant" else merged
        for unit_role, unit_parts in message_units(role, merged, _normal_kind):
            out.append({"role": "system" if unit_role == "developer" else unit_role, "parts": unit_parts})
    return out


def _normal_kind(part: Any) -> Any:
    return part[0]


def part_kind(part: Any) -> Any:
    """The ``type`` of an IR part or of its JSON form."""
    return _fields(part).get("type")


def message_units(role: str, parts: list[Any], kind: Any = part_kind) -> list[tuple[str, list[Any]]]:
    """One message as the messages it stands for, ``(role, parts)`` each: the canonical shape every
    comparison uses (fingerprints, ``replaykit diff``, the conformance tests). A wire difference that
    is no difference in behaviour goes away: a tool result is the same whether the provider carries
    several in one user message (Anthropic) or each in a tool message of its own (OpenAI), so each
    result stands alone as a tool message, followed by the message's other parts, if any. (A content
    string and one text part are one text part in the IR already; ``normalized_messages`` also merges
    consecutive text parts.)"""
    results = [p for p in parts if kind(p) == "tool_result"]
    if not results:
        return [(role, parts)]
    units: list[tuple[str, list[Any]]] = [("tool", [p]) for p in results]
    rest = [p for p in parts if kind(p) != "tool_result"]
    if rest:
        units.append((role, rest))
    return units


def fingerprint(messages: Iterable[Any], tools: Iterable[Any] | None = None) -> str:
    """A stable id of a request's semantic content (messages and tools, IR models or their JSON form),
    ignoring volatile fields."""
    tool_list: list[list[Any]] = sorted(
        ([t["name"], t.get("description") or "", t.get("parameters") or {}] for t in map(_fields, tools or [])),
        key=lambda t: str(t[0]),
    )
    return canonical_hash({"messages": normalized_messages(messages), "tools": tool_list})[:32]


def tools_hash(tools: Iterable[Any]) -> str:
    """Content address of a tool declaration set (exact, order-sensitive: it is what was sent)."""
    return canonical_hash([_plain(t) for t in tools])[:32]
