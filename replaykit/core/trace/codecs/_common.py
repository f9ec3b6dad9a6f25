"""Shared pieces of the provider codecs: result types, loss reporting, small decoding helpers.

Every codec keeps what the IR does not model in ``provider_details[<format>]`` of the part, message,
tool or response it belongs to, so encoding back into the *same* format reproduces the body exactly
(equal under canonical JSON). Those hints are namespaced by format: an encoder for another format
ignores them, and reports what it had to drop as a loss string instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.errors import CodecError
from replaykit.core.trace.ir import Message, OpaquePart, ReasoningPart, ToolCallPart, ToolSpec

JSONDict = dict[str, Any]


@dataclass
class Encoded:
    """An encoded provider body plus what could not be expressed in that format (never silent)."""

    body: JSONDict
    losses: list[str] = field(default_factory=list)


@dataclass
class DecodedRequest:
    """A provider request body as IR: messages, tool declarations (None = the body had no ``tools``),
    and every other body field verbatim (``model`` included)."""

    messages: list[Message]
    tools: list[ToolSpec] | None
    params: JSONDict

    @property
    def model(self) -> str | None:
        value = self.params.get("model")
        return value if isinstance(value, str) else None


def hints(obj: Any, fmt: str) -> JSONDict:
    """The format-specific fidelity hints stored on an IR object (empty if none)."""
    details = getattr(obj, "provider_details", None)
    if isinstance(details, dict):
        value = details.get(fmt)
        if isinstance(value, dict):
            return value
    return {}


def details(fmt: str, hint: JSONDict, base: JSONDict | None = None) -> JSONDict | None:
    """``provider_details`` carrying ``hint`` under ``fmt`` (None when there is nothing to keep)."""
    clean = {k: v for k, v in hint.items() if v is not None}
    if not clean:
        return base or None
    merged = dict(base or {})
    merged[fmt] = clean
    return merged


def expect_dict(value: Any, where: str) -> JSONDict:
    if not isinstance(value, dict):
        raise CodecError(f"{where}: expected a JSON object, got {_kind(value)}")
    return value


def expect_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise CodecError(f"{where}: expected a JSON array, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def parse_arguments(raw: str) -> Any:
    """Parsed tool-call arguments, or None when the provider sent invalid JSON (raw is kept)."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


#: who a reasoning signature belongs to, by ``ReasoningPart.provider``
_OWNERS = {"google-gemini": "Gemini", "bedrock-converse": "Bedrock"}


def reasoning_losses(part: ReasoningPart, where: str, target: str) -> list[str]:
    """What a reasoning part loses when it is encoded into a format that is not its own."""
    out: list[str] = []
    if part.signature:
        owner = _OWNERS.get(part.provider or "", "Anthropic")
        out.append(f"{where}: thinking signature dropped (only valid for {owner})")
    if part.encrypted:
        out.append(f"{where}: encrypted reasoning dropped (only valid for OpenAI Responses)")
    if part.redacted:
        out.append(f"{where}: redacted thinking dropped (cannot be expressed in {target})")
    return out


def opaque_loss(part: OpaquePart, where: str, target: str) -> str:
    kind = part.data.get("type") if isinstance(part.data, dict) else None
    if kind is None and isinstance(part.data, dict) and len(part.data) == 1:
        kind = next(iter(part.data))  # Gemini and Bedrock blocks are keyed by their kind ({"cachePoint": ...})
    label = f" {kind!r}" if isinstance(kind, str) else ""
    return f"{where}: {part.format} content block{label} dropped (no {target} equivalent)"


_NEUTRAL_FINISH = {
    "stop": "stop", "end_turn": "stop", "stop_sequence": "stop", "completed": "stop",  # Chat, Anthropic, Bedrock, Responses
    "length": "length", "max_tokens": "length", "max_output_tokens": "length", "incomplete": "length",
    "content_filter": "content_filter", "safety": "content_filter", "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter", "refusal": "content_filter", "prohibited_content": "content_filter",
    "tool_calls": "tool_calls", "tool_use": "tool_calls", "function_call": "tool_calls",
}


def neutral_finish_reason(reason: str | None, has_tool_calls: bool) -> str | None:
    """A finish reason in words every API shares (``stop``, ``tool_calls``, ``length``, ``content_filter``;
    anything else lower-cased): Chat's ``tool_calls``, Anthropic's and Bedrock's ``tool_use`` and
    Gemini's ``STOP`` on an answer that calls tools all say the same. For comparing runs played on
    different APIs; a run's own value is kept as the provider sent it."""
    if reason is None:
        return None
    neutral = _NEUTRAL_FINISH.get(reason.lower(), reason.lower())
    return "tool_calls" if has_tool_calls and neutral == "stop" else neutral


def object_arguments(part: ToolCallPart, where: str, losses: list[str], *, as_recorded: bool) -> Any:
    """A tool call's arguments for an API that takes them as a JSON object (Anthropic ``input``, Gemini
    ``args``, Bedrock ``input``): parsed from the raw string when only that was kept (invalid JSON sent as
    ``{}``), a non-object wrapped as ``{"value": ...}`` unless ``as_recorded`` (the call was recorded on
    that API, which sent it so); each repair listed in ``losses``."""
    arguments = part.arguments
    if arguments is None and part.raw_arguments is not None:
        try:
            arguments = json.loads(part.raw_arguments)
        except ValueError:
            losses.append(f"{where}: tool call {part.id!r} arguments are not valid JSON; sent as {{}}")
            arguments = {}
    if arguments is None:
        return {}
    if not isinstance(arguments, dict) and not as_recorded:
        losses.append(f"{where}: tool call {part.id!r} arguments are not an object; wrapped as {{'value': ...}}")
        return {"value": arguments}
    return arguments
